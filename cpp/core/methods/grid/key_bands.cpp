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
  // About 16 keys in a square of a band's height on uniform data: a row's reach, several bandwidths, spans many bands,
  // so what it reads beyond its reach is a thin margin, and each band costs the row two bisections (measured on 10⁶
  // points: √(n/4) bands took 1.4 times as long, √(n/64) as long).
  const int64_t bands = std::clamp<int64_t>(int64_t(std::sqrt(double(n) / 16) + 0.5), 1, 4096);
  const double height = hi > lo ? (hi - lo) / double(bands) : 1.0;
  if (!start_.reset_zeroed(bands + 1) || !order_.reset_zeroed(n) || !x1_.reset_zeroed(n)) return false;
  const auto band_at = [&](double v) { return std::clamp<int64_t>(int64_t((v - lo) / height), 0, bands - 1); };
  int64_t* start = start_.get();
  for (int64_t j = 0; j < n; ++j) ++start[band_at(x[2 * j + 1]) + 1];
  for (int64_t b = 0; b < bands; ++b) start[b + 1] += start[b];
  Scratch<int64_t> next(bands);
  if (!next.ok()) return false;
  std::copy(start, start + bands, next.get());
  for (int64_t j = 0; j < n; ++j) {  // x₁ order kept within each band
    const int64_t at = next.get()[band_at(x[2 * j + 1])]++;
    order_.get()[at] = int32_t(j);
    x1_.get()[at] = x[2 * j];
  }
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
    const double at = x1_.get()[mid];
    if (above ? !(at > v) : at < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

int64_t KeyBands::band_of(double v) const {
  return std::clamp<int64_t>(int64_t(std::floor((v - lo_) / height_)), 0, bands_ - 1);
}

int64_t KeyBands::runs(const KernelSpec& kernel, const float* q, const float* omega, double omega_max, double skip,
                       Run* runs) const {
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
    const int64_t b0 = band_of(q2);
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
    if (!(near > -kInf)) return -1;  // no admissible key near q: every key
    drop = skip - near;
  }
  int64_t count = 0;
  const double margin = 1e-6 * height_;  // a key's band was found in double from float x₂: widen its bounds a hair
  // The bands within reach along x₂ alone (a band further off has no key in reach).
  const double reach2 = compact ? h2 * (1 + 1e-6) : h2 * reach(drop);
  const int64_t b_first = band_of(q2 - reach2 - height_), b_last = band_of(q2 + reach2 + height_);
  for (int64_t b = b_first; b <= b_last; ++b) {
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
    if (from < to) runs[count++] = {b, from, to};
  }
  return count;
}

}  // namespace ka
