// Kernel regression on mixed data: continuous columns with a distance kernel, discrete columns (categories.h) with
// discrete kernels, in one product kernel (Li & Racine 2004; as R's np and statsmodels' KernelReg fit it). The local
// polynomial is in the continuous columns only; the discrete ones enter through the kernel (docs/regression.md,
// "Mixed data"). Every entry reuses the engine whole: the queries are grouped by their combination of levels, and for
// each group the discrete factors are one weight per key, joined to the observation weights; the group's fit is the
// continuous engine's (local_fit, local_gradient) with those weights. The cost is that of the continuous fit plus
// O(J) per group.
#pragma once
#include <cstdint>

#include "engine/local_fit.h"
#include "engine/local_rows.h"
#include "stats/bandwidth.h"
#include "stats/categories.h"
#include "stats/regression.h"

namespace ka {

// Every function below takes the continuous part as a Fit or Problem (at least one continuous column: a column of
// zeros, at any bandwidth, stands for none; it changes no weight, and local-linear drops it as a direction without
// spread) and the discrete columns as `c`, whose queries are f's queries (I rows) and keys f's keys (J rows).
// Observation weights multiply the discrete factors. Masks: none, leave-one-out, or a band (blocked CV); any other
// is BadArgument, as are span bandwidths (Fit::query_scale) and Fit::query_keys (the groups set it).

// local_fit() of the mixed regression: every output of FitOut, per query (self_weight needs I == J: query i is key i).
// `grid_tolerance` > 0 (the plan's, for one continuous column and no mask): each group's fit on the grid where the
// plan gives one at its bandwidth (grid_local_fit over every key with the group's weights, O(n + G log G) a group),
// else exactly.
Result mixed_fit(const Fit& f, const Categories& c, const FitOut& out, double grid_tolerance = 0);

// local_gradient() of the mixed regression: the derivatives along the continuous columns (a discrete column has no
// derivative), I × dims × width, with their Σℓ'² and the fit.
Result mixed_gradient(const Fit& f, const Categories& c, const GradientOut& out);

// summarize_fit() of the mixed regression (queries = keys, the sample); in_double as there; `grid_tolerance` as in
// mixed_fit (not with in_double). Rows the grid cannot serve count as empty rows, as in summarize_fit's grid.
Result mixed_summary(const Fit& f, const Categories& c, FitSummary* out, double* column_sigma2 = nullptr,
                     bool in_double = false, double grid_tolerance = 0);

// cv_score() of the mixed regression: leave-one-out CV (ω-weighted mean squared error of the held-out fits, the
// textbook local-linear solve where the guard acted, +inf where a held-out point has no key of positive weight or a
// singular design) or AICc, exactly, at bw = (h_1 … h_dims, λ_1 … λ_count) (c.lambda is ignored). p.queries and
// p.keys must be the same sample; c.queries and c.keys its levels. Up to kDoubleCriterionRows points the fits run in
// double, as cv_score's do. Blocked CV (criterion.exclude > 0) is BadArgument. A grid tolerance
// (criterion.grid_tolerance > 0) scores leave-one-out CV with one continuous column on grids where one serves h
// (MixedGridCv, methods/grid/cv_mixed.h), its fits within that tolerance; AICc and the other bandwidths run exactly.
Result mixed_cv_score(const Problem& p, const Categories& c, const double* bw, double* score,
                      const Criterion& criterion = {});

// select_cv() over (h, λ) jointly: minimises the criterion from bw (dims + count values: the continuous start h, e.g.
// a rule of thumb; the λ entries are ignored) and writes the minimiser into bw. Each λ_d stays within [0,
// lambda_max]. The search (docs/regression.md, "Mixed data"): the continuous scale is scanned as select_cv scans it
// (log-spaced over the whole sensible range, then Brent's method) at λ = lambda_max / 2, then each λ_d over 11 evenly
// spaced values of its range, endpoints included (then Brent's method between the best one's neighbours); then
// coordinate descent over every h_d (per_dimension; else the common scale) and λ_d, each sweep followed by a line
// search along its own step, until a sweep improves the criterion by less than 1e-6 (at most 12 sweeps). Continuous
// columns that are all constant make h irrelevant: it stays at the start. `curve` records (dims + count) values per
// evaluation and resumes as select_cv's does; `progress` and `state` likewise (state: the sorted sample and grids of
// the search kept across the calls of one search resumed in steps, as select_cv keeps its own).
Result select_mixed(const Problem& p, const Categories& c, bool per_dimension, double* bw, double* score,
                    CvCurve* curve, const Criterion& criterion = {}, const SearchProgress& progress = {},
                    CvSearchState* state = nullptr);

}  // namespace ka
