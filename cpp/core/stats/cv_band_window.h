// The exact band of a large 1-D CV scan (docs/regression.md, "The lower end"): leave-one-out CV of the Gaussian
// estimator over each held-out row's keys in reach, its weights in float32 SIMD, each pair of rows weighed once for
// both (the Gaussian is symmetric), where the tiled fit reads whole tiles of 256 keys a row and the windowed criterion
// (cv_window.h) computes one double exponential a key. Only the descent's scan points use it, below the grid's reach
// and where it costs less than the grid (plan_band_cv, methods/plan.h): the refinement's evaluations are the tiled or
// windowed criterion's, as before, so it decides which points bracket the minimum, as those did, to float32 rounding
// (a band point is returned only where it is itself the best point evaluated).
#pragma once
#include <cstdint>

#include "engine/local_fit.h"
#include "engine/problem.h"
#include "stats/bandwidth_detail.h"

namespace ka {
namespace bandwidth_detail {

// Rows whose nearest admissible key weighs less than 2^-kBandTopLimit of K(0) (a gap of more than about 4.8
// bandwidths) are fitted by the float64 textbook solve instead: their keys' float32 exponents (at least that large)
// would lose more than 1e-6 of each weight to rounding.
constexpr float kBandTopLimit = 16;

// The CV score of `sorted` (1-D keys = queries, sorted by x with no NaN, one head, leave-one-out only, kernel
// bandwidth set) for the Gaussian kernel, Nadaraya–Watson or local-linear, no observation weights, one column of y:
// Σ_i (y_i − f_{−i}(x_i))² / n over the keys within 2^-(25 + log₂ n) of each row's nearest key's weight (as local_fit
// and window_cv skip keys; a few more where another row's nearest key is farther), the weights exp2 of float32
// exponents, the moments summed in float32 64 terms at a time and in double across them, the 2 × 2 solve in double.
// A local-linear row whose slope pivot is at most kPivotFloor of its diagonal (where the float32 pass's guard acts,
// local_fit.h), or a row far from every key (kBandTopLimit), is the float64 textbook solve (exact_local_row); +inf
// where that is singular, as cv_score gives. Returns false, computing nothing, where it does not apply (another kernel
// or estimator, weights, masks but leave-one-out, several columns of y, unsorted keys, fewer than 3 points).
bool band_window_cv(const Problem& sorted, Estimator estimator, double* score);

// The squared held-out residuals (y_i − f_{−i}(x_i))² of rows `rows[0 … m)` of `sorted` (as band_window_cv takes it),
// each row over its own keys within 2^-(25 + log₂ n) of its nearest key's weight, summed as band_window_cv sums them
// (float32 lanes, double every 64 terms; the textbook solve where it takes that), into out: +inf where the held-out
// design is singular. O(keys in reach) a row, for a subsample (cv_band_screen.h). False, nothing computed, where
// band_window_cv does not apply. `known` (a caller that checked this sample before, its keys unchanged): the O(n) check
// that the keys are sorted is left out (a screen asks for its rows about twice a scan point).
bool band_window_residuals(const Problem& sorted, Estimator estimator, const int64_t* rows, int64_t m, double* out,
                           bool known = false);

// Whether band_window_score would take bandwidth h (*planned): it applies, and plan_band_cv prefers it to the grid
// with the sample's own count of keys in reach (`counted`), or with the uniform spread's estimate (the band's
// bandwidths, as a descent screens them: cv_scan.cpp).
Result band_window_plan(SearchSample& sample, const Problem& p, const Criterion& c, float h, bool* planned,
                        bool counted = true);

// band_window_cv of a search's sample (p, c as select_cv takes them) at bandwidth h, on the search's sorted sample
// (`sample`, sorted once): *served false, nothing computed, where it does not apply (observation weights, blocked CV,
// any score but leave-one-out, several columns; or as band_window_cv declines).
Result band_window_score(SearchSample& sample, const Problem& p, const Criterion& c, float h, double* score,
                         bool* served);

}  // namespace bandwidth_detail
}  // namespace ka
