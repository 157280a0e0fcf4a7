// Robustness weights and pseudovalues of loess's symmetric family (robustness.h).
#include "stats/loess/robustness.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace ka::loess {
namespace {

// R's median of v (reordered): the (⌊n/2⌋ + 1)-th smallest for odd n, the mean of it and the one below for even n,
// returned as (low + high) so that callers scale it as R does (3·(a + b) and (a + b)/2 round differently).
struct Middle {
  double low, high;
  bool even;
};

Middle middle(std::vector<double>& v) {
  const int64_t n = int64_t(v.size()), m = n / 2;  // 0-based (⌊n/2⌋ + 1)-th smallest
  double* a = v.data();                            // by pointer: the module's one instance of nth_element
  std::nth_element(a, a + m, a + n);
  const double high = a[m];
  if (n % 2 == 1) return {high, high, false};
  const double low = *std::max_element(a, a + m);
  return {low, high, true};
}

}  // namespace

void robustness_weights(const double* residuals, int64_t n, double* out) {
  std::vector<double> a(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) a[size_t(i)] = std::fabs(residuals[i]);
  const Middle mid = middle(a);
  const double c = mid.even ? 3 * (mid.high + mid.low) : 6 * mid.high;
  if (c < std::numeric_limits<double>::min()) {
    std::fill(out, out + n, 1.0);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    const double r = std::fabs(residuals[i]);
    if (c * 0.999 < r) {
      out[i] = 0;
    } else if (c * 0.001 < r) {
      const double u = r / c, t = 1 - u * u;
      out[i] = t * t;
    } else {
      out[i] = 1;
    }
  }
}

void pseudovalues(const double* y, const double* fitted, const double* prior, const double* robust, int64_t n,
                  double* out) {
  std::vector<double> a(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) a[size_t(i)] = std::fabs(y[i] - fitted[i]) * std::sqrt(prior[i]);
  const Middle mid = middle(a);
  const double mad = mid.even ? (mid.low + mid.high) / 2 : mid.high;
  const double c = (6 * mad) * (6 * mad) / 5;
  double sum = 0;
  for (int64_t i = n - 1; i >= 0; --i) {  // R sums from the last point down
    const double r = y[i] - fitted[i];
    sum += (1 - r * r * prior[i] / c) * std::sqrt(robust[i]);
  }
  const double scale = double(n) / sum;
  for (int64_t i = 0; i < n; ++i) out[i] = fitted[i] + (scale * robust[i]) * (y[i] - fitted[i]);
}

}  // namespace ka::loess
