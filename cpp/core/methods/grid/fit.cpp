// Binned local-polynomial regression (grid.h): grid_local_fit lays the grid over the sample's box, bins and
// convolves it (binning.h, convolution.h), serves each query from the interpolated moments, and hands the rows the
// grid cannot serve to the far rules (far.h) or the exact engine (exact_rows.h).
#include "methods/grid/grid.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/scratch.h"
#include "base/simd.h"
#include "engine/local_solve.h"
#include "methods/grid/binning.h"
#include "methods/grid/convolution.h"
#include "methods/grid/exact_rows.h"
#include "methods/grid/far.h"
#include "methods/grid/fit_parts.h"
#include "methods/grid/plan.h"
#include "methods/grid/sorted_keys.h"

namespace ka {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Beyond the data, local-linear extrapolates: its slope, read from moments the binning and the interpolation
// between nodes perturb by O((spacing/h)²), is multiplied by the distance to the keys' centre of weight. Per axis,
// (1 + |ū|)/var(u) over the row's weights measures that amplification (u in bandwidths; ū = S₁/S₀, var(u) =
// S₂/S₀ − ū²): about 1 in the middle of the data, about 5 at its edge (a Gaussian's half window), and growing fast
// beyond it. Rows outside the box above kEdgeAmplification, a little above the edge's, run exactly: outside, the grid
// serves no row worse conditioned than those it serves inside. Measured (Gaussian, tolerance 1e-3; grid_test.cpp,
// grid.test.mjs): served at 0.14 h and 0.49 h out (amplification 5.7 and 7.9), rows erred 1e-3 and 1.9e-3 of range(y)
// on 6,000 points, against 4e-4 for rows inside at the edge. The Laplacian's rows too (their moments shifted from the
// box: the slope's error times the distance, 1.5e-3 of range(y) 6.7 h out on those points).
constexpr double kEdgeAmplification = 5.5;
double edge_amplification(const double* S, int64_t dims, double s0) {
  double worst = 0;
  for (int64_t d = 0; d < dims; ++d) {
    const double mean = S[1 + d] / s0, second = S[dims == 2 ? 3 + 2 * d : 2] / s0;  // kPowers: u_d, then u_d²
    const double var = second - mean * mean;
    worst = std::max(worst, var > 0 ? (1 + std::fabs(mean)) / var : std::numeric_limits<double>::infinity());
  }
  return worst;
}

// Moments Σ w·u₁ᵃ·u₂ᵇ (`count` of them, in kPowers order; 1-D: b = 0) about a point c, turned into those about
// q = c − δ·h: the offsets become u + δ, so each is Σ over i ≤ a, j ≤ b of C(a, i)·C(b, j)·δ₁^(a−i)·δ₂^(b−j) times the
// moment of power (i, j). Powers are at most 2, so the binomial coefficients are 1 or 2.
// dᵉ for e = 0, 1, 2 (the moments' degrees), by products rather than std::pow, which links libm's pow (issue 21).
double square_at_most(double d, int e) { return e == 0 ? 1 : e == 1 ? d : d * d; }

void shift_moments(double* v, int64_t count, int64_t dims, const double* delta) {
  const auto power = [&](int64_t k) { return dims == 2 ? kPowers[k] : Power{int(k), 0}; };
  const auto index = [&](int a, int b) {
    for (int64_t k = 0; k < count; ++k)
      if (power(k).a == a && power(k).b == b) return k;
    return int64_t(-1);
  };
  double old[6];
  std::copy(v, v + count, old);
  for (int64_t k = 0; k < count; ++k) {
    const Power pw = power(k);
    double acc = 0;
    for (int i = 0; i <= pw.a; ++i)
      for (int j = 0; j <= pw.b; ++j) {
        const double c = (pw.a == 2 && i == 1 ? 2 : 1) * (pw.b == 2 && j == 1 ? 2 : 1);
        acc += c * square_at_most(delta[0], pw.a - i) * square_at_most(delta[1], pw.b - j) * old[index(i, j)];
      }
    v[k] = acc;
  }
}

}  // namespace

Status check_grid_fit(const Fit& f, int64_t nodes, const FitOut& out) {
  const Problem& p = f.problem;
  if (const Status st = check(p, true); st != Status::Ok) return st;
  const int64_t n = p.keys.rows, I = p.queries.rows, width = p.values.cols, dims = p.queries.cols;
  const Masks& m = p.masks;
  if (out.self_weight && I != n) return Status::BadShape;
  if (dims > kMaxGridDims || p.heads != 1 || p.kernel.kind == KernelKind::Softmax ||
      p.kernel.kind == KernelKind::Cauchy || m.causal || m.key_padding || m.general || m.query_groups || m.band_first ||
      nodes < 2 || nodes > kMaxGridNodes || (dims == 2 && nodes * nodes > kMaxGridNodes))
    return Status::BadArgument;
  if (out.mean.rows != I || out.mean.cols != width || (I > 0 && !out.mean.data)) return Status::BadShape;
  const float* omega = f.observation_weights;
  for (int64_t j = 0; j < n; ++j) {
    const double w = omega ? double(omega[j]) : 1.0;
    if (!(w >= 0) || !std::isfinite(w)) return Status::BadArgument;
  }
  return Status::Ok;
}

bool key_ranges(ConstMatrix keys, float* lo, float* hi) {
  const int64_t n = keys.rows;
  for (int64_t d = 0; d < keys.cols; ++d) {
    lo[d] = std::numeric_limits<float>::infinity();
    hi[d] = -lo[d];
    bool finite = true;
    const auto range = simd::keep_out_of_line(&column_range);
    for (int64_t j = 0; j < n; j += kBlock) range(keys, d, j, std::min(n, j + kBlock), &lo[d], &hi[d], &finite);
    if (!finite) return false;
  }
  return true;
}

void lay_axes(const Fit& f, int64_t nodes, const float* lo, const float* hi, Axis* axis) {
  const Problem& p = f.problem;
  const int64_t dims = p.queries.cols;
  for (int64_t d = 0; d < dims; ++d) {
    Axis& a = axis[d];
    a = Axis{};
    a.lo = lo[d];
    a.hi = hi[d];
    a.h = p.kernel.bandwidth[d];
    a.nodes = nodes;
    a.step = a.hi > a.lo ? (a.hi - a.lo) / double(nodes - 1) : a.h;
    const double reach = reach_of(p.kernel.kind);
    // Taps per side, compared in double before converting (h/step can exceed any integer).
    const double span = std::ceil(reach * a.h / a.step);
    a.L = reach > 0 && span < double(nodes) ? int64_t(span) : nodes;
    a.capped = double(a.L) != span;  // in double: span may exceed any integer
    a.E = nodes + 2 * a.L;
  }
  // Which passes run by FFT: axis 1 has G₂ rows (in 1-D, two lines that share taps share a transform), axis 2 E₁.
  if (dims == 2) {
    axis[0].fft = fft_pays(double(axis[1].nodes), double(axis[0].nodes), double(axis[0].L));
    axis[1].fft = fft_pays(double(axis[0].E), double(axis[1].nodes), double(axis[1].L));
  } else {
    axis[0].fft = fft_pays(2, double(axis[0].nodes), double(axis[0].L));
  }
}

void sample_totals(const Fit& f, double* total, double* total_sq) {
  const float* omega = f.observation_weights;
  *total = *total_sq = 0;
  if (omega)
    for (int64_t j = 0; j < f.problem.keys.rows; ++j) {
      *total += double(omega[j]);
      *total_sq += double(omega[j]) * double(omega[j]);
    }
  else
    *total = *total_sq = double(f.problem.keys.rows);
}

int64_t moment_stride(const Fit& f) {
  const bool linear = f.estimator == Estimator::LocalLinear;
  const int64_t dims = f.problem.queries.cols;
  return 2 * (linear ? (dims == 2 ? 6 : 3) : 1) + f.problem.values.cols * (linear ? 1 + dims : 1);
}

Result grid_local_fit(const Fit& f, int64_t nodes, const FitOut& out, double* error_estimate, int64_t* exact_rows_out,
                      int64_t* range_rows_out) {
  if (range_rows_out) *range_rows_out = 0;
  if (const Status st = check_grid_fit(f, nodes, out); st != Status::Ok) return {st};
  const Problem& p = f.problem;
  const int64_t width = p.values.cols, dims = p.queries.cols;
  const bool linear = f.estimator == Estimator::LocalLinear;
  // The axes over the sample's bounding box.
  float lo[kMaxGridDims], hi[kMaxGridDims];
  if (!key_ranges(p.keys, lo, hi)) {  // NaN or infinite keys: the exact engine knows what they give
    if (error_estimate) *error_estimate = 0;
    return local_fit(f, out);
  }
  Axis axis[kMaxGridDims];
  lay_axes(f, nodes, lo, hi, axis);
  double total = 0, total_sq = 0;  // Σω, Σω²: the scales of the moments' FFT rounding
  sample_totals(f, &total, &total_sq);
  const Axis& x1 = axis[0];
  const Axis x2 = dims == 2 ? axis[1] : Axis{};

  // The moments, node-major: Σ K·ω·uᵏ (S), Σ K²·ω²·uᵏ (B) for the powers up to degree 2 (local-linear) or 0, and
  // Σ K·ω·y·uᵏ (T) for each column up to degree 1 or 0 (convolve_moments).
  const int64_t stride = moment_stride(f);
  const int64_t cells = x1.nodes * x2.nodes, out_cells = x1.E * x2.E;
  Scratch<double> count(cells), count_sq(cells), sums(cells * width);
  Scratch<double> moments(out_cells * stride);
  if (!count.ok() || !count_sq.ok() || !sums.ok() || !moments.ok()) return {Status::OutOfMemory};
  std::fill(count.get(), count.get() + cells, 0.0);
  std::fill(count_sq.get(), count_sq.get() + cells, 0.0);
  // The Σ K²·ω² moments serve only the standard errors and effective keys (not a CV score): skipped otherwise.
  const bool squares = out.sum_sq_weights || out.effective_keys;
  if (!squares) std::fill(moments.get(), moments.get() + out_cells * stride, 0.0);
  std::fill(sums.get(), sums.get() + cells * width, 0.0);
  bin_sample(f, axis, dims, squares, count.get(), count_sq.get(), sums.get());
  if (const Status st = convolve_moments(p.kernel.kind, axis, dims, width, linear, squares, count.get(), count_sq.get(),
                                         sums.get(), moments.get());
      st != Status::Ok)
    return {st};
  return serve_grid(f, axis, moments.get(), total, total_sq, squares, out, error_estimate, exact_rows_out,
                    range_rows_out);
}

Result serve_grid(const Fit& f, const Axis* axis, const double* mom, double total, double total_sq, bool squares,
                  const FitOut& out, double* error_estimate, int64_t* exact_rows_out, int64_t* range_rows_out,
                  SortedKeys* sorted) {
  if (range_rows_out) *range_rows_out = 0;
  const Problem& p = f.problem;
  const int64_t n = p.keys.rows, I = p.queries.rows, width = p.values.cols, dims = p.queries.cols;
  const Masks& m = p.masks;
  const bool linear = f.estimator == Estimator::LocalLinear;
  const int64_t p_cols = linear ? 1 + dims : 1;
  const float* omega = f.observation_weights;
  const auto weight_of = [&](int64_t j) { return omega ? double(omega[j]) : 1.0; };
  const int64_t powers_2 = linear ? (dims == 2 ? 6 : 3) : 1;
  const int64_t powers_1 = linear ? 1 + dims : 1;
  const int64_t stride = 2 * powers_2 + width * powers_1;
  const Axis& x1 = axis[0];
  const Axis x2 = dims == 2 ? axis[1] : Axis{};

  // Each query: interpolated moments, leave-one-out correction, the same solve as the exact fit.
  // The moment of the sum of two powers (for A and B): powers of degree 1 are entries 1 … dims of kPowers.
  const auto product_power = [&](int64_t r, int64_t c) -> int64_t {
    if (r == 0 || c == 0) return r + c;
    if (dims == 1) return 2;
    return r == c ? (r == 1 ? 3 : 5) : 4;
  };
  Scratch<int64_t> exact(I);
  Scratch<double> a(p_cols * p_cols), l(p_cols * p_cols), g(p_cols), interp(stride);
  if (!exact.ok() || !a.ok() || !l.ok() || !g.ok() || !interp.ok()) return {Status::OutOfMemory};
  int64_t exact_count = 0;
  // By FFT, the Σ K²·ω² moments round relative to Σω² (their taps peak at 1), as S's do relative to the total.
  const bool by_fft = x1.fft || x2.fft;
  const double share = served_share(by_fft, linear);
  // Rows outside the sample's box that the grid cannot serve: the far rules after the loop, not an exact pass.
  Scratch<int64_t> far(I);
  if (!far.ok()) return {Status::OutOfMemory};
  int64_t far_count = 0;
  const bool laplacian = p.kernel.kind == KernelKind::Laplacian, compact = is_compact(p.kernel.kind);
  for (int64_t i = 0; i < I; ++i) {
    // The output nodes reach L taps (the kernel's reach) beyond the box on each side, so a query within reach of the
    // data reads its moments there, inside or outside the box alike. The Laplacian reads them at the nearest point c
    // of the box instead: beyond the data, every key's weight along that axis carries the same factor e^{−|q − c|/h},
    // which cancels from the fit, so the moments about q are those about c with the offsets shifted by δ = (c − q)/h
    // (exact at any distance).
    int64_t e[kMaxGridDims] = {0, 0};
    double frac[kMaxGridDims] = {0, 0}, delta[kMaxGridDims] = {0, 0};
    bool inside = true, on_grid = true, finite = true, kink = false;
    for (int64_t d = 0; d < dims; ++d) {
      const double at = p.queries.row(i)[d];
      finite = finite && std::isfinite(at);
      inside = inside && at >= axis[d].lo && at <= axis[d].hi;
      // A compact kernel more than h beyond the box reaches no key, though binning spread the end keys' weight to
      // nodes up to one spacing further out: the empty row (far rules), never the grid.
      const double out_by = std::max(axis[d].lo - at, at - axis[d].hi);
      on_grid = on_grid && !(compact && out_by > axis[d].h);
      // Within 2 spacings of that edge, the keys in reach all sit on the kernel's kink at |u| = 1, where binning
      // and interpolation err to first order in spacing/h (Epanechnikov, 6,000 points, tolerance 1e-3: 3e-3 of
      // range(y) 0.9–0.95 h out, below 8e-4 up to 0.8 h): those rows run exactly (accuracy rule).
      if (compact && out_by > axis[d].h - 2 * axis[d].step) kink = true;
      const double read = laplacian ? std::clamp(at, axis[d].lo, axis[d].hi) : at;
      delta[d] = (read - at) / axis[d].h;
      const double t = (read - axis[d].lo) / axis[d].step + double(axis[d].L);
      on_grid = on_grid && t >= 0 && t <= double(axis[d].E - 1);
      e[d] = on_grid ? std::min<int64_t>(axis[d].E - 2, int64_t(std::floor(t))) : 0;
      frac[d] = t - double(e[d]);
      // Capped taps reach the whole box only from output nodes nodes − 1 … 2L; beyond, keys in reach are missing.
      on_grid = on_grid && (!axis[d].capped || (e[d] >= axis[d].nodes - 1 && e[d] + 1 <= 2 * axis[d].L));
    }
    if (!finite || !on_grid) {  // NaN or infinite queries: the exact engine decides what they give
      (finite && !inside ? far : exact).get()[(finite && !inside ? far_count : exact_count)++] = i;
      continue;
    }
    if (kink) {
      exact.get()[exact_count++] = i;
      continue;
    }
    double* v = interp.get();
    std::fill(v, v + stride, 0.0);
    for (int c2 = 0; c2 < (dims == 2 ? 2 : 1); ++c2)
      for (int c1 = 0; c1 < 2; ++c1) {
        const double share = (c1 ? frac[0] : 1 - frac[0]) * (dims == 2 ? (c2 ? frac[1] : 1 - frac[1]) : 1.0);
        const double* at = mom + ((e[0] + c1) + x1.E * (e[1] + c2)) * stride;
        for (int64_t k = 0; k < stride; ++k) v[k] += share * at[k];
      }
    const double* S = v;
    double* B = v + powers_2;
    double* T = v + 2 * powers_2;
    if (delta[0] != 0 || delta[1] != 0) {
      shift_moments(v, powers_2, dims, delta);
      shift_moments(B, powers_2, dims, delta);
      for (int64_t col = 0; col < width; ++col) shift_moments(T + col * powers_1, powers_1, dims, delta);
    }
    if (m.leave_one_out) {  // the point's own weight K(0)·ω_i = ω_i, at offset u = 0: degree 0 only
      const double w = weight_of(i);
      v[0] -= w;
      B[0] -= w * w;
      for (int64_t col = 0; col < width; ++col) T[col * powers_1] -= w * double(p.values.row(i)[col]);
    }
    const double s0 = S[0], b0 = B[0];
    if (!(s0 > share * total) || (by_fft && squares && !(b0 > share * total_sq))) {
      (inside ? exact : far).get()[(inside ? exact_count : far_count)++] = i;
      continue;
    }
    if (linear && !inside && edge_amplification(S, dims, s0) > kEdgeAmplification) {
      exact.get()[exact_count++] = i;  // an extrapolation that would amplify the grid's errors (accuracy rule)
      continue;
    }
    for (int64_t r = 0; r < p_cols; ++r)
      for (int64_t c = 0; c < p_cols; ++c) a.get()[r * p_cols + c] = S[product_power(r, c)];
    if (p_cols == 1)
      g.get()[0] = 1 / S[0];  // Nadaraya–Watson, inline: once per query, the hot path of grid CV
    else if (first_column_of_inverse(a.get(), p_cols, l.get(), g.get()) && out.guarded)
      out.guarded[i] = 1;
    const double* gg = g.get();
    float* mean = out.mean.row(i);
    for (int64_t col = 0; col < width; ++col) {
      double est = 0;
      for (int64_t r = 0; r < p_cols; ++r) est += gg[r] * T[col * powers_1 + r];
      mean[col] = float(est);
    }
    if (out.sum_sq_weights) {
      double sum_sq = 0;
      for (int64_t r = 0; r < p_cols; ++r)
        for (int64_t c = 0; c < p_cols; ++c) sum_sq += gg[r] * gg[c] * B[product_power(r, c)];
      out.sum_sq_weights[i] = sum_sq > 0 ? sum_sq : b0 / (s0 * s0);  // as in local_fit (local_fit.h)
    }
    if (out.effective_keys) out.effective_keys[i] = s0 * s0 / b0;
    if (out.log_denominator) out.log_denominator[i] = std::log(s0) - std::fabs(delta[0]) - std::fabs(delta[1]);
    // ℓ_i(x_i) = ω_i K(0) gᵀ z_i with z_i = [1, 0, …]: query i is point i, at its own position.
    if (out.self_weight) out.self_weight[i] = m.leave_one_out ? 0.0 : weight_of(i) * gg[0];
  }
  // Rows outside the box the grid does not serve (beyond its output nodes, or with too little weight there): the
  // far rules (far.h), which hand back to the exact rows those they do not serve either.
  int64_t empty_row = -1, range_count = 0;  // the first far row that is empty under EmptyPolicy::Error
  if (const Result r = far_rows(f, axis, dims, total, far.get(), far_count, out, exact.get(), &exact_count, &empty_row,
                                &range_count, sorted);
      r.status != Status::Ok)
    return r;
  if (range_rows_out) *range_rows_out = range_count;
  if (exact_rows_out) *exact_rows_out = exact_count;
  // The exact rows over the keys in each one's reach, where a model keeps its sample sorted (no mask to index).
  SortedKeys* by_x = sorted && !m.any() ? sorted : nullptr;
  const auto exact_of = [&](const int64_t* rows, int64_t count, const FitOut& into) {
    return by_x ? by_x->exact_rows(f, rows, count, into) : exact_rows(f, rows, count, into);
  };
  if (exact_count) {
    const Result r = exact_of(exact.get(), exact_count, out);
    if (r.status == Status::EmptyRow && empty_row >= 0) return {Status::EmptyRow, std::min(r.row, empty_row), 0};
    if (r.status != Status::Ok) return r;
    if (out.self_weight)  // the exact fit of a single row has no smoother diagonal: such rows count as empty
      for (int64_t k = 0; k < exact_count; ++k) {
        out.self_weight[exact.get()[k]] = kNaN;
        if (out.sum_sq_weights) out.sum_sq_weights[exact.get()[k]] = kNaN;
      }
  }
  if (empty_row >= 0) return {Status::EmptyRow, empty_row, 0};
  if (error_estimate) {
    // Exact fits of up to 64 queries spread through them, against what the grid gave.
    const int64_t probes = std::min<int64_t>(64, I);
    Scratch<int64_t> rows(probes);
    Scratch<float> keep(probes * width);
    if (!rows.ok() || !keep.ok()) return {Status::OutOfMemory};
    for (int64_t r = 0; r < probes; ++r) {
      rows.get()[r] = r * I / probes;
      std::copy(out.mean.row(rows.get()[r]), out.mean.row(rows.get()[r]) + width, keep.get() + r * width);
    }
    double y_lo = std::numeric_limits<double>::infinity(), y_hi = -y_lo;
    if (by_x && by_x->prepare(f) == Status::Ok) {
      y_lo = by_x->y_lo();
      y_hi = by_x->y_hi();
    } else {
      for (int64_t j = 0; j < n; ++j)
        for (int64_t col = 0; col < width; ++col) {
          y_lo = std::min(y_lo, double(p.values.row(j)[col]));
          y_hi = std::max(y_hi, double(p.values.row(j)[col]));
        }
    }
    const Result r = exact_of(rows.get(), probes, FitOut{out.mean});
    if (r.status != Status::Ok) return r;
    double worst = 0;
    for (int64_t k = 0; k < probes; ++k)
      for (int64_t col = 0; col < width; ++col) {
        float* cell = out.mean.row(rows.get()[k]) + col;
        const double d = std::fabs(double(*cell) - double(keep.get()[k * width + col]));
        if (d > worst || std::isnan(d)) worst = std::isnan(d) ? worst : d;
        *cell = keep.get()[k * width + col];  // the grid's answer stays the result
      }
    *error_estimate = I ? worst / (y_hi > y_lo ? y_hi - y_lo : 1.0) : 0.0;
  }
  return {};
}

}  // namespace ka
