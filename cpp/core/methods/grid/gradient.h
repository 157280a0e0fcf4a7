// A binned local fit's derivative ∂f/∂q (local_gradient's definition, local_rows.h) from the grid's moments: what a
// grid model's gradient() serves in O(1) a query, as its fits are, instead of reading each query's keys in reach.
#pragma once
#include <cstdint>

#include "engine/local_rows.h"
#include "methods/grid/plan.h"

namespace ka {

// The derivatives of f's queries from `moments`, convolved for local-linear with the Σ K²·ω² moments (convolve_moments
// with `squares`; both estimators read them: Nadaraya–Watson's derivative needs Σw·u and Σw·u·y, its variance Σw²·u²)
// on the grid of `axis`; f's kernel must be one grid_serves_gradient accepts for f's estimator. Local-linear: the
// slope β_d/h_d of the same guarded solve as the fit (local_solve.h), Σℓ'² = g_dᵀ B g_d / h_d² for g_d = A⁻¹e_{d+1};
// Nadaraya–Watson (Gaussian): (Σw·u·y − f·Σw·u)/(h·Σw), Σℓ'² = Σw²(u − ū)²/(h·Σw)². The grid serves the queries inside
// the sample's box with enough weight for its rounding (served_share, as serve_grid); the others are listed in
// `exact` (*exact_count of them) for the caller to run exactly. out.mean, when given, receives the fit in double.
Result grid_gradient(const Fit& f, const Axis* axis, const double* moments, double total, double total_sq,
                     const GradientOut& out, int64_t* exact, int64_t* exact_count);

}  // namespace ka
