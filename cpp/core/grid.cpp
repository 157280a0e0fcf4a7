#include "grid.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "local_solve.h"
#include "scratch.h"

namespace ka {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// How many bandwidths away a kernel's weight falls below 1e-13 of its peak (the taps stop there); 0 for Cauchy,
// whose tail never does (its taps span the whole grid).
double reach_of(KernelKind kind) {
  switch (kind) {
    case KernelKind::Gaussian: return 7.8;
    case KernelKind::Laplacian: return 30.0;
    case KernelKind::Cauchy: return 0.0;
    default: return 1.0;  // compact kernels
  }
}

// The weights the grid serves a row with must carry at least this share of the sample's total weight; below it
// (a query beyond the data, an isolated point in leave-one-out) the row is computed exactly.
constexpr double kServedShare = 1e-10;

// Runs local_fit on a subset of the queries (`rows`, `count` of them), writing their outputs into `out`. With
// leave-one-out, each row runs alone with its own key masked by key padding.
Result exact_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& out) {
  const Problem& p = f.problem;
  const int64_t dims = p.queries.cols, width = p.values.cols;
  const bool loo = p.masks.leave_one_out;
  Scratch<float> q(count * dims), mean(count * width);
  Scratch<double> sum_sq(count), eff(count), logden(count);
  Scratch<uint8_t> padding(loo ? p.keys.rows : 0);
  if (!q.ok() || !mean.ok() || !sum_sq.ok() || !eff.ok() || !logden.ok() || !padding.ok()) return {Status::OutOfMemory};
  for (int64_t r = 0; r < count; ++r) std::copy(p.queries.row(rows[r]), p.queries.row(rows[r]) + dims, q.get() + r * dims);
  Fit sub = f;
  sub.problem.queries = {q.get(), count, dims, dims};
  sub.problem.masks.leave_one_out = false;
  const auto run = [&](int64_t first, int64_t n) {
    Fit one = sub;
    one.problem.queries = {q.get() + first * dims, n, dims, dims};
    return local_fit(one, FitOut{Matrix{mean.get() + first * width, n, width, width}, sum_sq.get() + first,
                                 nullptr, eff.get() + first, logden.get() + first});
  };
  if (loo) {
    std::fill(padding.get(), padding.get() + p.keys.rows, uint8_t(0));
    sub.problem.masks.key_padding = padding.get();
    for (int64_t r = 0; r < count; ++r) {
      padding.get()[rows[r]] = 1;
      Result res = run(r, 1);
      padding.get()[rows[r]] = 0;
      if (res.status != Status::Ok) return {res.status, res.status == Status::EmptyRow ? rows[r] : -1, 0};
    }
  } else {
    const Result res = run(0, count);
    if (res.status != Status::Ok) return {res.status, res.row >= 0 ? rows[res.row] : -1, 0};
  }
  for (int64_t r = 0; r < count; ++r) {
    const int64_t i = rows[r];
    std::copy(mean.get() + r * width, mean.get() + (r + 1) * width, out.mean.row(i));
    if (out.sum_sq_weights) out.sum_sq_weights[i] = sum_sq.get()[r];
    if (out.effective_keys) out.effective_keys[i] = eff.get()[r];
    if (out.log_denominator) out.log_denominator[i] = logden.get()[r];
  }
  return {};
}

}  // namespace

int64_t grid_nodes(double range, double h, double tolerance) {
  if (!(h > 0) || !(tolerance > 0)) return 0;
  const double spacing = h * std::sqrt(12 * tolerance);
  const double nodes = std::ceil(range / spacing) + 1;
  if (!(nodes <= double(kMaxGridNodes))) return 0;
  return std::max<int64_t>(64, int64_t(nodes));
}

int64_t grid_nodes(ConstMatrix x, KernelKind kind, const float* h, double tolerance) {
  const int64_t dims = x.cols;
  if (!(tolerance > 0) || dims < 1 || dims > kMaxGridDims || x.rows < 2 || kind == KernelKind::Cauchy ||
      kind == KernelKind::Softmax || !h)
    return 0;
  int64_t nodes = 0;
  for (int64_t d = 0; d < dims; ++d) {
    float lo = x.row(0)[d], hi = lo;
    for (int64_t i = 1; i < x.rows; ++i) {
      lo = std::min(lo, x.row(i)[d]);
      hi = std::max(hi, x.row(i)[d]);
    }
    const int64_t axis = grid_nodes(double(hi) - double(lo), double(h[d]), tolerance);
    if (axis == 0) return 0;
    nodes = std::max(nodes, axis);
  }
  return dims == 2 && nodes * nodes > kMaxGridNodes ? 0 : nodes;
}

namespace {

// One axis of the grid: input nodes at lo + g·step (g < nodes), output nodes extended by the kernel's reach of L
// taps on each side (E = nodes + 2L), offsets measured in bandwidths, u = m·step/h.
struct Axis {
  double lo = 0, hi = 0, step = 1, h = 1;
  int64_t nodes = 1, L = 0, E = 1;
};

// A monomial u₁^a · u₂^b of the offsets between a sample point and an output node.
struct Power {
  int a, b;
};
// Degree 0, then 1, then 2 (the 2-D list; a 1-D grid uses the entries with b = 0).
constexpr Power kPowers[] = {{0, 0}, {1, 0}, {0, 1}, {2, 0}, {1, 1}, {0, 2}};

// out[(e₁ + E₁·e₂)·stride] = Σ_m₁ Σ_m₂ tap1[m₁] tap2[m₂] in[(e₁ − L₁ + m₁) + G₁·(e₂ − L₂ + m₂)]: the separable
// convolution of a binned array with a product kernel's taps, axis 1 then axis 2 (`across`, E₁ × G₂, holds the
// first pass). A 1-D grid has an axis 2 of one node and no taps.
void convolve(const double* in, const Axis& x1, const Axis& x2, const double* tap1, const double* tap2,
              double* across, double* out, int64_t stride) {
  for (int64_t g2 = 0; g2 < x2.nodes; ++g2)
    for (int64_t e = 0; e < x1.E; ++e) {
      const int64_t m_lo = std::max(-x1.L, x1.L - e), m_hi = std::min(x1.L, x1.nodes - 1 - e + x1.L);
      double acc = 0;
      for (int64_t m = m_lo; m <= m_hi; ++m) acc += tap1[m + x1.L] * in[e - x1.L + m + x1.nodes * g2];
      across[e + x1.E * g2] = acc;
    }
  for (int64_t e2 = 0; e2 < x2.E; ++e2) {
    const int64_t m_lo = std::max(-x2.L, x2.L - e2), m_hi = std::min(x2.L, x2.nodes - 1 - e2 + x2.L);
    for (int64_t e1 = 0; e1 < x1.E; ++e1) {
      double acc = 0;
      for (int64_t m = m_lo; m <= m_hi; ++m) acc += tap2[m + x2.L] * across[e1 + x1.E * (e2 - x2.L + m)];
      out[(e1 + x1.E * e2) * stride] = acc;
    }
  }
}

}  // namespace

Result grid_local_fit(const Fit& f, int64_t nodes, const FitOut& out, double* error_estimate) {
  const Problem& p = f.problem;
  if (const Status st = check(p, true); st != Status::Ok) return {st};
  const int64_t n = p.keys.rows, I = p.queries.rows, width = p.values.cols, dims = p.queries.cols;
  const Masks& m = p.masks;
  if (out.self_weight && I != n) return {Status::BadShape};
  if (dims > kMaxGridDims || p.heads != 1 || p.kernel.kind == KernelKind::Softmax ||
      p.kernel.kind == KernelKind::Cauchy || m.causal || m.key_padding || m.general || m.query_groups || nodes < 2 ||
      nodes > kMaxGridNodes || (dims == 2 && nodes * nodes > kMaxGridNodes))
    return {Status::BadArgument};
  if (out.mean.rows != I || out.mean.cols != width || (I > 0 && !out.mean.data)) return {Status::BadShape};
  const bool linear = f.estimator == Estimator::LocalLinear;
  const int64_t p_cols = linear ? 1 + dims : 1;
  const float* omega = f.observation_weights;
  const auto weight_of = [&](int64_t j) { return omega ? double(omega[j]) : 1.0; };
  for (int64_t j = 0; j < n; ++j)
    if (!(weight_of(j) >= 0) || !std::isfinite(weight_of(j))) return {Status::BadArgument};

  // The axes over the sample's bounding box.
  Axis axis[kMaxGridDims];
  double total = 0;
  for (int64_t d = 0; d < dims; ++d) {
    Axis& a = axis[d];
    a.lo = std::numeric_limits<double>::infinity();
    a.hi = -a.lo;
    for (int64_t j = 0; j < n; ++j) {
      const double x = p.keys.row(j)[d];
      if (!std::isfinite(x)) {  // NaN or infinite keys: the exact engine knows what they give
        if (error_estimate) *error_estimate = 0;
        return local_fit(f, out);
      }
      a.lo = std::min(a.lo, x);
      a.hi = std::max(a.hi, x);
    }
    a.h = p.kernel.bandwidth[d];
    a.nodes = nodes;
    a.step = a.hi > a.lo ? (a.hi - a.lo) / double(nodes - 1) : a.h;
    const double reach = reach_of(p.kernel.kind);
    // Taps per side, compared in double before converting (h/step can exceed any integer).
    const double span = std::ceil(reach * a.h / a.step);
    a.L = reach > 0 && span < double(nodes) ? int64_t(span) : nodes;
    a.E = nodes + 2 * a.L;
  }
  for (int64_t j = 0; j < n; ++j) total += weight_of(j);
  const Axis& x1 = axis[0];
  const Axis x2 = dims == 2 ? axis[1] : Axis{};

  // The moments, node-major: Σ K·ω·uᵏ (S), Σ K²·ω²·uᵏ (B) for the powers up to degree 2 (local-linear) or 0, and
  // Σ K·ω·y·uᵏ (T) for each column up to degree 1 or 0.
  const int64_t powers_2 = linear ? (dims == 2 ? 6 : 3) : 1;
  const int64_t powers_1 = linear ? 1 + dims : 1;
  const auto power_at = [&](int64_t k) { return dims == 2 ? kPowers[k] : Power{int(k), 0}; };
  const int64_t stride = 2 * powers_2 + width * powers_1;
  const int64_t cells = x1.nodes * x2.nodes, out_cells = x1.E * x2.E;
  Scratch<double> count(cells), count_sq(cells), sums(cells * width), column(cells), across(x1.E * x2.nodes);
  Scratch<double> taps(kMaxGridDims * 6 * (std::max(x1.L, x2.L) * 2 + 1));
  Scratch<double> moments(out_cells * stride);
  if (!count.ok() || !count_sq.ok() || !sums.ok() || !column.ok() || !across.ok() || !taps.ok() || !moments.ok())
    return {Status::OutOfMemory};
  std::fill(count.get(), count.get() + cells, 0.0);
  std::fill(count_sq.get(), count_sq.get() + cells, 0.0);
  // The Σ K²·ω² moments serve only the standard errors and effective keys (not a CV score): skipped otherwise.
  const bool squares = out.sum_sq_weights || out.effective_keys;
  if (!squares) std::fill(moments.get(), moments.get() + out_cells * stride, 0.0);
  std::fill(sums.get(), sums.get() + cells * width, 0.0);

  // Linear binning of ω, ω² and ω·y: each point spreads over the 2 (1-D) or 4 (2-D) nodes around it.
  for (int64_t j = 0; j < n; ++j) {
    int64_t g[kMaxGridDims] = {0, 0};
    double frac[kMaxGridDims] = {0, 0};
    for (int64_t d = 0; d < dims; ++d) {
      const double t = (double(p.keys.row(j)[d]) - axis[d].lo) / axis[d].step;
      g[d] = std::min<int64_t>(axis[d].nodes - 2, int64_t(std::floor(t)));
      frac[d] = t - double(g[d]);
    }
    const double w = weight_of(j);
    for (int c2 = 0; c2 < (dims == 2 ? 2 : 1); ++c2)
      for (int c1 = 0; c1 < 2; ++c1) {
        const double share = (c1 ? frac[0] : 1 - frac[0]) * (dims == 2 ? (c2 ? frac[1] : 1 - frac[1]) : 1.0);
        const int64_t cell = (g[0] + c1) + x1.nodes * (g[1] + c2);
        count.get()[cell] += w * share;
        if (squares) count_sq.get()[cell] += w * w * share;
        for (int64_t col = 0; col < width; ++col) sums.get()[cell * width + col] += w * double(p.values.row(j)[col]) * share;
      }
  }

  // Taps per axis: K(u)·uᵃ and K(u)²·uᵃ (a = 0, 1, 2) at u = m·step/h, m = −L … L, for the 1-D profile K of
  // the product kernel.
  const int64_t tap_len = std::max(x1.L, x2.L) * 2 + 1;
  const auto tap = [&](int64_t d, bool squared, int a) { return taps.get() + ((d * 2 + squared) * 3 + a) * tap_len; };
  for (int64_t d = 0; d < dims; ++d) {
    const float hf = float(axis[d].h), zero = 0.0f;
    const KernelSpec unit{p.kernel.kind, 1.0, &hf};
    for (int64_t m2 = -axis[d].L; m2 <= axis[d].L; ++m2) {
      const double u = double(m2) * axis[d].step / axis[d].h;
      const float at = float(double(m2) * axis[d].step);
      const double k = std::exp(log_score<double>(unit, &at, &zero, 1));
      for (int a = 0; a < 3; ++a) {
        tap(d, false, a)[m2 + axis[d].L] = k * std::pow(u, a);
        tap(d, true, a)[m2 + axis[d].L] = k * k * std::pow(u, a);
      }
    }
  }
  const double one = 1.0;
  const auto tap2 = [&](bool squared, int b) { return dims == 2 ? tap(1, squared, b) : &one; };
  double* mom = moments.get();
  for (int64_t k = 0; k < powers_2; ++k) {
    const Power pw = power_at(k);
    convolve(count.get(), x1, x2, tap(0, false, pw.a), tap2(false, pw.b), across.get(), mom + k, stride);
    if (squares)
      convolve(count_sq.get(), x1, x2, tap(0, true, pw.a), tap2(true, pw.b), across.get(), mom + powers_2 + k, stride);
  }
  for (int64_t col = 0; col < width; ++col) {
    for (int64_t c = 0; c < cells; ++c) column.get()[c] = sums.get()[c * width + col];
    for (int64_t k = 0; k < powers_1; ++k) {
      const Power pw = power_at(k);
      convolve(column.get(), x1, x2, tap(0, false, pw.a), tap2(false, pw.b), across.get(),
               mom + 2 * powers_2 + col * powers_1 + k, stride);
    }
  }

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
  for (int64_t i = 0; i < I; ++i) {
    // Beyond the data, a local-linear fit extrapolates, amplifying the moments' binning and interpolation errors:
    // such queries (usually few) are computed exactly.
    int64_t e[kMaxGridDims] = {0, 0};
    double frac[kMaxGridDims] = {0, 0};
    bool inside = true;
    for (int64_t d = 0; d < dims; ++d) {
      const double at = p.queries.row(i)[d];
      inside = inside && at >= axis[d].lo && at <= axis[d].hi;
      const double t = (at - axis[d].lo) / axis[d].step + double(axis[d].L);
      e[d] = inside ? std::min<int64_t>(axis[d].E - 2, int64_t(std::floor(t))) : 0;
      frac[d] = t - double(e[d]);
    }
    if (!inside) {
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
    if (m.leave_one_out) {  // the point's own weight K(0)·ω_i = ω_i, at offset u = 0: degree 0 only
      const double w = weight_of(i);
      v[0] -= w;
      B[0] -= w * w;
      for (int64_t col = 0; col < width; ++col) T[col * powers_1] -= w * double(p.values.row(i)[col]);
    }
    const double s0 = S[0], b0 = B[0];
    if (!(s0 > kServedShare * total)) {
      exact.get()[exact_count++] = i;
      continue;
    }
    for (int64_t r = 0; r < p_cols; ++r)
      for (int64_t c = 0; c < p_cols; ++c) a.get()[r * p_cols + c] = S[product_power(r, c)];
    if (p_cols == 1) g.get()[0] = 1 / S[0];  // Nadaraya–Watson, inline: once per query, the hot path of grid CV
    else first_column_of_inverse(a.get(), p_cols, l.get(), g.get());
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
    if (out.log_denominator) out.log_denominator[i] = std::log(s0);
    // ℓ_i(x_i) = ω_i K(0) gᵀ z_i with z_i = [1, 0, …]: query i is point i, at its own position.
    if (out.self_weight) out.self_weight[i] = m.leave_one_out ? 0.0 : weight_of(i) * gg[0];
  }
  if (exact_count) {
    const Result r = exact_rows(f, exact.get(), exact_count, out);
    if (r.status != Status::Ok) return r;
    if (out.self_weight)  // the exact fit of a single row has no smoother diagonal: such rows count as empty
      for (int64_t k = 0; k < exact_count; ++k) {
        out.self_weight[exact.get()[k]] = kNaN;
        if (out.sum_sq_weights) out.sum_sq_weights[exact.get()[k]] = kNaN;
      }
  }
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
    for (int64_t j = 0; j < n; ++j)
      for (int64_t col = 0; col < width; ++col) {
        y_lo = std::min(y_lo, double(p.values.row(j)[col]));
        y_hi = std::max(y_hi, double(p.values.row(j)[col]));
      }
    const Result r = exact_rows(f, rows.get(), probes, FitOut{out.mean});
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
