// Statistics of a kernel regression at its own sample, for confidence bands and AICc: the residuals, the
// smoother's degrees of freedom and the noise variance. One local_fit() pass over the sample.
#pragma once
#include "engine/local_fit.h"

namespace ka {

// With L the smoother matrix (ŷ = L y) of the fit at its own sample (queries = keys, D columns of y), ω the
// observation weights (ones when absent) and the sums over the m observations with ω_i > 0 (a zero weight is the
// same as leaving the row out; Σω is normalised to m below):
//   rss      = Σ_i ω_i Σ_c (y_ic − ŷ_ic)² · m / Σ ω        (weighted residual sum of squares, D columns summed)
//   trace    = tr(L) = Σ_i ℓ_i(x_i)                      (effective degrees of freedom, ν)
//   trace_sq = tr(LᵀL) = Σ_i Σ_j ℓ_j(x_i)²               (ν̃)
//   sigma2   = rss / (D · (m − 2ν + ν̃))                  (Wasserman 2006, eq. 5.86; unbiased when the fit is
//                                                          unbiased; the denominator is floored at 1)
struct FitSummary {
  double rss = 0, trace = 0, trace_sq = 0, sigma2 = 0;
  int64_t observations = 0;  // m
  int64_t empty_rows = 0;    // observations with no key in reach (compact kernels): left out of the sums
  // Observations whose fitted value the guard of local_fit.h moved by more than kGuardChange of the range of y (in
  // some column) from the float64 solve without it, or where that solve is singular: the fit a prediction gives
  // there is the guard's, not the textbook's (a 'guard' warning when they are many).
  int64_t guard_changed = 0;
  // Of those, observations where the float64 solve without the guard is singular too (kSingularDesign): AICc as a
  // bandwidth criterion scores such a bandwidth +inf (bandwidth.h), as CV does.
  int64_t singular = 0;
};

// How far the guard may move a fitted value, relative to the range of y, before guard_changed counts it.
constexpr double kGuardChange = 1e-3;

// f.problem.queries must be f.problem.keys (the same rows); masks and f.problem.empty are ignored. Where the guard
// acted at an observation, rss and trace take the textbook float64 solve there (exact_local_row), as CV does
// (bandwidth.h), so AICc is the textbook criterion; where that solve is singular, the guard's values stay (for the
// band's statistics) and `singular` counts the point (the AICc criterion is then +inf, bandwidth.h). trace_sq and
// sigma2's other inputs keep the guard. `column_sigma2`, when given, receives D per-column noise variances rss_c / (m −
// 2ν + ν̃). With grid_tolerance > 0, the fit runs on a grid sized for it (grid.h) where one can reach it. With in_double
// (and no grid), the fit runs in double (FitOut::mean_double) and rss takes the double fitted values: AICc to float64
// rounding, not float32's. `criterion_only`: AICc's inputs alone, the re-solves stopping at the first singular
// observation (AICc is then +inf whatever the others give: below the spacing most observations are such, each a
// re-solve over its keys in reach).
Result summarize_fit(const Fit& f, FitSummary* out, double* column_sigma2 = nullptr, double grid_tolerance = 0,
                     bool in_double = false, bool criterion_only = false);

// AICc (Hurvich, Simonoff & Tsai 1998): ln σ̂² + (1 + ν/m) / (1 − (ν + 2)/m), with σ̂² = rss / (m·D), ν = trace and
// m = s.observations; +inf when ν + 2 >= m (the fit interpolates), so such a bandwidth is never chosen.
double aicc(const FitSummary& s, int64_t width);

}  // namespace ka
