// See local_rows.h: the fits with per-query bandwidths or in double, and the derivatives, from the per-row sums of
// local_row_sums.h.
#include "engine/local_rows.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/local_row_sums.h"
#include "engine/local_solve.h"
#include "engine/online_softmax.h"
#include "engine/window_blocks.h"

namespace ka {

using namespace row_sums;

Result local_fit_scaled(const Fit& f, const FitOut& out) {
  if (const Status st = check_fit(f); st != Status::Ok) return {st};
  const Problem& p = f.problem;
  const int64_t I = p.queries.rows, J = p.keys.rows, dims = p.queries.cols, width = p.values.cols;
  if (out.mean.rows != I || out.mean.cols != width || (I > 0 && !out.mean.data)) return {Status::BadShape};
  if (out.self_weight && !f.query_keys && I != J) return {Status::BadShape};
  Context c{p, head_of(p, 0), f.observation_weights, f.query_scale, sorted_by_first(p.keys), log_max(f, p.keys.rows)};
  const int64_t np = design_columns(f.estimator, dims);
  const bool with_b = out.sum_sq_weights || out.effective_keys;
  const std::unique_ptr<WindowBlocks> blocks = window_blocks(c, with_b);
  c.blocks = blocks.get();
  return for_rows(c, np, false, [&](int64_t i, Row& r, uint8_t* chosen) -> Result {
    r.with_b = with_b;
    float* mean = out.mean.row(i);
    if (out.guarded) out.guarded[i] = 0;
    if (!row_bandwidths(c, i, r)) {
      std::fill(mean, mean + width, std::numeric_limits<float>::quiet_NaN());
      if (out.mean_double) std::fill(out.mean_double + i * width, out.mean_double + (i + 1) * width, kNaN);
      for (double* o : {out.sum_sq_weights, out.self_weight, out.effective_keys, out.log_denominator})
        if (o) o[i] = kNaN;
      return {};
    }
    accumulate(c, i, r);
    const double s0 = r.a[0];
    if (!(s0 > 0)) {
      if (out.sum_sq_weights) out.sum_sq_weights[i] = kNaN;
      if (out.self_weight) out.self_weight[i] = kNaN;
      if (out.effective_keys) out.effective_keys[i] = 0;
      if (out.log_denominator) out.log_denominator[i] = -kInf;
      if (finalize_empty_row(width, mean, p.empty, NearestKeys{&c.hd, i, chosen}) == RowOutcome::Error)
        return {Status::EmptyRow, i, 0};
      if (out.mean_double)
        for (int64_t col = 0; col < width; ++col) out.mean_double[i * width + col] = double(mean[col]);
      return {};
    }
    const bool guarded = invert(r);
    if (out.guarded && !f.query_scale) out.guarded[i] = guarded;
    const double* g = r.inv.data();  // A⁻¹ e₁
    for (int64_t col = 0; col < width; ++col) {
      const double v = fitted_value(g, r.t + col, np, width);
      mean[col] = mean_to_float(v);
      if (out.mean_double) out.mean_double[i * width + col] = v;
    }
    if (out.sum_sq_weights) {
      const double v = quadratic_b(r, 0);
      out.sum_sq_weights[i] = v > 0 ? v : r.b[0] / (s0 * s0);  // see local_fit.h, after kPivotFloor
    }
    if (out.self_weight) {  // ℓ_i(q_i) = w_ii gᵀ z_i
      double v = 0;
      const int64_t own = f.query_keys ? f.query_keys[i] : i;
      if (p.masks.allows(i, own, J) && !(f.observation_weights && !(f.observation_weights[own] > 0))) {
        const float* q = p.queries.row(i);
        const float* k = p.keys.row(own);
        double score = log_kernel(p.kernel.kind, q, k, r.h.data(), dims, nullptr);
        if (f.observation_weights) score += std::log(double(f.observation_weights[own]));
        const double w = std::exp(score - r.sums.max);
        offsets(q, k, r.h.data(), dims, r.u.data());
        design_row(r.degree, r.u.data(), dims, r.z.data());
        for (int64_t x = 0; x < np; ++x) v += g[x] * r.z[size_t(x)];
        v *= w;
      }
      out.self_weight[i] = v;
    }
    if (out.effective_keys) out.effective_keys[i] = s0 * s0 / r.b[0];
    if (out.log_denominator) out.log_denominator[i] = std::log(s0) + r.sums.max;
    return {};
  });
}

Result local_gradient(const Fit& f, const GradientOut& out) {
  if (const Status st = check_fit(f); st != Status::Ok) return {st};
  const Problem& p = f.problem;
  if (p.kernel.kind == KernelKind::Uniform) return {Status::BadArgument};
  const int64_t dims = p.queries.cols, width = p.values.cols;
  if (p.queries.rows > 0 && !out.gradient) return {Status::BadShape};
  const Context c{
      p, head_of(p, 0), f.observation_weights, f.query_scale, sorted_by_first(p.keys), log_max(f, p.keys.rows)};
  const bool ll = f.estimator != Estimator::NadarayaWatson;  // a polynomial's slope (degree 1 or 2)
  const int64_t np = design_columns(f.estimator, dims);
  return for_rows(c, np, !ll, [&](int64_t i, Row& r, uint8_t*) -> Result {
    r.with_b = out.sum_sq_weights != nullptr;
    double* grad = out.gradient + i * dims * width;
    double* ss = out.sum_sq_weights ? out.sum_sq_weights + i * dims : nullptr;
    double* mean = out.mean ? out.mean + i * width : nullptr;
    const bool ok = row_bandwidths(c, i, r);
    if (ok) accumulate(c, i, r);
    if (!ok || !(r.a[0] > 0)) {  // no bandwidth or no key in reach: no derivative
      std::fill(grad, grad + dims * width, kNaN);
      if (ss) std::fill(ss, ss + dims, kNaN);
      if (mean) std::fill(mean, mean + width, kNaN);
      return {};
    }
    const double s0 = r.a[0];
    invert(r);
    for (int64_t col = 0; col < width; ++col) {
      const double v = fitted_value(r.inv.data(), r.t + col, np, width);
      if (mean) mean[col] = v;
      for (int64_t d = 0; d < dims; ++d) {
        if (ll) {  // β_{d+1} = e_{d+1}ᵀ A⁻¹ t (design_row's slope column d + 1), per unit of x: divided by h_d
          double beta = 0;
          for (int64_t x = 0; x < np; ++x) beta += r.inv[size_t((d + 1) * np + x)] * r.t[size_t(x * width + col)];
          grad[d * width + col] = beta / r.h[size_t(d)];
        } else {
          grad[d * width + col] = (r.GY[size_t(d * width + col)] - v * r.G[size_t(d)]) / s0;
        }
      }
    }
    if (ss) {
      for (int64_t d = 0; d < dims; ++d) {
        double v;
        if (ll) {
          v = quadratic_b(r, d + 1) / (r.h[size_t(d)] * r.h[size_t(d)]);
        } else {  // Σ w² (g − ḡ)² / (Σw)²
          const double gbar = r.G[size_t(d)] / s0;
          v = (r.B2[size_t(d)] - 2 * gbar * r.B1[size_t(d)] + gbar * gbar * r.b[0]) / (s0 * s0);
        }
        ss[d] = std::max(v, 0.0);
      }
    }
    return {};
  });
}

}  // namespace ka
