// Leave-one-out CV of a 1-D sample over a bandwidth search on grids (GridCv, grid.h): the sample sorted and binned
// once (binning.h), each bandwidth's grid asked of the plan (methods/plan.h), its moments convolved (cv_parts.h) and
// read cell by cell.
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/scratch.h"
#include "base/simd.h"
#include "base/text.h"
#include "engine/local_solve.h"
#include "methods/grid/binning.h"
#include "methods/grid/cv_band.h"
#include "methods/grid/cv_parts.h"
#include "methods/grid/exact_rows.h"
#include "methods/grid/grid.h"
#include "methods/grid/plan.h"
#include "methods/grid/query.h"
#include "methods/plan.h"
#include "stats/regression.h"

namespace ka {
namespace {

// Rows whose grid moments the leave-one-out subtraction leaves too small are fitted exactly, this many at a time.
constexpr int64_t kExactBatch = 256;

// The sorted points of one cell of the grid being scored and its moments, each a line across the cell:
// moment k = at[k] + u·slope[k] at u = (x − lo)·scale − e ∈ [0, 1] (S_a for a < 1 + 2·Linear, then per column
// T_a for a < 1 + Linear).
struct CellPass {
  const double* at;
  const double* slope;
  double lo, scale, e;
  const float* x;
  const float* y;  // width per point
  const float* w;  // null without observation weights
  int64_t count, width;
  double served_above;  // a point's leave-one-out S₀ must exceed this for the grid to serve it
  double* trace;        // AICc (cell_fits): Σ ℓ_ii of the points served
  OwnShare own;         // what leave-one-out takes out of S₀, S₂ and T₀ per unit of a point's weight at u
};

// Adds ω_i Σ_c (y_ic − f_{−i}(x_i)_c)² to *sum over the cell's points, each fit from the moments at x_i less the
// point's own share of them (OwnShare, grid/query.h), stopping at the first point the grid cannot serve. Returns the
// points done (count, or that point's place). Width 0: any number of columns, else exactly that many (a constant).
template <bool Linear, bool Weighted, int64_t Width>
int64_t cell_residuals(const CellPass& c, double* sum) {
  constexpr int64_t s_count = Linear ? 3 : 1, t_count = Linear ? 2 : 1;
  const int64_t width = Width ? Width : c.width, count = c.count;
  const double* at = c.at;
  const double* slope = c.slope;
  const double lo = c.lo, scale = c.scale, e = c.e, served_above = c.served_above;
  double acc = 0;
  int64_t i = 0;
  for (; i < count; ++i) {
    const double u = (double(c.x[i]) - lo) * scale - e;
    const double w = Weighted ? double(c.w[i]) : 1.0, own = w * c.own.s0(u);
    const double s0 = at[0] + u * slope[0] - own, s2 = Linear ? at[2] + u * slope[2] - w * c.own.s2(u) : 0;
    if (!(s0 > served_above)) break;
    if (Linear && !guard_free(s0, at[1] + u * slope[1], s2)) break;
    for (int64_t col = 0; col < width; ++col) {
      const int64_t k = s_count + col * t_count;
      const double y = double(c.y[i * width + col]), t0 = at[k] + u * slope[k] - own * y;
      const double fit = Linear ? linear_fit(s0, at[1] + u * slope[1], s2, t0, at[k + 1] + u * slope[k + 1]) : t0 / s0;
      acc += w * (y - fit) * (y - fit);
    }
  }
  *sum += acc;
  return i;
}

// cell_residuals for one column, several points at a time (batches of doubles), the scalar loop taking over at the
// first batch with a point the grid cannot serve and for the last few points.
template <bool Linear, bool Weighted>
int64_t cell_residuals_batched(const CellPass& c, double* sum) {
  using D = xsimd::batch<double>;
  constexpr int64_t lanes = int64_t(D::size);
  const double* at = c.at;
  const double* slope = c.slope;
  const D lo(c.lo), scale(c.scale), e(c.e), served_above(c.served_above), one(1.0), floor(kPivotFloor), zero(0.0);
  const D own_zero(c.own.zero[0]), own_two(c.own.two[0]);
  const D s0_at(at[0]), s0_slope(slope[0]), t0_at(at[Linear ? 3 : 1]), t0_slope(slope[Linear ? 3 : 1]);
  const D s1_at(Linear ? at[1] : 0), s1_slope(Linear ? slope[1] : 0), s2_at(Linear ? at[2] : 0),
      s2_slope(Linear ? slope[2] : 0), t1_at(Linear ? at[4] : 0), t1_slope(Linear ? slope[4] : 0);
  D acc(0.0);
  int64_t i = 0;
  for (; i + lanes <= c.count; i += lanes) {
    const D x = D::load_unaligned(c.x + i), y = D::load_unaligned(c.y + i);
    const D w = Weighted ? D::load_unaligned(c.w + i) : one;
    const D u = (x - lo) * scale - e, f = u * (one - u), own = w * (one - f * own_zero);
    const D s0 = xsimd::fma(u, s0_slope, s0_at) - own;
    if (!xsimd::all(s0 > served_above)) break;
    const D t0 = xsimd::fma(u, t0_slope, t0_at) - own * y;
    D fit;
    if (Linear) {
      const D s1 = xsimd::fma(u, s1_slope, s1_at), s2 = xsimd::fma(u, s2_slope, s2_at) - w * f * own_two;
      const D t1 = xsimd::fma(u, t1_slope, t1_at);
      const D q = s1 / s0, pivot = xsimd::max(s2 - q * s1, floor * s2);
      if (!xsimd::all(s2 - q * s1 >= floor * s2)) break;  // the guard would act: cell_residuals hands it on
      fit = t0 / s0 + xsimd::select(pivot > zero, q * (q * t0 - t1) / pivot, zero);
    } else {
      fit = t0 / s0;
    }
    const D r = y - fit;
    acc = xsimd::fma(w * r, r, acc);
  }
  *sum += xsimd::hadd(acc);
  CellPass rest = c;
  rest.x += i;
  rest.y += i;
  if (Weighted) rest.w += i;
  rest.count -= i;
  return i + cell_residuals<Linear, Weighted, 1>(rest, sum);
}

// AICc's sums over the cell's points (summarize_fit's, stats/regression.h): ω_i Σ_c (y_ic − f(x_i)_c)² to *sum and
// the smoother's diagonal ℓ_ii = ω_i·(A⁻¹)₀₀ to *c.trace, each fit from the moments at x_i with the point included
// (its offset is 0, so its design row is e₁ and K(0) = 1), stopping at the first point the grid cannot serve.
template <bool Linear, bool Weighted>
int64_t cell_fits(const CellPass& c, double* sum) {
  const int64_t width = c.width, s_count = Linear ? 3 : 1, t_count = Linear ? 2 : 1;
  const double* at = c.at;
  const double* slope = c.slope;
  double acc = 0, trace = 0;
  int64_t i = 0;
  for (; i < c.count; ++i) {
    const double w = Weighted ? double(c.w[i]) : 1.0;
    const double u = (double(c.x[i]) - c.lo) * c.scale - c.e;
    const double s0 = at[0] + u * slope[0];
    if (!(s0 > c.served_above)) break;
    const double s1 = Linear ? at[1] + u * slope[1] : 0, s2 = Linear ? at[2] + u * slope[2] : 0;
    // A point alone within the taps' reach has S₁ = S₂ = 0 on the grid (guard-free, but no slope to solve): its
    // textbook solve reads the keys beyond, whose weights a double still holds.
    if (Linear && !(s2 > 0 && guard_free(s0, s1, s2))) break;
    const double q = s1 / s0;
    trace += w * (Linear ? 1 / s0 + q * q / (s2 - q * s1) : 1 / s0);
    for (int64_t col = 0; col < width; ++col) {
      const int64_t k = s_count + col * t_count;
      const double y = double(c.y[i * width + col]), t0 = at[k] + u * slope[k];
      const double fit = Linear ? linear_fit(s0, s1, s2, t0, at[k + 1] + u * slope[k + 1]) : t0 / s0;
      acc += w * (y - fit) * (y - fit);
    }
  }
  *sum += acc;
  *c.trace += trace;
  return i;
}

using CellKernel = int64_t(const CellPass&, double*);

template <bool Linear, bool Weighted>
CellKernel* cell_kernel(int64_t width, bool aicc) {
  if (aicc) return &cell_fits<Linear, Weighted>;
  return width == 1 ? &cell_residuals_batched<Linear, Weighted> : &cell_residuals<Linear, Weighted, 0>;
}

}  // namespace

GridCv::GridCv(const Fit& f, double tolerance, double exclude, bool aicc)
    : fit_(f), tolerance_(tolerance), exclude_(exclude), aicc_(aicc) {
  Problem& p = fit_.problem;
  const Masks& m = p.masks;
  p.kernel.bandwidth = &h_;
  if (!(tolerance > 0) || (aicc && exclude > 0) || p.queries.cols != 1 || p.heads != 1 || p.keys.rows < 2 ||
      !queries_are_keys(p) || m.causal || m.key_padding || m.general || m.query_groups ||
      p.kernel.kind == KernelKind::Cauchy || p.kernel.kind == KernelKind::Softmax ||
      f.estimator == Estimator::LocalQuadratic || check(p, true) != Status::Ok)
    return;
  const int64_t n = p.keys.rows;
  const float* omega = f.observation_weights;
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  bool finite = true;
  const auto range = simd::keep_out_of_line(&column_range);
  for (int64_t j = 0; j < n; j += kBlock) range(p.keys, 0, j, std::min(n, j + kBlock), &lo, &hi, &finite);
  if (!finite) return;  // the exact engine knows what NaN or infinite keys give
  for (int64_t j = 0; j < n; ++j) {
    const double w = omega ? double(omega[j]) : 1.0;
    if (!(w >= 0) || !std::isfinite(w)) return;  // grid_local_fit refuses them (BadArgument)
    total_ += w;
    counted_ += w > 0;
  }
  lo_ = lo;
  range_ = double(hi) - double(lo);
  p.masks.leave_one_out = true;
  p.empty = EmptyPolicy::NaN;
  finest_ = cv_finest_level(counted_);
  suits_ = range_ > 0;
}

Result GridCv::sort_and_bin() {
  if (const Status st = sort_and_bin_cells(fit_, lo_, range_, counted_, finest_, &start_, &x_, &y_, &w_, &bins_);
      st != Status::Ok)
    return {st};
  // Every coarser level's bins, halved once from the finest (the one below it first, each from the one above): a
  // search scores its bandwidths on a few levels, each many times, and halving 2^18 nodes per score took 5 % of a
  // 10⁵-point fit. The same arithmetic as halving at each score, so the same bytes.
  const int64_t channels = 1 + fit_.problem.values.cols;
  if (!levels_.reset_zeroed(channels * level_offset(-1))) return {Status::OutOfMemory};
  const int64_t fine_nodes = (int64_t(1) << finest_) + 1;
  for (int64_t ch = 0; ch < channels; ++ch) {
    const double* from = bins_.get() + ch * fine_nodes;
    for (int level = finest_ - 1; level >= 0; --level) {
      double* into = levels_.get() + channels * level_offset(level) + ch * ((int64_t(1) << level) + 1);
      halve_bins(from, int64_t(1) << level, into);
      from = into;
    }
  }
  sorted_ = true;
  return {};
}

int64_t GridCv::level_offset(int level) const {
  int64_t offset = 0;  // nodes per channel of the levels above `level`, finest excluded
  for (int l = finest_ - 1; l > level; --l) offset += (int64_t(1) << l) + 1;
  return offset;
}

Result GridCv::exact_rows_into(const int64_t* sorted, int64_t count, double* sum, double* trace) {
  if (count == 0 || std::isnan(*sum)) return {};  // a row is already empty: the score is +inf whatever these give
  const int64_t width = fit_.problem.values.cols, cells = int64_t(1) << finest_;
  const int64_t np = fit_.estimator == Estimator::LocalLinear ? 2 : 1;
  const double h = double(h_), scale = double(cells) / range_;
  const float* omega = fit_.observation_weights ? w_.get() : nullptr;
  double a[4], z[2];
  Scratch<double> t(np * width), exact(width);
  if (!t.ok() || !exact.ok()) return {Status::OutOfMemory};
  const auto cell_of = [&](double v) {
    return std::clamp<int64_t>(int64_t(std::floor((v - lo_) * scale)), 0, cells - 1);
  };
  // Where a key's weight stops mattering, given the nearest key's distance d1: below 2^-(25 + log₂ n) of the
  // nearest's (the keys left out then weigh less than float32 rounding of the row's sum, as local_fit's tile skip),
  // or the support's end; without such a bound, every key.
  const double cut = std::log(2.0) * (25 + std::log2(double(counted_)));
  const auto reach = [&](double d1) {
    switch (fit_.problem.kernel.kind) {
      case KernelKind::Gaussian: return std::sqrt(d1 * d1 + 2 * cut * h * h);
      case KernelKind::Laplacian: return d1 + cut * h;
      default: return reach_of(fit_.problem.kernel.kind) > 0 ? reach_of(fit_.problem.kernel.kind) * h : range_;
    }
  };
  for (int64_t r = 0; r < count; ++r) {
    const int64_t k = sorted[r];
    const double x = double(x_.get()[k]);
    const int64_t home = cell_of(x);
    // The nearest other point: in the point's own cell or the nearest occupied cell either way, whose points are the
    // runs just before and after the own cell's (the cells are in order). Were a point binned a cell off by rounding,
    // d1 would only come out larger, and the window with it.
    double d1 = std::numeric_limits<double>::infinity();
    const auto nearest_in = [&](int64_t from, int64_t to) {
      for (int64_t j = from; j < to; ++j)
        if (j != k) d1 = std::min(d1, std::fabs(double(x_.get()[j]) - x));
    };
    const int64_t own_first = start_.get()[home], own_last = start_.get()[home + 1];
    nearest_in(own_first, own_last);
    if (own_first > 0)
      nearest_in(start_.get()[std::min(home - 1, cell_of(double(x_.get()[own_first - 1])))], own_first);
    if (own_last < counted_)
      nearest_in(own_last, start_.get()[std::max(home + 1, cell_of(double(x_.get()[own_last]))) + 1]);
    // Its window: the cells within reach, one more each way for the cells' rounding.
    const double r_x = reach(d1);
    const int64_t first = start_.get()[std::max<int64_t>(0, cell_of(x - r_x) - 1)];
    const int64_t last = start_.get()[std::min(cells, cell_of(x + r_x) + 2)];
    Problem window = fit_.problem;
    window.keys = window.queries = ConstMatrix{x_.get() + first, last - first, 1, 1};
    window.values = ConstMatrix{y_.get() + first * width, last - first, width, width};
    window.masks = Masks{};
    window.masks.leave_one_out = !trace;
    // The textbook solve (+inf for a singular design: NaN here), as cv_score's exact rows and summarize_fit's.
    double self = 0;
    if (!exact_local_row(window, int(np - 1), omega ? omega + first : nullptr, k - first, {a, t.get(), z}, exact.get(),
                         trace ? &self : nullptr)) {
      *sum = std::numeric_limits<double>::quiet_NaN();
      return {};
    }
    if (trace) *trace += self;
    for (int64_t c = 0; c < width; ++c) {
      const double e = double(y_.get()[k * width + c]) - exact.get()[c];
      *sum += (omega ? double(omega[k]) : 1.0) * e * e;
    }
  }
  return {};
}

bool GridCv::serves(float h) const {
  return suits_ && plan_grid_cv_cells(range_, fit_.problem.kernel.kind, h, counted_, tolerance_) > 0;
}

Result GridCv::score(float h, double* score, bool* served, char* why, bool* deferred) {
  *served = false;
  if (deferred) *deferred = false;
  if (!suits_) {
    if (why) format_text(why, kReasonSize, "exact: the sample does not suit the grid");
    return {};
  }
  // The plan decides whether a grid scores h, and on how many cells: 0, the caller runs exactly.
  const int64_t cells = plan_grid_cv_cells(range_, fit_.problem.kernel.kind, h, counted_, tolerance_, why);
  if (cells == 0) return {};
  int level = 0;
  while ((int64_t(1) << level) < cells) ++level;
  if (!sorted_)
    if (const Result r = sort_and_bin(); r.status != Status::Ok) return r;
  *served = true;
  h_ = h;

  const Problem& p = fit_.problem;
  const int64_t width = p.values.cols, nodes = cells + 1, channels = 1 + width;
  const bool linear = fit_.estimator == Estimator::LocalLinear;
  const int64_t stride = (linear ? 3 : 1) + width * (linear ? 2 : 1);
  const Axis x = cv_axis(lo_, range_, cells, p.kernel.kind, h);
  // The bins at this level: the sorted grid's, or the level's halved copy (sort_and_bin).
  const int64_t fine_nodes = (int64_t(1) << finest_) + 1;
  const double* bins = level < finest_ ? levels_.get() + channels * level_offset(level) : bins_.get();
  const int64_t bin_stride = level < finest_ ? nodes : fine_nodes;
  Scratch<double> moments, slopes;
  if (const Status st = cv_moments(p.kernel.kind, h, x, bins, bin_stride, width, linear, &moments, &slopes);
      st != Status::Ok)
    return {st};
  const double* at_node = moments.get() + x.L * stride;  // the sample's nodes: L … L + cells of the output

  const bool weighted = fit_.observation_weights;
  const int shift = finest_ - level;
  const double served_above = served_share(x.fft, linear) * total_;
  if (exclude_ > 0) {  // blocked CV: every point on the grid, or h exactly
    Scratch<double> band(3 + 2 * width);
    if (!band.ok()) return {Status::OutOfMemory};
    const BandPass b{at_node, slopes.get(), stride,   cells,        width,         shift,
                     finest_, start_.get(), counted_, x_.get(),     y_.get(),      weighted ? w_.get() : nullptr,
                     lo_,     range_,       exclude_, served_above, p.kernel.kind, h,
                     linear,  band.get()};
    double sum = 0;
    *served = band_residuals(b, &sum);
    if (*served)
      *score = std::isnan(sum) || !(total_ > 0) ? std::numeric_limits<double>::infinity() : sum / total_;
    else if (why)
      format_text(why, kReasonSize, "exact: blocked CV's band leaves a point too little of the grid's weight");
    return {};
  }
  // The points, cell by cell (a cell of this grid is a run of the sorted grid's); those the grid cannot serve
  // are fitted exactly, kExactBatch at a time.
  CellKernel* kernel = simd::keep_out_of_line(
      linear ? (weighted ? cell_kernel<true, true>(width, aicc_) : cell_kernel<true, false>(width, aicc_))
             : (weighted ? cell_kernel<false, true>(width, aicc_) : cell_kernel<false, false>(width, aicc_)));
  const int64_t* start = start_.get();
  double sum = 0, trace = 0;
  double* traced = aicc_ ? &trace : nullptr;
  if (aicc_) deferred = nullptr;  // AICc's sums have no lower bound: every point is scored
  int64_t pending[kExactBatch], waiting = 0;
  CellPass c{nullptr, nullptr,      lo_,    double(cells) / range_,    0, nullptr, nullptr, nullptr, 0,
             width,   served_above, &trace, OwnShare(p.kernel.kind, x)};
  for (int64_t e = 0; e < cells; ++e) {
    c.at = at_node + e * stride;
    c.slope = slopes.get() + e * stride;
    c.e = double(e);
    for (int64_t k = start[e << shift], end = start[(e + 1) << shift]; k < end;) {
      c.x = x_.get() + k;
      c.y = y_.get() + k * width;
      c.w = weighted ? w_.get() + k : nullptr;
      c.count = end - k;
      k += kernel(c, &sum);
      if (k == end) break;
      ++k;  // a point the grid cannot serve
      if (deferred) {
        *deferred = true;
        continue;
      }
      pending[waiting++] = k - 1;
      if (waiting == kExactBatch) {
        if (const Result r = exact_rows_into(pending, waiting, &sum, traced); r.status != Status::Ok) return r;
        waiting = 0;
      }
    }
  }
  if (const Result r = exact_rows_into(pending, waiting, &sum, traced); r.status != Status::Ok) return r;
  if (std::isnan(sum) || !(total_ > 0)) {
    *score = std::numeric_limits<double>::infinity();
  } else if (aicc_) {  // summarize_fit's sums: the residuals weighted by ω scaled to a mean of 1
    FitSummary s;
    s.rss = sum * double(counted_) / total_;
    s.trace = trace;
    s.observations = counted_;
    *score = aicc(s, width);
  } else {
    *score = sum / total_;
  }
  return {};
}

}  // namespace ka
