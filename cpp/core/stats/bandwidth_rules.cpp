// Rules of thumb (Silverman 1986 §3.4.2; Scott 1992 §6.3).
#include <algorithm>
#include <cmath>

#include "base/scratch.h"
#include "engine/neighbours.h"
#include "stats/bandwidth_detail.h"

namespace ka {
namespace bandwidth_detail {

double quantile(double* values, int64_t n, double q) {
  const double at = q * double(n - 1);
  const int64_t lo = int64_t(std::floor(at));
  std::nth_element(values, values + lo, values + n);  // O(n): a full sort took ~1 s of a 10⁷-point selection
  const double a = values[lo], b = lo + 1 < n ? *std::min_element(values + lo + 1, values + n) : a;
  return a + (at - double(lo)) * (b - a);
}

}  // namespace bandwidth_detail

using bandwidth_detail::quantile;

namespace {

// The median of the gaps between the distinct values of s[0, m), sorted ascending, written over s.
double median_gap(double* s, int64_t m) {
  int64_t gaps = 0;
  for (int64_t i = 1; i < m; ++i) {
    const double previous = s[i - 1], next = s[i];  // s[i − 1] itself may take a gap below
    if (next > previous) s[gaps++] = next - previous;
  }
  return gaps > 0 ? quantile(s, gaps, 0.5) : 0;
}

}  // namespace

Status median_spacing(const double* values, int64_t n, int64_t stride, double* spacing) {
  *spacing = 0;
  Scratch<double> v(n);
  if (!v.ok()) return Status::OutOfMemory;
  double* s = v.get();
  int64_t m = 0;  // the finite values only: NaN has no place in a sort
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(values[i * stride])) s[m++] = values[i * stride];
  sort_values(s, m);
  *spacing = median_gap(s, m);
  return Status::Ok;
}

namespace bandwidth_detail {

Status median_spacing_sorted(const float* sorted, int64_t n, double* spacing) {
  *spacing = 0;
  Scratch<double> v(n);
  if (!v.ok()) return Status::OutOfMemory;
  double* s = v.get();
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i)
    if (std::isfinite(sorted[i])) s[m++] = double(sorted[i]);
  *spacing = median_gap(s, m);
  return Status::Ok;
}

}  // namespace bandwidth_detail

Status rule_of_thumb(ConstMatrix x, Rule rule, double* h) {
  const int64_t n = x.rows, dims = x.cols;
  if (n < 2 || dims < 1 || !x.data || !h) return Status::BadShape;
  Scratch<double> column(n);
  if (!column.ok()) return Status::OutOfMemory;
  const double factor = std::exp(-std::log(double(n)) / double(dims + 4));  // n^(−1/(d+4)); std::pow links 4 kB
  for (int64_t d = 0; d < dims; ++d) {
    double mean = 0;
    for (int64_t i = 0; i < n; ++i) mean += column.get()[i] = x.row(i)[d];
    mean /= double(n);
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += (column.get()[i] - mean) * (column.get()[i] - mean);
    const double sd = std::sqrt(ss / double(n - 1));
    double spread = sd;
    // The quartiles' selections only where they count (Scott's rule: a tenth of a 10⁶-point search's setup).
    if (rule == Rule::Silverman) {
      const double iqr = (quantile(column.get(), n, 0.75) - quantile(column.get(), n, 0.25)) / 1.349;
      spread = 0.9 * (sd > 0 && iqr > 0 ? std::min(sd, iqr) : std::max(sd, iqr));
    }
    if (!(spread > 0)) spread = std::fabs(mean) > 0 ? std::fabs(mean) * 1e-3 : 1.0;
    h[d] = spread * factor;
  }
  return Status::Ok;
}

}  // namespace ka
