// The scaled sample of a loess fit (sample.h): R's normalisation by trimmed standard deviations, and the sorted
// working order of 1-D fits.
#include "stats/loess/sample.h"

#include <algorithm>
#include <cmath>

#include "base/rare.h"
#include "engine/neighbours.h"

namespace ka::loess {
namespace {

// R's divisor for one column: sd() of the sorted values with ⌈0.1·n⌉ left out at each end; 0 when undefined.
KA_COLD double trimmed_sd(const double* x, int64_t n, int32_t dims, int32_t column) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[size_t(i)] = x[i * dims + column];
  std::sort(v.data(), v.data() + n);  // by pointer: the module's one instance of this sort
  const int64_t trim = int64_t(std::ceil(0.1 * double(n)));
  const int64_t m = n - 2 * trim;
  if (m < 2) return 0;
  double mean = 0;
  for (int64_t i = trim; i < n - trim; ++i) mean += v[size_t(i)];
  mean /= double(m);
  double ss = 0;
  for (int64_t i = trim; i < n - trim; ++i) ss += (v[size_t(i)] - mean) * (v[size_t(i)] - mean);
  return std::sqrt(ss / double(m - 1));
}

}  // namespace

// Once per fit: compiled for size (base/rare.h); its sort is the module's order_by (-O3).
KA_COLD Status make_sample(const double* x, const double* y, const double* weights, int64_t n, int32_t dims,
                           bool normalize, Sample* out) {
  if (n < 1 || dims < 1 || dims > kMaxDims) return Status::BadShape;
  for (int64_t i = 0; i < n * dims; ++i)
    if (!std::isfinite(x[i])) return Status::BadArgument;
  bool weighed = !weights;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(y[i])) return Status::BadArgument;
    if (weights && !(weights[i] >= 0 && std::isfinite(weights[i]))) return Status::BadArgument;
    weighed |= weights && weights[i] > 0;
  }
  if (!weighed) return Status::BadArgument;
  Sample& s = *out;
  s.n = n;
  s.dims = dims;
  s.divisor.assign(size_t(dims), 1.0);
  if (normalize && dims > 1) {
    for (int32_t j = 0; j < dims; ++j) {
      s.divisor[size_t(j)] = trimmed_sd(x, n, dims, j);
      if (!(s.divisor[size_t(j)] > 0)) return Status::BadShape;
    }
  }
  s.input.resize(size_t(n));
  if (dims == 1) {
    order_by(x, s.input.data(), n);  // the module's one sort of points by a coordinate: ties by row
  } else {
    for (int64_t i = 0; i < n; ++i) s.input[size_t(i)] = i;
  }
  s.x.resize(size_t(n * dims));
  s.y.resize(size_t(n));
  s.prior.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = s.input[size_t(i)];
    // Division, as R divides: the scaled coordinates are R's to the bit.
    for (int32_t j = 0; j < dims; ++j) s.x[size_t(i * dims + j)] = x[r * dims + j] / s.divisor[size_t(j)];
    s.y[size_t(i)] = y[r];
    s.prior[size_t(i)] = weights ? weights[r] : 1.0;
  }
  s.lower.assign(size_t(dims), 0);
  s.upper.assign(size_t(dims), 0);
  for (int32_t j = 0; j < dims; ++j) {
    double lo = s.x[size_t(j)], hi = lo;
    for (int64_t i = 1; i < n; ++i) {
      lo = std::min(lo, s.x[size_t(i * dims + j)]);
      hi = std::max(hi, s.x[size_t(i * dims + j)]);
    }
    s.lower[size_t(j)] = lo;
    s.upper[size_t(j)] = hi;
  }
  return Status::Ok;
}

}  // namespace ka::loess
