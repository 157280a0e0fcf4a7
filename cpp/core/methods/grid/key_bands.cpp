// A 2-D sample indexed in bands of x₂ (key_bands.h).
#include "methods/grid/key_bands.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ka {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

bool KeyBands::prepare(const float* x, int64_t n) {
  bands_ = 0;
  if (n < 1 || n > std::numeric_limits<int32_t>::max()) return false;
  double lo = kInf, hi = -kInf;
  for (int64_t j = 0; j < n; ++j) {
    const double v = x[2 * j + 1];
    if (!std::isfinite(v)) return false;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  // About 4 keys a band's width in x₁ for every band's height in x₂ on uniform data: a row's reach, a few bandwidths,
  // spans many bands, so what it reads beyond its reach is a thin margin.
  const int64_t bands = std::clamp<int64_t>(int64_t(std::sqrt(double(n) / 4) + 0.5), 1, 4096);
  const double height = hi > lo ? (hi - lo) / double(bands) : 1.0;
  if (!start_.reset_zeroed(bands + 1) || !order_.reset_zeroed(n)) return false;
  const auto band_of = [&](double v) { return std::clamp<int64_t>(int64_t((v - lo) / height), 0, bands - 1); };
  int64_t* start = start_.get();
  for (int64_t j = 0; j < n; ++j) ++start[band_of(x[2 * j + 1]) + 1];
  for (int64_t b = 0; b < bands; ++b) start[b + 1] += start[b];
  Scratch<int64_t> next(bands);
  if (!next.ok()) return false;
  std::copy(start, start + bands, next.get());
  for (int64_t j = 0; j < n; ++j) order_.get()[next.get()[band_of(x[2 * j + 1])]++] = int32_t(j);  // x₁ order kept
  x_ = x;
  n_ = n;
  lo_ = lo;
  height_ = height;
  bands_ = bands;
  return true;
}

int64_t KeyBands::lower(int64_t b, double v, bool above) const {
  int64_t lo = start_.get()[b], hi = start_.get()[b + 1];
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const double at = x_[2 * int64_t(order_.get()[mid])];
    if (above ? !(at > v) : at < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

int64_t KeyBands::gather(const KernelSpec& kernel, const float* q, const float* omega, double omega_max, double skip,
                         int32_t* picked) const {
  const double q1 = q[0], q2 = q[1], h1 = kernel.bandwidth[0], h2 = kernel.bandwidth[1];
  const bool compact = is_compact(kernel.kind), gaussian = kernel.kind == KernelKind::Gaussian;
  const int32_t* order = order_.get();
  const int64_t* start = start_.get();
  // The log-weight's term along an axis at |u| (Gaussian u²/2, Laplacian |u|), and the |u| where it reaches t.
  const auto term = [&](double u) { return gaussian ? u * u / 2 : u; };
  const auto reach = [&](double t) { return gaussian ? std::sqrt(2 * t) : t; };
  double drop = 0;  // keys whose terms sum to more than drop weigh less than the skip allows
  if (!compact) {
    // A key near q: the best of the keys next to q₁'s place in the bands around q₂, out to one band beyond the first
    // that holds an admissible key.
    const int64_t b0 = std::clamp<int64_t>(int64_t(std::floor((q2 - lo_) / height_)), 0, bands_ - 1);
    double near = -kInf;
    for (int64_t r = 0, found = -1; r < bands_ && (found < 0 || r <= found + 1); ++r) {
      for (const int64_t b : {b0 - r, b0 + r}) {
        if (b < 0 || b >= bands_ || (r == 0 && b != b0)) continue;
        const int64_t at = lower(b, q1, false);
        for (int64_t k = std::max(start[b], at - 1); k < std::min(start[b + 1], at + 1); ++k) {
          const int64_t j = order[k];
          const double w = omega ? double(omega[j]) / omega_max : 1.0;
          if (w > 0) near = std::max(near, log_score<double>(kernel, q, x_ + 2 * j, 2) + std::log(w));
        }
      }
      if (found < 0 && near > -kInf) found = r;
    }
    if (!(near > -kInf)) {  // no admissible key near q: every key
      for (int64_t j = 0; j < n_; ++j) picked[j] = int32_t(j);
      return n_;
    }
    drop = skip - near;
  }
  int64_t count = 0;
  const double margin = 1e-6 * height_;  // a key's band was found in double from float x₂: widen its bounds a hair
  for (int64_t b = 0; b < bands_; ++b) {
    if (start[b] == start[b + 1]) continue;
    const double b_lo = b == 0 ? -kInf : lo_ + double(b) * height_ - margin;
    const double b_hi = b == bands_ - 1 ? kInf : lo_ + double(b + 1) * height_ + margin;
    const double gap = std::max(0.0, std::max(b_lo - q2, q2 - b_hi));  // from q₂ to the band
    double r1 = 0;
    if (compact) {
      if (!(gap < h2 * (1 + 1e-6))) continue;
      r1 = h1 * (1 + 1e-6);
    } else {
      const double left = drop - term(gap / h2);
      if (!(left >= 0)) continue;
      r1 = h1 * reach(left);
    }
    const int64_t from = lower(b, q1 - r1, false), to = lower(b, q1 + r1, true);
    for (int64_t k = from; k < to; ++k) picked[count++] = order[k];
  }
  return count;
}

}  // namespace ka
