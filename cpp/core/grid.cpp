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

int64_t grid_nodes(ConstMatrix x, KernelKind kind, double h, double tolerance) {
  if (!(tolerance > 0) || x.cols != 1 || x.rows < 2 || kind == KernelKind::Cauchy) return 0;
  float lo = x.row(0)[0], hi = lo;
  for (int64_t i = 1; i < x.rows; ++i) {
    lo = std::min(lo, x.row(i)[0]);
    hi = std::max(hi, x.row(i)[0]);
  }
  return grid_nodes(double(hi) - double(lo), h, tolerance);
}

Result grid_local_fit(const Fit& f, int64_t nodes, const FitOut& out, double* error_estimate) {
  const Problem& p = f.problem;
  if (const Status st = check(p, true); st != Status::Ok) return {st};
  const int64_t n = p.keys.rows, I = p.queries.rows, width = p.values.cols;
  const Masks& m = p.masks;
  if (out.self_weight && I != n) return {Status::BadShape};
  if (p.queries.cols != 1 || p.heads != 1 || p.kernel.kind == KernelKind::Softmax ||
      m.causal || m.key_padding || m.general || m.query_groups || nodes < 2 || nodes > kMaxGridNodes)
    return {Status::BadArgument};
  if (out.mean.rows != I || out.mean.cols != width || (I > 0 && !out.mean.data)) return {Status::BadShape};
  const int64_t p_cols = f.estimator == Estimator::LocalLinear ? 2 : 1;
  const float* omega = f.observation_weights;
  const auto weight_of = [&](int64_t j) { return omega ? double(omega[j]) : 1.0; };
  for (int64_t j = 0; j < n; ++j)
    if (!(weight_of(j) >= 0) || !std::isfinite(weight_of(j))) return {Status::BadArgument};

  // Linear binning of ω, ω² and ω·y over [min x, max x].
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, total = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double x = p.keys.row(j)[0];
    if (!std::isfinite(x)) {  // NaN or infinite keys: the exact engine knows what they give
      if (error_estimate) *error_estimate = 0;
      return local_fit(f, out);
    }
    lo = std::min(lo, x);
    hi = std::max(hi, x);
    total += weight_of(j);
  }
  const double h = p.kernel.bandwidth[0];
  const double step = hi > lo ? (hi - lo) / double(nodes - 1) : h;
  const double reach = reach_of(p.kernel.kind);
  // Taps per side, compared in double before converting (h/step can exceed any integer).
  const double span = std::ceil(reach * h / step);
  const int64_t L = reach > 0 && span < double(nodes) ? int64_t(span) : nodes;
  const int64_t E = nodes + 2 * L;  // output nodes: the grid extended by the kernel's reach on each side
  Scratch<double> count(nodes), count_sq(nodes), sums(nodes * width);
  Scratch<double> taps((2 * L + 1) * 5);
  Scratch<double> moments(E * (3 + 3 + 2 * width));  // S0..S2, B0..B2, T0 and T1 per column, per output node
  if (!count.ok() || !count_sq.ok() || !sums.ok() || !taps.ok() || !moments.ok()) return {Status::OutOfMemory};
  std::fill(count.get(), count.get() + nodes, 0.0);
  std::fill(count_sq.get(), count_sq.get() + nodes, 0.0);
  std::fill(sums.get(), sums.get() + nodes * width, 0.0);
  for (int64_t j = 0; j < n; ++j) {
    const double t = (double(p.keys.row(j)[0]) - lo) / step;
    const int64_t g = std::min<int64_t>(nodes - 2, int64_t(std::floor(t)));
    const double frac = t - double(g), w = weight_of(j);
    count.get()[g] += w * (1 - frac);
    count.get()[g + 1] += w * frac;
    count_sq.get()[g] += w * w * (1 - frac);
    count_sq.get()[g + 1] += w * w * frac;
    for (int64_t c = 0; c < width; ++c) {
      const double wy = w * double(p.values.row(j)[c]);
      sums.get()[g * width + c] += wy * (1 - frac);
      sums.get()[(g + 1) * width + c] += wy * frac;
    }
  }

  // Taps K(u)·u^a and K(u)²·u^a (a = 0, 1, 2) at u = m·step/h, m = −L … L.
  double* tap = taps.get();
  const float hf = float(h), zero = 0.0f;
  const KernelSpec unit{p.kernel.kind, 1.0, &hf};
  for (int64_t m2 = -L; m2 <= L; ++m2) {
    const double u = double(m2) * step / h;
    const float at = float(double(m2) * step);
    const double k = std::exp(log_score<double>(unit, &at, &zero, 1));
    double* t = tap + (m2 + L) * 5;
    t[0] = k; t[1] = k * u; t[2] = k * u * u; t[3] = k * k; t[4] = k * k * u;
  }
  // Convolutions: output node e sits at lo + (e − L)·step and reads input nodes g = e − L + m.
  const int64_t stride = 3 + 3 + 2 * width;
  double* mom = moments.get();
  std::fill(mom, mom + E * stride, 0.0);
  for (int64_t e = 0; e < E; ++e) {
    double* at = mom + e * stride;
    const int64_t m_lo = std::max(-L, L - e), m_hi = std::min(L, nodes - 1 - e + L);
    for (int64_t m2 = m_lo; m2 <= m_hi; ++m2) {
      const int64_t g = e - L + m2;
      const double* t = tap + (m2 + L) * 5;
      const double c = count.get()[g], c2 = count_sq.get()[g];
      at[0] += t[0] * c; at[1] += t[1] * c; at[2] += t[2] * c;
      at[3] += t[3] * c2; at[4] += t[4] * c2; at[5] += t[4] * (m2 * step / h) * c2;
      for (int64_t col = 0; col < width; ++col) {
        const double s = sums.get()[g * width + col];
        at[6 + col] += t[0] * s;
        at[6 + width + col] += t[1] * s;
      }
    }
  }

  // Each query: interpolated moments, leave-one-out correction, the same solve as the exact fit.
  Scratch<int64_t> exact(I);
  Scratch<double> a(4), b(4), tt(2 * width), l(4), g(2), interp(stride);
  if (!exact.ok() || !a.ok() || !b.ok() || !tt.ok() || !l.ok() || !g.ok() || !interp.ok()) return {Status::OutOfMemory};
  int64_t exact_count = 0;
  for (int64_t i = 0; i < I; ++i) {
    // Beyond the data, a local-linear fit extrapolates, amplifying the moments' binning and interpolation errors:
    // such queries (usually few) are computed exactly.
    const double at = p.queries.row(i)[0];
    const double t = (at - lo) / step + double(L);
    if (!(at >= lo && at <= hi)) {
      exact.get()[exact_count++] = i;
      continue;
    }
    const int64_t e = std::min<int64_t>(E - 2, int64_t(std::floor(t)));
    const double frac = t - double(e);
    for (int64_t k = 0; k < stride; ++k) interp.get()[k] = (1 - frac) * mom[e * stride + k] + frac * mom[(e + 1) * stride + k];
    const double* v = interp.get();
    double s0 = v[0], b0 = v[3];
    double* t0 = tt.get();
    for (int64_t col = 0; col < width; ++col) {
      t0[col] = v[6 + col];
      t0[width + col] = v[6 + width + col];
    }
    if (m.leave_one_out) {  // the point's own weight K(0)·ω_i = ω_i, at offset z = 0
      const double w = weight_of(i);
      s0 -= w;
      b0 -= w * w;
      for (int64_t col = 0; col < width; ++col) t0[col] -= w * double(p.values.row(i)[col]);
    }
    if (!(s0 > kServedShare * total)) {
      exact.get()[exact_count++] = i;
      continue;
    }
    double* A = a.get();
    if (p_cols == 2) {
      A[0] = s0; A[1] = v[1]; A[2] = v[1]; A[3] = v[2];
    } else {
      A[0] = s0;
    }
    first_column_of_inverse(A, p_cols, l.get(), g.get());
    float* mean = out.mean.row(i);
    for (int64_t col = 0; col < width; ++col) {
      double est = g.get()[0] * t0[col];
      if (p_cols == 2) est += g.get()[1] * t0[width + col];
      mean[col] = float(est);
    }
    if (out.sum_sq_weights) {
      const double* gg = g.get();
      const double sum_sq = p_cols == 2 ? gg[0] * gg[0] * b0 + 2 * gg[0] * gg[1] * v[4] + gg[1] * gg[1] * v[5]
                                        : gg[0] * gg[0] * b0;
      out.sum_sq_weights[i] = sum_sq > 0 ? sum_sq : b0 / (s0 * s0);  // as in local_fit (local_fit.h)
    }
    if (out.effective_keys) out.effective_keys[i] = s0 * s0 / b0;
    if (out.log_denominator) out.log_denominator[i] = std::log(s0);
    // ℓ_i(x_i) = ω_i K(0) gᵀ z_i with z_i = [1, 0]: query i is point i, at its own position.
    if (out.self_weight) out.self_weight[i] = m.leave_one_out ? 0.0 : weight_of(i) * g.get()[0];
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
