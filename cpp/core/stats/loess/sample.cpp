// The scaled sample of a loess fit (sample.h): R's normalisation by trimmed standard deviations, and the sorted
// working order of 1-D fits.
#include "stats/loess/sample.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/rare.h"

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

// A double as an unsigned integer in the same order (−0 as +0): the sign bit set for positive numbers, every bit
// flipped for negative ones.
uint64_t ordered_bits(double v) {
  v += 0.0;
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b >> 63 ? ~b : b | (uint64_t(1) << 63);
}

double from_ordered_bits(uint64_t b) {
  b = b >> 63 ? b & ~(uint64_t(1) << 63) : ~b;
  double v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

}  // namespace

void sort_by_key(double* keys, int64_t* index, int64_t n) {
  // 11 bits a pass, least significant first; each pass is stable, so equal keys keep their order. A pass where
  // every key has the same digit (the exponent's high bits, mostly) is skipped.
  constexpr int kBits = 11;
  constexpr uint64_t kMask = (uint64_t(1) << kBits) - 1;
  std::vector<int64_t> buffer(size_t(3 * n));
  uint64_t *a = reinterpret_cast<uint64_t*>(buffer.data()), *b = a + n;
  int64_t *ia = index, *ib = buffer.data() + 2 * n;
  for (int64_t i = 0; i < n; ++i) a[i] = ordered_bits(keys[i]);
  int64_t count[kMask + 1];
  for (int shift = 0; shift < 64; shift += kBits) {
    std::fill(count, count + kMask + 1, 0);
    for (int64_t i = 0; i < n; ++i) ++count[(a[i] >> shift) & kMask];
    if (n == 0 || count[(a[0] >> shift) & kMask] == n) continue;
    int64_t start = 0;
    for (uint64_t d = 0; d <= kMask; ++d) std::swap(count[d], start), start += count[d];
    for (int64_t i = 0; i < n; ++i) {
      const int64_t to = count[(a[i] >> shift) & kMask]++;
      b[to] = a[i];
      ib[to] = ia[i];
    }
    std::swap(a, b);
    std::swap(ia, ib);
  }
  if (ia != index) std::copy(ia, ia + n, index);
  for (int64_t i = 0; i < n; ++i) keys[i] = from_ordered_bits(a[i]);
}

// Once per fit: compiled for size (base/rare.h); the sort it calls stays this file's -O3.
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
    // Rows in order, sorted stably by x: ties by row.
    std::vector<double> keys(x, x + n);
    for (int64_t i = 0; i < n; ++i) s.input[size_t(i)] = i;
    sort_by_key(keys.data(), s.input.data(), n);
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
