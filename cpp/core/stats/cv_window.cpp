// The windowed 1-D CV (cv_window.h): per held-out row, the keys in reach found by bisection on the sorted keys, the
// moments summed in double and the 2 × 2 (or 1 × 1) textbook solve in closed form.
#include "stats/cv_window.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/local_solve.h"
#include "kernel/kernels.h"

namespace ka {
namespace bandwidth_detail {
namespace {

constexpr double kNoReach = std::numeric_limits<double>::infinity();
constexpr int64_t kChunk = 64;

// e^t to about 1e-15 relative for |t| < 708 (0 below −708, −inf included): t = k·ln 2 + r, |r| <= ln 2 / 2, e^r by
// its Taylor series to r^11 (the next term is below 7e-15), times 2^k from the exponent bits. Inline and
// branch-free, so the loop over a chunk's weights vectorises where std::exp (a libm call) would not: the call was
// 60 % of the criterion's time natively.
inline double exp_of(double t) {
  const bool under = !(t > -708);
  t = under ? 0.0 : std::min(t, 708.0);
  // k = round(t / ln 2) by the 1.5·2^52 trick (no libm call): its low bits then hold k itself.
  constexpr double kRound = 6755399441055744.0;
  const double shifted = t * 1.4426950408889634 + kRound, k = shifted - kRound;
  const double r = (t - k * 0.6931471803691238) - k * 1.9082149292705877e-10;
  double e = 1.0 / 39916800;
  for (const double c :
       {1.0 / 3628800, 1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720, 1.0 / 120, 1.0 / 24, 1.0 / 6, 0.5, 1.0, 1.0})
    e = e * r + c;
  int64_t bits, round_bits;
  std::memcpy(&bits, &shifted, sizeof bits);
  std::memcpy(&round_bits, &kRound, sizeof round_bits);
  bits = (bits - round_bits + 1023) << 52;
  double scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return under ? 0.0 : e * scale;
}

// The |u| beyond which log K(u) lies more than `drop` below log K(0) = 0: the window's half-width in bandwidths.
// Compact kernels: their support. Infinite where no double holds it.
double reach_in_bandwidths(KernelKind kind, double drop) {
  switch (kind) {
    case KernelKind::Gaussian: return std::sqrt(2 * drop);
    case KernelKind::Laplacian: return drop;
    case KernelKind::Cauchy: return drop < 700 ? std::sqrt(std::expm1(drop)) : kNoReach;
    case KernelKind::Epanechnikov:
    case KernelKind::Tricube:
    case KernelKind::Uniform: return 1;
    default: return kNoReach;
  }
}

struct Window {
  int64_t first, last;  // keys [first, last), the held-out ones among them skipped
  double top;           // log K + log(ω / max ω) of the row's nearest admissible keys: at most the row's largest
};

// The row's held-out keys are [out_first, out_last] (i alone, or blocked CV's band around it): its nearest admissible
// keys are the first of positive weight on either side. `cut`: the drop below `top` beyond which keys are left out.
struct Rows {
  const Problem& p;
  const float* omega;
  double log_top_omega, cut;
  const int64_t* band_first;
  const int64_t* band_last;
  const float* x;
  int64_t n;
  double h;

  // v[k] = log K(x_i, x_{j0+k}) − top for k < count.
  void exponents(int64_t i, int64_t j0, int64_t count, double top, double* v) const {
    const double xi = double(x[i]), inv_h = 1 / h;
    const float* xj = x + j0;
    switch (p.kernel.kind) {
      case KernelKind::Gaussian:
        for (int64_t k = 0; k < count; ++k) {
          const double u = (double(xj[k]) - xi) * inv_h;
          v[k] = -0.5 * u * u - top;
        }
        return;
      case KernelKind::Laplacian:
        for (int64_t k = 0; k < count; ++k) v[k] = -std::fabs((double(xj[k]) - xi) * inv_h) - top;
        return;
      default:
        for (int64_t k = 0; k < count; ++k) v[k] = log_k(i, j0 + k) - top;
    }
  }
  double log_k(int64_t i, int64_t j) const { return log_score<double>(p.kernel, x + i, x + j, 1); }
  double log_w(int64_t i, int64_t j) const {
    return log_k(i, j) + (omega ? std::log(double(omega[j])) - log_top_omega : 0.0);
  }
  int64_t at_lo = 0, at_hi = 0;  // the previous window's ends, where the next row's walk starts
  Window window(int64_t i) {
    const int64_t out_first = band_first ? band_first[i] : i, out_last = band_last ? band_last[i] : i;
    double top = -kNoReach;
    for (int64_t j = out_first - 1; j >= 0; --j)
      if (!omega || omega[j] > 0) {
        top = std::max(top, log_w(i, j));
        break;
      }
    for (int64_t j = out_last + 1; j < n; ++j)
      if (!omega || omega[j] > 0) {
        top = std::max(top, log_w(i, j));
        break;
      }
    if (!(top > -kNoReach)) return {0, 0, top};  // no admissible key of positive weight: the row is empty
    const double r = reach_in_bandwidths(p.kernel.kind, cut - top) * h, xi = double(x[i]);
    // Keys with x in [x_i − r, x_i + r]: a key beyond weighs less than e^(top − cut) (log ω <= 0).
    // Walked from the previous row's ends (rows come in order of x, and r changes little from one to the next:
    // O(1) a row where a bisection's unpredictable branches cost more than the row's few keys).
    int64_t lo = std::clamp<int64_t>(at_lo, 0, n), hi = std::clamp<int64_t>(at_hi, lo, n);
    while (lo < n && double(x[lo]) < xi - r) ++lo;
    while (lo > 0 && !(double(x[lo - 1]) < xi - r)) --lo;
    hi = std::max(hi, lo);
    while (hi < n && !(xi + r < double(x[hi]))) ++hi;
    while (hi > lo && xi + r < double(x[hi - 1])) --hi;
    at_lo = lo;
    at_hi = hi;
    return {lo, hi, top};
  }
};

}  // namespace

bool window_cv(const Problem& p, Estimator estimator, const float* omega, double* score) {
  const int64_t n = p.keys.rows, width = p.values.cols;
  if (p.keys.cols != 1 || p.keys.stride != 1 || n < 2 || !p.kernel.bandwidth || width > 8) return false;
  const double h = double(p.kernel.bandwidth[0]);
  float top_omega = 0;
  for (int64_t j = 0; omega && j < n; ++j) top_omega = std::max(top_omega, omega[j]);
  if (omega && !(top_omega > 0)) return false;
  // local_fit's tile skip in natural log: keys below it add less than float32 rounding to the row's sums.
  const double cut = (25 + std::log2(double(n))) * std::log(2.0);
  if (!std::isfinite(reach_in_bandwidths(p.kernel.kind, cut))) return false;
  Rows rows{
      p, omega, omega ? std::log(double(top_omega)) : 0.0, cut, p.masks.band_first, p.masks.band_last, p.keys.data,
      n, h};
  // The mean window of 64 rows spread through the sample: above kWindowKeys the tiled fit costs less.
  double sampled = 0;
  const int64_t probes = std::min<int64_t>(64, n);
  for (int64_t k = 0; k < probes; ++k) {
    const Window w = rows.window(k * (n - 1) / std::max<int64_t>(probes - 1, 1));
    sampled += double(w.last - w.first);
  }
  if (sampled > kWindowKeys * double(probes)) return false;
  rows.at_lo = rows.at_hi = 0;
  const bool linear = estimator == Estimator::LocalLinear;
  double sum = 0, total = 0;
  double t0[8], t1[8], v[kChunk];
  for (int64_t i = 0; i < n; ++i) {
    const double omega_i = omega ? double(omega[i]) : 1.0;
    total += omega_i;
    if (!(omega_i > 0)) continue;  // a zero-weight point does not count, even when its fit is empty
    const Window w = rows.window(i);
    const int64_t out_first = rows.band_first ? rows.band_first[i] : i;
    const int64_t out_last = rows.band_last ? rows.band_last[i] : i;
    const double xi = double(p.keys.data[i]);
    double s0 = 0, s1 = 0, s2 = 0;
    std::fill(t0, t0 + width, 0.0);
    std::fill(t1, t1 + width, 0.0);
    // Weights a chunk at a time: their exponents in one loop, exp_of in another (both vectorise), then the sums.
    const auto add = [&](int64_t j0, int64_t j1) {
      for (; j0 < j1; j0 += kChunk) {
        const int64_t count = std::min(kChunk, j1 - j0);
        rows.exponents(i, j0, count, w.top, v);
        for (int64_t k = 0; k < count; ++k) v[k] = exp_of(v[k]);
        for (int64_t k = 0; k < count; ++k) {
          const int64_t j = j0 + k;
          const double vk = omega ? v[k] * (double(omega[j]) / double(top_omega)) : v[k];
          if (!(vk > 0)) continue;  // no weight (ω = 0, or beyond a compact kernel's support): y is never read
          const float* y = p.values.row(j);
          s0 += vk;
          if (linear) {
            const double d = (double(p.keys.data[j]) - xi) / h, vd = vk * d;
            s1 += vd;
            s2 += vd * d;
            for (int64_t c = 0; c < width; ++c) {
              t0[c] += vk * double(y[c]);
              t1[c] += vd * double(y[c]);
            }
          } else {
            for (int64_t c = 0; c < width; ++c) t0[c] += vk * double(y[c]);
          }
        }
      }
    };
    // The window less the held-out keys (a band wider than the window leaves one side or none).
    add(w.first, std::min(w.last, out_first));
    add(std::max(w.first, out_last + 1), w.last);
    // The textbook solve (exact_local_row): empty, or a slope pivot at most kSingularDesign of its diagonal, is
    // singular and the score +inf.
    if (!(s0 > 0)) {
      *score = kNoReach;
      return true;
    }
    const double pivot = linear ? s2 - s1 / s0 * s1 : 0;
    if (linear && !(pivot > kSingularDesign * s2)) {
      *score = kNoReach;
      return true;
    }
    const float* yi = p.values.row(i);
    for (int64_t c = 0; c < width; ++c) {
      const double fit = linear ? t0[c] / s0 + s1 / s0 * (s1 / s0 * t0[c] - t1[c]) / pivot : t0[c] / s0;
      const double e = double(yi[c]) - fit;
      sum += omega_i * e * e;
    }
  }
  *score = std::isnan(sum) || !(total > 0) ? kNoReach : sum / total;
  return true;
}

}  // namespace bandwidth_detail
}  // namespace ka
