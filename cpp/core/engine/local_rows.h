// The local fit query by query in double: for per-query bandwidths (Fit::query_scale, nearest-neighbour spans) and
// for derivatives. One streaming pass over the keys per query (only the keys within reach of a compact kernel when
// the keys are sorted by their first coordinate), weights shifted by a running maximum as in local_fit.cpp.
#pragma once
#include "engine/local_fit.h"

namespace ka {

// local_fit(f, out) for a fit with f.query_scale: query i's bandwidth along d is h_d = kernel.bandwidth[d] ·
// query_scale[i] (a scale of 0, where at least k sample points coincide with the query, becomes the smallest positive
// double: the fit is then the mean of the coincident points; a scale that is NaN gives a NaN row). Same outputs and
// guard as local_fit, except `guarded`, which is always 0 with f.query_scale: the textbook re-solve of guarded rows
// (local_solve.h, exact_local_row) has no per-query bandwidth. Also local_fit's path for out.mean_double (no
// query_scale): the fit in double, for criteria.
Result local_fit_scaled(const Fit& f, const FitOut& out);

// ∂f(q_i)/∂q_d, for every query i, dimension d and column c of y, at fixed bandwidth (with f.query_scale, h(q_i) is
// held at its value at q_i).
//   Local-linear and local-quadratic: the fitted slope β_d / h_d of the weighted least-squares fit of y on the
//   design (design_row: [1, u] or [1, u, u_a·u_b], u = (x − q)/h; Fan & Gijbels 1996, §3), the same guarded solve as
//   the fit's intercept.
//   Nadaraya–Watson: the derivative of the ratio, Σ_j w_ij ∂ln K_ij/∂q_d (y_j − f(q_i)) / Σ_j w_ij, from each
//   kernel's analytic derivative. The uniform kernel has none: BadArgument.
// Both are linear in y: ∂f/∂q_d = Σ_j ℓ'_dj y_j, and sum_sq_weights receives Σ_j ℓ'_dj², so that σ² times it is the
// derivative's variance under homoscedastic noise (degree 1, 2: ℓ'_dj = w_j e_{d+1}ᵀ A⁻¹ z_j / h_d; Nadaraya–Watson:
// ℓ'_dj = w_j (g_dj − ḡ_d) / Σw with g_dj = ∂ln K_ij/∂q_d and ḡ_d its w-weighted mean).
// Empty rows (no key of positive weight) get NaN. Masks apply as in local_fit.
struct GradientOut {
  double* gradient = nullptr;        // I × dims × width: [(i · dims + d) · width + c]
  double* sum_sq_weights = nullptr;  // I × dims: Σ_j ℓ'_dj² (null: not computed)
  double* mean = nullptr;            // I × width: f(q_i) in double (null: not computed)
};
Result local_gradient(const Fit& f, const GradientOut& out);

}  // namespace ka
