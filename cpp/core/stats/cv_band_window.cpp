// The exact band's windowed CV in float32 SIMD (cv_band_window.h): per held-out row, the window of sorted keys in
// reach walked from the previous row's, the Gaussian weights four keys an instruction, the moments in double per row.
#include "stats/cv_band_window.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/scratch.h"
#include "base/simd.h"
#include "engine/key_reach.h"
#include "engine/local_solve.h"
#include "methods/plan.h"

namespace ka {
namespace bandwidth_detail {
namespace {

using simd::Batch;
using simd::kLanes;

constexpr double kNoReach = std::numeric_limits<double>::infinity();
// log₂ e / 2: the Gaussian's exponent t²/2 in log₂ units, for exp2_neg.
constexpr float kHalfLog2e = 0.72134752044448170f;
// Keys summed in float32 lanes before their sums move to double: 64 terms of at most 1 each keep every lane's
// rounding below 64 · 2^-24 of the row's largest weight.
constexpr int64_t kFlush = 64;
// 0, 1, 2, …: each lane's offset in a batch (as many as the widest batch has lanes).
alignas(64) constexpr float kLaneIndex[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

// Σw, Σw·t, Σw·t², Σw·y, Σw·t·y over a row's keys, t = (x − x_i)/h.
struct Moments {
  double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
};

// The moments of row i over keys [lo, hi) but i itself: w = 2^−(t²·log₂e/2 − top), `top` the nearest key's exponent.
// Whole batches of keys where they are all in [lo, hi) and not i; the batch that holds i or passes hi is masked, and
// one that would read past the sample's end is copied. Out of line (called through keep_out_of_line): V8 optimises a
// WebAssembly function between calls, so the hot loop must be a function of its own.
void row_moments(const float* x, const float* y, int64_t n, int64_t lo, int64_t hi, int64_t i, float inv_h, float top,
                 Moments* m) {
  const simd::ExpConstants& k = simd::exp_constants();
  const float xi = x[i];
  const Batch bxi(xi), binv(inv_h), bc(kHalfLog2e), btop(top), one(1.0f), zero(0.0f);
  const Batch lanes = simd::load(kLaneIndex);
  Batch s0(0.0f), s1(0.0f), s2(0.0f), t0(0.0f), t1(0.0f);
  const auto weigh = [&](Batch xs, Batch ys, Batch keep) {
    const Batch t = (xs - bxi) * binv;
    const Batch w = simd::exp2_neg(t * t * bc - btop, k) * keep;
    const Batch wt = w * t;
    s0 += w;
    s1 += wt;
    s2 += wt * t;
    t0 += w * ys;
    t1 += wt * ys;
  };
  const auto flush = [&] {
    m->s0 += double(simd::sum(s0));
    m->s1 += double(simd::sum(s1));
    m->s2 += double(simd::sum(s2));
    m->t0 += double(simd::sum(t0));
    m->t1 += double(simd::sum(t1));
    s0 = s1 = s2 = t0 = t1 = zero;
  };
  int64_t since_flush = 0;
  for (int64_t j = lo; j < hi; j += kLanes) {
    if (j + kLanes <= hi && (i < j || i >= j + kLanes)) {
      weigh(simd::load(x + j), simd::load(y + j), one);
    } else if (j + kLanes <= n) {  // lanes past hi, or lane i - j: weight 0
      // Offsets from j, clamped to [-1, kLanes]: exact in float32 at any n.
      const float end = float(std::min<int64_t>(hi - j, kLanes)), own = float(std::clamp<int64_t>(i - j, -1, kLanes));
      const auto in = (lanes < Batch(end)) & (lanes != Batch(own));
      weigh(simd::load(x + j), simd::load(y + j), xsimd::select(in, one, zero));
    } else {  // the sample's last keys: copied, padded with x_i (t = 0) at weight 0
      alignas(64) float xs[kLanes], ys[kLanes], keep[kLanes];
      for (int64_t l = 0; l < kLanes; ++l) {
        const bool in = j + l < hi && j + l != i;
        xs[l] = j + l < n ? x[j + l] : xi;
        ys[l] = j + l < n ? y[j + l] : 0.0f;
        keep[l] = in ? 1.0f : 0.0f;
      }
      weigh(simd::load(xs), simd::load(ys), simd::load(keep));
    }
    if ((since_flush += kLanes) >= kFlush) {
      flush();
      since_flush = 0;
    }
  }
  flush();
}

}  // namespace

namespace {

// Rows scored per call of score_rows: V8 optimises a WebAssembly function between its calls, so the loop over rows is
// a function called n/kRowBlock times per score rather than one that runs once.
constexpr int64_t kRowBlock = 1024;

// What the rows of one score share, and the window's ends carried from row to row.
struct BandRows {
  const Problem& p;
  const float* x;
  const float* y;
  int64_t n;
  double h, cut;
  float inv_h;
  bool linear;
  int64_t lo = 0, hi = 0;
};

// Adds (y_i − f_{−i}(x_i))² of rows [first, last) to *sum; false where a held-out design is singular in float64.
bool score_rows(BandRows& b, int64_t first, int64_t last, double* sum) {
  const auto moments = simd::keep_out_of_line(&row_moments);
  const float* x = b.x;
  const int64_t n = b.n;
  // The textbook rows: the float64 solve over the keys in reach (exact_local_row).
  double work[4 + 2 + 2 + 1];
  const ExactRowScratch rows{work, work + 4, work + 6};
  double* exact = work + 8;
  const float far = std::numeric_limits<float>::infinity();
  for (int64_t i = first; i < last; ++i) {
    const float xi = x[i];
    const float nearest =
        std::min(i > 0 ? (xi - x[i - 1]) * b.inv_h : far, i + 1 < n ? (x[i + 1] - xi) * b.inv_h : far);
    const float top = nearest * nearest * kHalfLog2e;
    double fit = 0;
    bool textbook = !(top <= kBandTopLimit);
    if (!textbook) {
      // Keys with t²·log₂e/2 − top <= cut: |x − x_i| <= r. Walked from the previous row's ends (rows come in order of
      // x).
      const double r = b.h * std::sqrt((b.cut + double(top)) / double(kHalfLog2e)), c = double(xi);
      int64_t lo = std::min(b.lo, i), hi = std::max(b.hi, i + 1);
      while (lo < i && double(x[lo]) < c - r) ++lo;
      while (lo > 0 && !(double(x[lo - 1]) < c - r)) --lo;
      while (hi < n && !(c + r < double(x[hi]))) ++hi;
      while (hi > i + 1 && c + r < double(x[hi - 1])) --hi;
      b.lo = lo;
      b.hi = hi;
      Moments m;
      moments(x, b.y, n, lo, hi, i, b.inv_h, top, &m);
      const double pivot = b.linear ? m.s2 - m.s1 / m.s0 * m.s1 : 0;
      textbook = !(m.s0 > 0) || (b.linear && !(pivot > kPivotFloor * m.s2));
      fit = b.linear ? m.t0 / m.s0 + m.s1 / m.s0 * (m.s1 / m.s0 * m.t0 - m.t1) / pivot : m.t0 / m.s0;
    }
    if (textbook) {
      if (!exact_local_row(b.p, b.linear ? 1 : 0, nullptr, i, rows, exact, nullptr, true)) return false;
      fit = exact[0];
    }
    const double e = double(b.y[i]) - fit;
    *sum += e * e;
  }
  return true;
}

}  // namespace

bool band_window_cv(const Problem& p, Estimator estimator, double* score) {
  const int64_t n = p.keys.rows;
  const bool linear = estimator == Estimator::LocalLinear;
  if (p.kernel.kind != KernelKind::Gaussian || (!linear && estimator != Estimator::NadarayaWatson) || n < 3 ||
      p.heads != 1 || p.keys.cols != 1 || p.keys.stride != 1 || p.values.cols != 1 || p.values.stride != 1 ||
      p.queries.data != p.keys.data || p.queries.rows != n || p.values.rows != n || !p.kernel.bandwidth ||
      !p.masks.leave_one_out || p.masks.causal || p.masks.key_padding || p.masks.general || p.masks.query_groups ||
      p.masks.band_first || !sorted_by_first_coordinate(p.keys))
    return false;
  const float hf = p.kernel.bandwidth[0];
  if (!(hf > 0) || !std::isfinite(hf)) return false;
  // local_fit's tile skip (log₂ units): keys below it add less than float32 rounding to the row's sums.
  BandRows rows{p, p.keys.data, p.values.data, n, double(hf), 25 + std::log2(double(n)), float(1 / double(hf)), linear};
  const auto score_block = simd::keep_out_of_line(&score_rows);
  double sum = 0;
  for (int64_t i = 0; i < n; i += kRowBlock)
    if (!score_block(rows, i, std::min(n, i + kRowBlock), &sum)) {
      *score = kNoReach;  // singular even in float64: +inf, as cv_score gives
      return true;
    }
  *score = std::isnan(sum) ? kNoReach : sum / double(n);
  return true;
}

Result band_window_score(SearchSample& sample, const Problem& p, const Criterion& c, float h, double* score,
                         bool* served) {
  *served = false;
  if (c.observation_weights || c.exclude > 0 || c.score != Score::LeaveOneOut || p.masks.any() ||
      p.kernel.kind != KernelKind::Gaussian || p.keys.cols != 1 || p.values.cols != 1)
    return {};
  const Problem* sorted = sample.sorted_problem(p, c);
  if (!sorted) return {Status::OutOfMemory};
  const int64_t n = sorted->keys.rows;
  const double range = n > 0 ? double(sorted->keys.row(n - 1)[0]) - double(sorted->keys.row(0)[0]) : 0;
  if (!plan_band_cv(range, p.kernel.kind, h, n, c.grid_tolerance)) return {};
  Problem q = *sorted;
  q.kernel.bandwidth = &h;
  q.masks.leave_one_out = true;
  q.empty = EmptyPolicy::NaN;
  *served = band_window_cv(q, c.estimator, score);
  return {};
}

}  // namespace bandwidth_detail
}  // namespace ka
