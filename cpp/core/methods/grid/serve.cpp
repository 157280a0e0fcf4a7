// Serving the queries of a binned local-polynomial fit (grid.h) from the grid's moments: each query's moments
// interpolated between the output nodes around it, the same solve as the exact fit, and the rows the grid cannot
// serve handed to the far rules (far.h) or the exact engine (exact_rows.h).
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/scratch.h"
#include "engine/local_solve.h"
#include "engine/online_softmax.h"
#include "methods/grid/convolution.h"
#include "methods/grid/exact_rows.h"
#include "methods/grid/far.h"
#include "methods/grid/fit_parts.h"
#include "methods/grid/plan.h"
#include "methods/grid/query.h"
#include "methods/grid/sorted_keys.h"

namespace ka {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Beyond the data, local-linear extrapolates: its slope, read from moments the binning and the interpolation
// between nodes perturb by O((spacing/h)²), is multiplied by the distance to the keys' centre of weight. Per axis,
// (1 + |ū|)/var(u) over the row's weights measures that amplification (u in bandwidths; ū = S₁/S₀, var(u) =
// S₂/S₀ − ū²): about 1 in the middle of the data, about 5 at its edge (a Gaussian's half window), and growing fast
// beyond it. Rows outside the box above kEdgeAmplification, a little above the edge's, run exactly (a Gaussian's by
// the far rules, far.cpp and far2d.cpp): outside, the grid serves no row worse conditioned than those it serves inside.
// Measured (Gaussian, tolerance 1e-3; grid_test.cpp, grid.test.mjs): served at 0.14 h and 0.49 h out (amplification 5.7
// and 7.9), rows erred 1e-3 and 1.9e-3 of range(y) on 6,000 points, against 4e-4 for rows inside at the edge. The
// Laplacian's rows too (their moments shifted from the box: the slope's error times the distance, 1.5e-3 of
// range(y) 6.7 h out on those points).
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

// moments_at (query.h) of a 2-D local-linear query inside the box (δ = 0), moments without B (S and T, `stride`
// entries): what serve_grid's hot path reads, the same sums in the same order.
void planar_moments_at(const GridQuery& g, const double* mom, const Axis& x1, const Axis& x2, int64_t stride,
                       double* v) {
  const double f1 = g.frac[0], f2 = g.frac[1];
  const double w00 = (1 - f1) * (1 - f2), w10 = f1 * (1 - f2), w01 = (1 - f1) * f2, w11 = f1 * f2;
  const double* a = mom + held_node(x1, x2, g.e[0], g.e[1]) * stride;  // (e₁, e₂); b (e₁ + 1, e₂), c (e₁, e₂ + 1)
  const double *b = a + x2.held_nodes() * stride, *c = a + stride, *d = b + stride;
  const auto at = [&](int64_t k) { v[k] = w00 * a[k] + w10 * b[k] + w01 * c[k] + w11 * d[k]; };
  for (int64_t k = 0; k < stride; ++k) at(k);
}

// The hot path of a 2-D CV score on the grid (planar rows, leave-one-out, the Gaussian, one column of y, no
// observation weights): row q of the sample, whose own value is y, served as locate, planar_moments_at, own_terms and
// planar_linear_value serve it, the same arithmetic without their general cases (the Laplacian's reading point, a
// compact kernel's kink, a row's weight, B's and the odd powers' shares, which are 0); false where the row needs
// them or the guard (the general path then serves it). Natively the default 2-D fit's search of 10⁶ points 3.87 →
// 3.23 s of CPU (its scores each pass over every point: the general path had been half of a wide score's time).
bool planar_loo_row(const float* q, const Axis* axis, const double* mom, int64_t stride, const OwnShare* own, double y,
                    double least, double* value) {
  GridQuery g;
  for (int64_t d = 0; d < 2; ++d) {
    const Axis& a = axis[d];
    const double at = q[d];
    if (!(at >= a.lo && at <= a.hi)) return false;  // NaN, or outside the box
    const double t = (at - a.lo) / a.step + double(a.L);
    if (!(t >= 0 && t <= double(a.E - 1))) return false;
    g.e[d] = std::min<int64_t>(a.E - 2, int64_t(std::floor(t)));
    g.frac[d] = t - double(g.e[d]);
    if (a.capped && !(g.e[d] >= a.nodes - 1 && g.e[d] + 1 <= 2 * a.L)) return false;
  }
  double v[9];
  planar_moments_at(g, mom, axis[0], axis[1], stride, v);
  // The own share, kPowers order: A₀(f₁)A₀(f₂), 0, 0, A₂(f₁)A₀(f₂), 0, A₀(f₁)A₂(f₂) (own_terms).
  const double a0 = own[0].s0(g.frac[0]), a2 = own[0].s2(g.frac[0]), b0 = own[1].s0(g.frac[1]),
               b2 = own[1].s2(g.frac[1]);
  const double s0 = a0 * b0;
  v[0] -= s0;
  v[3] -= a2 * b0;
  v[5] -= a0 * b2;
  v[6] -= y * s0;
  return v[0] > least && planar_linear_value(v, v + 6, value);
}

// moments_at of a 1-D query read where it lies (δ = 0): the same sums in the same order, without the general loops
// (half of a 10⁶-point model's summary at its sample went to reading moments).
void line_moments_at(const GridQuery& g, const double* mom, int64_t stride, double* v) {
  const double f = g.frac[0], w0 = 1 - f;
  const double* a = mom + g.e[0] * stride;
  const double* b = a + stride;
  for (int64_t k = 0; k < stride; ++k) v[k] = w0 * a[k] + f * b[k];
}

// The exact rows over the keys in each one's reach, where a model keeps its sample sorted (`by_x`, null where there
// is none or a mask to index), else over every key.
Result exact_of(const Fit& f, SortedKeys* by_x, const int64_t* rows, int64_t count, const FitOut& into) {
  return by_x ? by_x->exact_rows(f, rows, count, into) : exact_rows(f, rows, count, into);
}

// The rows the grid loop left over: the far rules (far.h), which hand back to the exact rows those they do not
// serve either, then the exact rows; EmptyRow names the first empty row of either.
Result finish_rows(const Fit& f, const Axis* axis, double total, const int64_t* far, int64_t far_count, int64_t* exact,
                   int64_t exact_count, const FitOut& out, int64_t* exact_rows_out, int64_t* range_rows_out,
                   SortedKeys* sorted, SortedKeys* by_x, FarTables* tables) {
  const int64_t dims = f.problem.queries.cols;
  int64_t empty_row = -1, range_count = 0;  // the first far row that is empty under EmptyPolicy::Error
  if (const Result r = far_rows(f, axis, dims, total, far, far_count, out, exact, &exact_count, &empty_row,
                                &range_count, sorted, tables);
      r.status != Status::Ok)
    return r;
  if (range_rows_out) *range_rows_out = range_count;
  if (exact_rows_out) *exact_rows_out = exact_count;
  if (exact_count) {
    const Result r = exact_of(f, by_x, exact, exact_count, out);
    if (r.status == Status::EmptyRow && empty_row >= 0) return {Status::EmptyRow, std::min(r.row, empty_row), 0};
    if (r.status != Status::Ok) return r;
    if (out.self_weight)  // the exact fit of a single row has no smoother diagonal: such rows count as empty
      for (int64_t k = 0; k < exact_count; ++k) {
        out.self_weight[exact[k]] = kNaN;
        if (out.sum_sq_weights) out.sum_sq_weights[exact[k]] = kNaN;
      }
  }
  if (empty_row >= 0) return {Status::EmptyRow, empty_row, 0};
  return {};
}

// The measured error estimate: exact fits of up to 64 queries spread through them, against what the grid gave,
// relative to range(y); the grid's answers stay the result.
Result estimate_error(const Fit& f, const FitOut& out, SortedKeys* by_x, double* error_estimate) {
  const Problem& p = f.problem;
  const int64_t n = p.keys.rows, I = p.queries.rows, width = p.values.cols;
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
  const Result r = by_x ? by_x->exact_rows_together(f, rows.get(), probes, FitOut{out.mean})
                        : exact_rows(f, rows.get(), probes, FitOut{out.mean});
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
  return {};
}

}  // namespace

Result serve_grid(const Fit& f, const Axis* axis, const double* mom, double total, double total_sq, bool squares,
                  const FitOut& out, double* error_estimate, int64_t* exact_rows_out, int64_t* range_rows_out,
                  SortedKeys* sorted, FarTables* tables) {
  if (range_rows_out) *range_rows_out = 0;
  const Problem& p = f.problem;
  const int64_t I = p.queries.rows, width = p.values.cols, dims = p.queries.cols;
  const Masks& m = p.masks;
  const bool linear = f.estimator == Estimator::LocalLinear;
  const int64_t p_cols = linear ? 1 + dims : 1;
  const float* omega = f.observation_weights;
  const auto weight_of = [&](int64_t j) { return omega ? double(omega[j]) : 1.0; };
  const auto own_key = [&](int64_t i) { return f.query_keys ? f.query_keys[i] : i; };  // query i's own observation
  const NodeMoments layout(linear, dims, width, squares);
  const int64_t powers_2 = layout.p2, powers_1 = layout.p1, stride = layout.stride();
  const Axis& x1 = axis[0];
  const Axis x2 = dims == 2 ? axis[1] : Axis{};

  // Each query: interpolated moments, leave-one-out correction, the same solve as the exact fit. `guarded` 1 only where
  // a guard acts (here, the far rules' or the exact rows'), 0 on every other row, as local_fit writes it.
  if (out.guarded) std::fill(out.guarded, out.guarded + I, uint8_t(0));
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
  const bool gaussian = p.kernel.kind == KernelKind::Gaussian;
  // A 2-D local-linear row outside the box is an extrapolation the grid serves only within about 0.1 h of the edge
  // (kEdgeAmplification: 5.7 at 0.14 h out): where a model keeps far tables for the rows it asks for (means alone, no
  // mask: far2d.h), every such row reads them, exact to the tolerance at any distance, without reading the grid's
  // moments first (measured natively at 10⁶ points, h = 0.02: a 100 × 100 lattice padded 10 % took 1.65 times the
  // lattice over the data with the far rows' work left out, the moments read for rows then handed over).
  const bool tables_2d = dims == 2 && linear && gaussian && sorted && tables && !m.any() && !out.sum_sq_weights &&
                         !out.effective_keys && !out.log_denominator;
  // 2-D local-linear rows asking for their means alone: S and T read without B, solved in closed form where the guard
  // would not act (planar_linear_value).
  const bool planar = dims == 2 && linear && !squares && !out.sum_sq_weights && !out.effective_keys &&
                      !out.log_denominator && !out.self_weight;
  OwnShare own_share[kMaxGridDims];
  for (int64_t d = 0; d < dims; ++d) own_share[d] = OwnShare(p.kernel.kind, axis[d]);
  const bool planar_loo = planar && gaussian && m.leave_one_out && width == 1 && !omega && !f.query_keys;
  for (int64_t i = 0; i < I; ++i) {
    double fast = 0;
    if (planar_loo && planar_loo_row(p.queries.row(i), axis, mom, stride, own_share, double(p.values.row(i)[0]),
                                     share * total, &fast)) {
      out.mean.row(i)[0] = mean_to_float(fast);
      continue;
    }
    const GridQuery at = locate(p.queries.row(i), axis, dims, laplacian, compact);
    const bool inside = at.inside;
    if (!at.finite || !at.on_grid) {  // NaN or infinite queries: the exact engine decides what they give
      (at.finite && !inside ? far : exact).get()[(at.finite && !inside ? far_count : exact_count)++] = i;
      continue;
    }
    if (at.kink) {
      exact.get()[exact_count++] = i;
      continue;
    }
    if (!inside && tables_2d) {  // the model's far tables: not the grid's moments, which would hand the row over anyway
      far.get()[far_count++] = i;
      continue;
    }
    double* v = interp.get();
    if (planar && at.delta[0] == 0 && at.delta[1] == 0)
      planar_moments_at(at, mom, x1, x2, stride, v);
    else if (dims == 1 && at.delta[0] == 0)
      line_moments_at(at, mom, stride, v);
    else
      moments_at(at, mom, axis, dims, layout, v);
    const double* S = v;
    double* B = squares ? v + layout.b() : nullptr;  // held only with `squares`
    double* T = v + layout.t(0);
    if (m.leave_one_out) {  // the point's own share of the moments, as binning and reading back gave it (own_terms)
      const int64_t own = own_key(i);
      const double w = weight_of(own);
      const OwnTerms self = own_terms(at, own_share, dims);
      for (int64_t k = 0; k < powers_2; ++k) v[k] -= w * self.s[k];
      for (int64_t k = 0; B && k < powers_2; ++k) B[k] -= w * w * self.b[k];
      for (int64_t col = 0; col < width; ++col) T[col * powers_1] -= w * double(p.values.row(own)[col]) * self.s[0];
    }
    const double s0 = S[0], b0 = B ? B[0] : 0.0;
    if (!(s0 > share * total) || (by_fft && squares && !(b0 > share * total_sq))) {
      (inside ? exact : far).get()[(inside ? exact_count : far_count)++] = i;
      continue;
    }
    if (linear && !inside && edge_amplification(S, dims, s0) > kEdgeAmplification) {
      // An extrapolation that would amplify the grid's errors (accuracy rule): exactly, or a 1-D Gaussian's by the
      // far rules (its far table, far.cpp), which fit it from the keys behind the end at any distance.
      (gaussian ? far : exact).get()[(gaussian ? far_count : exact_count)++] = i;
      continue;
    }
    if (planar) {  // the closed form where the guard would not act (the hot path of a 2-D CV score)
      int64_t col = 0;
      double value = 0;
      for (; col < width && planar_linear_value(S, T + col * powers_1, &value); ++col)
        out.mean.row(i)[col] = mean_to_float(value);
      if (col == width) continue;
    }
    if (p_cols == 1) {
      g.get()[0] = 1 / S[0];  // Nadaraya–Watson, inline: once per query, the hot path of grid CV
    } else if (!(dims == 1 && p_cols == 2 && linear_first_column(S, g.get()))) {  // 1-D local-linear's closed form
      for (int64_t r = 0; r < p_cols; ++r)
        for (int64_t c = 0; c < p_cols; ++c) a.get()[r * p_cols + c] = S[product_power(r, c, dims)];
      if (first_column_of_inverse(a.get(), p_cols, l.get(), g.get()) && out.guarded) out.guarded[i] = 1;
    }
    const double* gg = g.get();
    float* mean = out.mean.row(i);
    for (int64_t col = 0; col < width; ++col)
      mean[col] = mean_to_float(fitted_value(gg, T + col * powers_1, p_cols, 1));
    if (out.sum_sq_weights) {
      double sum_sq = 0;
      for (int64_t r = 0; r < p_cols; ++r)
        for (int64_t c = 0; c < p_cols; ++c) sum_sq += gg[r] * gg[c] * B[product_power(r, c, dims)];
      out.sum_sq_weights[i] = sum_sq > 0 ? sum_sq : b0 / (s0 * s0);  // as in local_fit (local_fit.h)
    }
    if (out.effective_keys) out.effective_keys[i] = s0 * s0 / b0;
    if (out.log_denominator) out.log_denominator[i] = std::log(s0) - std::fabs(at.delta[0]) - std::fabs(at.delta[1]);
    // ℓ_i(x_i) = ω_i K(0) gᵀ z_i with z_i = [1, 0, …]: query i is its own point (own_key), at its own position.
    if (out.self_weight) out.self_weight[i] = m.leave_one_out ? 0.0 : weight_of(own_key(i)) * gg[0];
  }
  // The exact rows over the keys in each one's reach, where a model keeps its sample sorted (no mask to index).
  SortedKeys* by_x = sorted && !m.any() ? sorted : nullptr;
  if (const Result r = finish_rows(f, axis, total, far.get(), far_count, exact.get(), exact_count, out, exact_rows_out,
                                   range_rows_out, sorted, by_x, tables);
      r.status != Status::Ok)
    return r;
  if (error_estimate) return estimate_error(f, out, by_x, error_estimate);
  return {};
}

}  // namespace ka
