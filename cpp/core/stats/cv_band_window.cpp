// The exact band's windowed CV in float32 SIMD (cv_band_window.h). The Gaussian is symmetric, so each pair of rows
// within reach is weighed once and serves both: kLanes consecutive held-out rows at a time, each against the key a
// places after it (a = 1, 2, … up to the reach), its weight added to the row's moments in registers and to the key's
// own moments in a column of float32 sums, each moved to double every 64 terms.
#include "stats/cv_band_window.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/scratch.h"
#include "base/simd.h"
#include "engine/key_reach.h"
#include "engine/local_solve.h"
#include "kernel/kernels_simd.h"
#include "methods/plan.h"

namespace ka {
namespace bandwidth_detail {
namespace {

using simd::Batch;
using simd::kLanes;

constexpr double kNoReach = std::numeric_limits<double>::infinity();
// Terms a float32 sum takes before it moves to double: 64 terms of at most the row's largest weight each keep its
// rounding below 64 · 2^-24 of that weight.
constexpr int64_t kFlush = 64;
// Rows scored per call of score_rows: V8 optimises a WebAssembly function between its calls, so the loop over rows is
// a function called n/kRowBlock times per score rather than one that runs once (and the pair loop one called per
// group of kLanes rows).
constexpr int64_t kRowBlock = 1024;

// Σw, Σw·t, Σw·t², Σw·y, Σw·t·y over a row's keys, t = (x − x_i)/h.
enum Channel { kS0, kS1, kS2, kT0, kT1, kChannels };

// The exponent (log₂ units, t²·log₂e/2) of row i's nearest key: the row is fitted by the textbook solve above
// kBandTopLimit.
inline float nearest_exponent(const float* x, int64_t n, float inv_h, int64_t i) {
  const float far = std::numeric_limits<float>::infinity();
  const float t = std::min(i > 0 ? (x[i] - x[i - 1]) * inv_h : far, i + 1 < n ? (x[i + 1] - x[i]) * inv_h : far);
  return t * t * kHalfLog2e;
}

// Row i's held-out fit from its moments m (Channel order): the 2 × 2 solve in double, or the float64 textbook solve
// over the keys in reach (exact_local_row) where the row lies far from every key (kBandTopLimit), has no weight, or its
// slope pivot is at the float32 guard's floor. False where that is singular.
template <bool kLinear>
bool held_out_fit(const Problem& p, float inv_h, int64_t i, const double* m, double* fit) {
  const double pivot = kLinear ? m[kS2] - m[kS1] / m[kS0] * m[kS1] : 0;
  const bool textbook = !(nearest_exponent(p.keys.data, p.keys.rows, inv_h, i) <= kBandTopLimit) || !(m[kS0] > 0) ||
                        (kLinear && !(pivot > kPivotFloor * m[kS2]));
  if (!textbook) {
    *fit = kLinear ? m[kT0] / m[kS0] + m[kS1] / m[kS0] * (m[kS1] / m[kS0] * m[kT0] - m[kT1]) / pivot : m[kT0] / m[kS0];
    return true;
  }
  double work[4 + 2 + 2 + 1];
  const ExactRowScratch scratch{work, work + 4, work + 6};
  if (!exact_local_row(p, kLinear ? 1 : 0, nullptr, i, scratch, work + 8, nullptr, true)) return false;
  *fit = work[8];
  return true;
}

// The reach (in x units) of a row whose nearest key's exponent is `top`: its keys within 2^-(25 + log₂ n) of that key's
// weight (local_fit's tile skip: keys below it add less than float32 rounding to the row's sums).
inline double window_reach(double h, int64_t n, float top) {
  return h * std::sqrt((25 + std::log2(double(n)) + double(top)) / double(kHalfLog2e));
}

// What the rows of one score share. The columns hold the key side's sums of rows [base, base + width), in float32
// since their last flush and in double before it. The tail is a copy of the sample's last keys from tail_start on,
// followed by 2·kLanes keys far beyond the last (weight exactly 0, y = 0), for the groups that read past the end.
struct BandRows {
  const Problem& p;
  const float* x;
  const float* y;
  int64_t n;
  float inv_h;
  double reach;  // in x units: the keys of every row within 2^-(25 + log₂ n) of its nearest key's weight
  int64_t width = 0, base = 0, hi = 0;  // hi: the first key beyond the reach of the rows done so far
  float* column[kChannels] = {};
  double* column64[kChannels] = {};
  const float* tail_x = nullptr;
  const float* tail_y = nullptr;
  int64_t tail_start = 0;
};

// The pairs of rows [i0, i0 + kLanes) with the keys a = 1 … ahead places after each: the rows' moments added to
// `rows` (channel-major, kLanes a channel), the keys' to their columns. Offsets run in kLanes residues, so that
// consecutive iterations read and write disjoint columns (an overlapping store then load would stall). Out of line:
// V8 optimises a WebAssembly function between calls (keep_out_of_line).
// x and y start at the group's first row, and so do the columns.
template <bool kLinear>
void pair_group(const float* x, const float* y, float* const* columns, float inv_h, int64_t ahead, double* rows) {
  const simd::ExpConstants& k = simd::exp_constants();
  const Batch xi = simd::load(x), yi = simd::load(y), inv(inv_h), c(kHalfLog2e), zero(0.0f);
  Batch s0 = zero, s1 = zero, s2 = zero, t0 = zero, t1 = zero;
  float *const c0 = columns[kS0], *const c1 = columns[kS1], *const c2 = columns[kS2];
  float *const d0 = columns[kT0], *const d1 = columns[kT1];
  const auto flush = [&] {
    alignas(64) float lanes[kChannels][kLanes];
    simd::store(lanes[kS0], s0);
    simd::store(lanes[kT0], t0);
    if (kLinear) {
      simd::store(lanes[kS1], s1);
      simd::store(lanes[kS2], s2);
      simd::store(lanes[kT1], t1);
    }
    for (int ch = 0; ch < kChannels; ++ch)
      if (kLinear || ch == kS0 || ch == kT0)
        for (int64_t l = 0; l < kLanes; ++l) rows[ch * kLanes + l] += double(lanes[ch][l]);
    s0 = s1 = s2 = t0 = t1 = zero;
  };
  int64_t terms = 0;
  for (int64_t r = 1; r <= std::min(kLanes, ahead); ++r)
    for (int64_t a = r; a <= ahead; a += kLanes) {
      const Batch xs = simd::load(x + a), ys = simd::load(y + a);
      const Batch t = (xs - xi) * inv;
      const Batch w = simd::exp2_neg(t * t * c, k);
      s0 += w;
      t0 += w * ys;
      simd::store(c0 + a, simd::load(c0 + a) + w);
      simd::store(d0 + a, simd::load(d0 + a) + w * yi);
      if (kLinear) {  // the key sees the row at −t
        const Batch wt = w * t, wtt = wt * t;
        s1 += wt;
        s2 += wtt;
        t1 += wt * ys;
        simd::store(c1 + a, simd::load(c1 + a) - wt);
        simd::store(c2 + a, simd::load(c2 + a) + wtt);
        simd::store(d1 + a, simd::load(d1 + a) - wt * yi);
      }
      if (++terms == kFlush) {
        flush();
        terms = 0;
      }
    }
  flush();
}

// Moves columns [from, to) (sample indices) from float32 to double.
void flush_columns(const BandRows& b, int64_t from, int64_t to) {
  for (int ch = 0; ch < kChannels; ++ch)
    for (int64_t j = from - b.base; j < to - b.base; ++j) {
      b.column64[ch][j] += double(b.column[ch][j]);
      b.column[ch][j] = 0;
    }
}

// Adds (y_i − f_{−i}(x_i))² of rows [first, last) to *sum; false where a held-out design is singular in float64.
template <bool kLinear>
bool score_rows(BandRows& b, int64_t first, int64_t last, double* sum) {
  const auto pairs = simd::keep_out_of_line(&pair_group<kLinear>);
  const float* x = b.x;
  const int64_t n = b.n;
  for (int64_t i0 = first; i0 < last; i0 += kLanes) {
    const int64_t lanes = std::min(kLanes, last - i0);
    const double edge = double(x[i0 + lanes - 1]) + b.reach;
    while (b.hi < n && !(edge < double(x[b.hi]))) ++b.hi;
    const int64_t ahead = b.hi - 1 - i0;
    const bool tail = i0 + ahead + kLanes > n;  // it reads keys past the end: from the tail's copy
    float* columns[kChannels];
    for (int ch = 0; ch < kChannels; ++ch) columns[ch] = b.column[ch] + (i0 - b.base);
    double rows[kChannels * kLanes] = {};
    pairs(tail ? b.tail_x + (i0 - b.tail_start) : x + i0, tail ? b.tail_y + (i0 - b.tail_start) : b.y + i0, columns,
          b.inv_h, ahead, rows);
    for (int64_t l = 0; l < lanes; ++l) {
      const int64_t i = i0 + l, column = i - b.base;
      double m[kChannels];
      for (int ch = 0; ch < kChannels; ++ch)
        m[ch] = rows[ch * kLanes + l] + b.column64[ch][column] + double(b.column[ch][column]);
      double fit;
      if (!held_out_fit<kLinear>(b.p, b.inv_h, i, m, &fit)) return false;
      const double e = double(b.y[i]) - fit;
      *sum += e * e;
    }
    // A column takes at most one term per row: kFlush rows' worth, then double.
    if ((i0 - first) % kFlush == kFlush - kLanes) flush_columns(b, i0 + kLanes, b.hi + kLanes);
  }
  return true;
}

// The largest nearest_exponent of rows [first, last), textbook rows' (kBandTopLimit) left out; kLanes rows an
// instruction between the sample's first and last rows.
float nearest_top(const float* x, int64_t n, float inv_h, int64_t first, int64_t last) {
  const Batch inv(inv_h), c(kHalfLog2e), limit(kBandTopLimit), zero(0.0f);
  Batch top = zero;
  int64_t i = first;
  float most = 0;
  for (; i < std::min<int64_t>(1, last); ++i)
    if (const float e = nearest_exponent(x, n, inv_h, i); e <= kBandTopLimit) most = std::max(most, e);
  for (; i + kLanes <= std::min(last, n - 1); i += kLanes) {
    const Batch mid = simd::load(x + i);
    const Batch t = xsimd::min(mid - simd::load(x + i - 1), simd::load(x + i + 1) - mid) * inv;
    const Batch e = t * t * c;
    top = xsimd::max(top, xsimd::select(e <= limit, e, zero));
  }
  most = std::max(most, simd::max(top));
  for (; i < last; ++i)
    if (const float e = nearest_exponent(x, n, inv_h, i); e <= kBandTopLimit) most = std::max(most, e);
  return most;
}

template <bool kLinear>
bool score(BandRows& b, double* sum) {
  const auto block = simd::keep_out_of_line(&score_rows<kLinear>);
  for (int64_t i = 0; i < b.n; i += kRowBlock) {
    if (!block(b, i, std::min(b.n, i + kRowBlock), sum)) return false;
    // The next block's columns to the front: those written so far (up to hi + kLanes − 2), then zeros.
    const int64_t kept = std::max<int64_t>(0, b.hi + kLanes - (b.base + kRowBlock));
    const int64_t stale = std::min(b.width, kRowBlock + kept);
    for (int ch = 0; ch < kChannels; ++ch) {
      std::memmove(b.column[ch], b.column[ch] + kRowBlock, sizeof(float) * size_t(kept));
      std::memmove(b.column64[ch], b.column64[ch] + kRowBlock, sizeof(double) * size_t(kept));
      std::fill(b.column[ch] + kept, b.column[ch] + stale, 0.0f);
      std::fill(b.column64[ch] + kept, b.column64[ch] + stale, 0.0);
    }
    b.base += kRowBlock;
  }
  return true;
}

// Whether band_window_cv (and band_window_residuals) apply to p and the estimator (`sorted`: the keys known sorted).
bool band_applies(const Problem& p, Estimator estimator, bool sorted = false) {
  const int64_t n = p.keys.rows;
  if (p.kernel.kind != KernelKind::Gaussian ||
      (estimator != Estimator::LocalLinear && estimator != Estimator::NadarayaWatson) || n < 3 || p.heads != 1 ||
      p.keys.cols != 1 || p.keys.stride != 1 || p.values.cols != 1 || p.values.stride != 1 ||
      p.queries.data != p.keys.data || p.queries.rows != n || p.values.rows != n || !p.kernel.bandwidth ||
      !p.masks.leave_one_out || p.masks.causal || p.masks.key_padding || p.masks.general || p.masks.query_groups ||
      p.masks.band_first || !(sorted || sorted_by_first_coordinate(p.keys)))
    return false;
  const float hf = p.kernel.bandwidth[0];
  return hf > 0 && std::isfinite(hf);
}

// The moments (Channel order) of a row at x0 over keys [from, to): weights in float32 lanes, moved to double every
// kFlush terms, added to m.
template <bool kLinear>
void window_moments(const float* x, const float* y, int64_t from, int64_t to, float x0, float inv_h, double* m) {
  const simd::ExpConstants& k = simd::exp_constants();
  const Batch xi(x0), inv(inv_h), c(kHalfLog2e), zero(0.0f);
  Batch s0 = zero, s1 = zero, s2 = zero, t0 = zero, t1 = zero;
  const auto flush = [&] {
    m[kS0] += double(simd::sum(s0));
    m[kT0] += double(simd::sum(t0));
    if (kLinear) {
      m[kS1] += double(simd::sum(s1));
      m[kS2] += double(simd::sum(s2));
      m[kT1] += double(simd::sum(t1));
    }
    s0 = s1 = s2 = t0 = t1 = zero;
  };
  int64_t j = from, terms = 0;
  for (; j + kLanes <= to; j += kLanes) {
    const Batch t = (simd::load(x + j) - xi) * inv, ys = simd::load(y + j);
    const Batch w = simd::exp2_neg(t * t * c, k);
    s0 += w;
    t0 += w * ys;
    if (kLinear) {
      const Batch wt = w * t;
      s1 += wt;
      s2 += wt * t;
      t1 += wt * ys;
    }
    if (++terms == kFlush) {
      flush();
      terms = 0;
    }
  }
  flush();
  for (; j < to; ++j) {
    const float t = (x[j] - x0) * inv_h;
    const double w = std::exp2(-double(t * t * kHalfLog2e)), wt = w * double(t);
    m[kS0] += w;
    m[kT0] += w * double(y[j]);
    if (kLinear) {
      m[kS1] += wt;
      m[kS2] += wt * double(t);
      m[kT1] += wt * double(y[j]);
    }
  }
}

// The window [lo, hi) of keys within `reach` of row i's key in sorted x: the bisections of the whole sample, found by
// galloping out from i (a subsample's rows are far apart, and bisecting 10⁶ keys from the ends missed the cache at
// every step).
void window_around(const float* x, int64_t n, int64_t i, double reach, int64_t* lo, int64_t* hi) {
  const double left = double(x[i]) - reach, right = double(x[i]) + reach;
  int64_t a = i, step = 1;  // x[a] >= left
  while (a >= step && double(x[a - step]) >= left) {
    a -= step;
    step *= 2;
  }
  const int64_t low = a >= step ? a - step : 0;
  *lo = std::lower_bound(x + low, x + a, left, [](float v, double e) { return double(v) < e; }) - x;
  int64_t b = i;  // x[b] <= right
  step = 1;
  while (b + step < n && double(x[b + step]) <= right) {
    b += step;
    step *= 2;
  }
  const int64_t high = std::min(n, b + step);
  *hi = std::upper_bound(x + b + 1, x + high, right, [](double e, float v) { return e < double(v); }) - x;
}

template <bool kLinear>
bool residuals(const Problem& p, const int64_t* rows, int64_t m, double* out) {
  const auto moments = simd::keep_out_of_line(&window_moments<kLinear>);
  const float* x = p.keys.data;
  const float* y = p.values.data;
  const int64_t n = p.keys.rows;
  const double h = double(p.kernel.bandwidth[0]);
  const float inv_h = float(1 / h);
  for (int64_t r = 0; r < m; ++r) {
    const int64_t i = rows[r];
    int64_t lo, hi;
    window_around(x, n, i, window_reach(h, n, std::min(nearest_exponent(x, n, inv_h, i), kBandTopLimit)), &lo, &hi);
    double mo[kChannels] = {};
    moments(x, y, lo, i, x[i], inv_h, mo);
    moments(x, y, i + 1, hi, x[i], inv_h, mo);
    double fit;
    const double e = held_out_fit<kLinear>(p, inv_h, i, mo, &fit) ? double(y[i]) - fit : kNoReach;
    out[r] = e * e;
  }
  return true;
}

}  // namespace

bool band_window_residuals(const Problem& p, Estimator estimator, const int64_t* rows, int64_t m, double* out,
                           bool known) {
  if (!band_applies(p, estimator, known)) return false;
  return estimator == Estimator::LocalLinear ? residuals<true>(p, rows, m, out) : residuals<false>(p, rows, m, out);
}

bool band_window_cv(const Problem& p, Estimator estimator, double* score_out) {
  if (!band_applies(p, estimator)) return false;
  const int64_t n = p.keys.rows;
  const bool linear = estimator == Estimator::LocalLinear;
  const float hf = p.kernel.bandwidth[0];
  const float* x = p.keys.data;
  const double h = double(hf);
  const float inv_h = float(1 / h);
  // One reach for every row (window_reach), at the largest exponent of any row's nearest key.
  const auto tops = simd::keep_out_of_line(&nearest_top);
  float top = 0;
  for (int64_t i = 0; i < n; i += kRowBlock) top = std::max(top, tops(x, n, inv_h, i, std::min(n, i + kRowBlock)));
  const double reach = window_reach(h, n, top);
  // The most keys a group of rows pairs with: at most those from a block's first row to the last's reach.
  int64_t ahead = 0;
  for (int64_t i = 0; i < n; i += kRowBlock) {
    const double edge = double(x[std::min(n, i + kRowBlock) - 1]) + reach;
    const float* end = std::upper_bound(x + i, x + n, edge, [](double e, float v) { return e < double(v); });
    ahead = std::max(ahead, int64_t(end - x) - i);
  }

  const int64_t width = kRowBlock + ahead + 2 * kLanes, tail = std::min(n, ahead + 2 * kLanes);
  Scratch<float> tails(2 * (tail + 2 * kLanes)), columns;
  Scratch<double> columns64;
  if (!tails.ok() || !columns.reset_zeroed(kChannels * width) || !columns64.reset_zeroed(kChannels * width))
    return false;  // no memory for the band's columns: the caller's other criteria serve
  float* tail_x = tails.get();
  float* tail_y = tail_x + tail + 2 * kLanes;
  std::copy(x + n - tail, x + n, tail_x);
  std::copy(p.values.data + n - tail, p.values.data + n, tail_y);
  // Keys at least 64 bandwidths beyond the last: exp2_neg gives them exactly 0, and t stays finite (0 · t = 0).
  const float beyond = float(double(x[n - 1]) + 64 * h + std::fabs(double(x[n - 1])) / 1024);
  std::fill(tail_x + tail, tail_x + tail + 2 * kLanes, beyond);
  std::fill(tail_y + tail, tail_y + tail + 2 * kLanes, 0.0f);

  BandRows b{p, x, p.values.data, n, inv_h, reach};
  b.width = width;
  for (int ch = 0; ch < kChannels; ++ch) {
    b.column[ch] = columns.get() + ch * width;
    b.column64[ch] = columns64.get() + ch * width;
  }
  b.tail_x = tail_x;
  b.tail_y = tail_y;
  b.tail_start = n - tail;
  double sum = 0;
  if (!(linear ? score<true>(b, &sum) : score<false>(b, &sum))) {
    *score_out = kNoReach;  // singular even in float64: +inf, as cv_score gives
    return true;
  }
  *score_out = std::isnan(sum) ? kNoReach : sum / double(n);
  return true;
}

}  // namespace bandwidth_detail
}  // namespace ka
