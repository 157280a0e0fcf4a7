// Bandwidth selection for kernel regression: rules of thumb, leave-one-out least-squares cross-validation (the
// exact engine with the leave-one-out mask) and AICc. Statistics on top: the engine knows nothing of bandwidths
// being searched.
#pragma once
#include <cstdint>
#include <memory>

#include "engine/local_fit.h"

namespace ka {

enum class Rule : int32_t { Scott, Silverman };

// Per dimension d of the n × dims sample x, with s_d the sample standard deviation (ddof 1) and IQR_d the
// interquartile range (linear interpolation between order statistics, numpy's default):
//   Scott:     h_d = s_d · n^(−1/(dims+4))
//   Silverman: h_d = 0.9 · min(s_d, IQR_d / 1.349) · n^(−1/(dims+4))
// A zero spread falls back to the other measure (Silverman), then to |mean_d|·1e-3, then to 1, so h_d > 0 always.
// n must be >= 2. Writes dims values into h.
Status rule_of_thumb(ConstMatrix x, Rule rule, double* h);

// The median gap between the sorted distinct finite values v_i = values[i·stride], i < n (0 when fewer than two
// distinct ones): the spacing below which a bandwidth interpolates (the CV scan's lower end, the 'interpolating'
// warning). Sorts a copy (order_by's radix sort from 4,096 values).
Status median_spacing(const double* values, int64_t n, int64_t stride, double* spacing);

// What a bandwidth is chosen for (the estimator, the observation weights) and judged by.
enum class Score : int32_t { LeaveOneOut, AICc };
struct Criterion {
  Estimator estimator = Estimator::NadarayaWatson;
  Score score = Score::LeaveOneOut;
  const float* observation_weights = nullptr;  // n entries >= 0, or null for all ones
  // > 0: leave-one-out CV in 1-D runs on a grid sized for this relative tolerance (grid.h) where one can reach it;
  // 0: always exact. AICc is always exact.
  double grid_tolerance = 0;
  // Blocked CV (Chu & Marron 1991; Hart & Vieu 1990) for serial data, leave-one-out only: r > 0 also leaves out, for
  // each held-out point i, every sample point j with |x_j1 − x_i1| <= r (the distance along the first column, in x's
  // units, computed in double from the float32 sample); 0 is leave-one-out. It runs exactly (never on a grid). It
  // must be finite and >= 0; with AICc or the gradient search, r > 0 is BadArgument.
  double exclude = 0;
};

// LeaveOneOut: CV(h) = Σ_i ω_i Σ_c (y_ic − f_{−i}(x_i)_c)² / Σ_i ω_i, f_{−i} the estimate at x_i from every other
// point (ω = 1 without observation weights; with Criterion::exclude r > 0, from every point farther than r from it
// along the first column: a band mask, Masks::band_first/last, one pass per bandwidth). +inf when some point has no
// admissible point in reach (compact kernels, or a band wider than the kernel's reach): no bandwidth with empty
// neighbourhoods is ever chosen. Local-linear and local-quadratic: the textbook criterion, without the guard of
// local_fit.h: where the guard acted at a held-out point, its fit is the float64 solve (exact_local_row), and where
// that design is singular (kSingularDesign) CV is +inf, as for a point without neighbours.
// AICc: aicc() of summarize_fit() (regression.h), +inf where some observation's design is singular in float64
// (FitSummary::singular), as for CV. Up to kDoubleCriterionRows points (bandwidth_detail.h), an exact evaluation of
// either fits in double, so the score is the float64 textbook value of the float32 sample.
// p.queries and p.keys must be the same sample; p.kernel.bandwidth is replaced by h (p.heads must be 1).
Result cv_score(const Problem& p, const double* h, double* score, const Criterion& criterion = {});

// The curve of every CV evaluation a search made, in order; `capacity` entries (dims bandwidths each).
// Resuming: the `count` entries it holds when select_cv starts are taken as the first evaluations of an earlier
// run of the same search (same problem, criterion and start), which a progress hook stopped. The search is
// deterministic, so it retraces them, taking each score from the curve instead of evaluating it again (a bandwidth
// that differs from the recorded one, bit for bit, is BadArgument: the inputs changed), and goes on from there.
// Start with count = 0 for a fresh search.
struct CvCurve {
  double* bandwidths = nullptr;  // capacity × dims (select_cv_gradient with a metric: capacity × rank·dims, L)
  double* scores = nullptr;      // capacity
  int32_t capacity = 0;
  int32_t count = 0;
  // select_cv_gradient only: capacity × (dims, or rank·dims) gradients, NaN where the line search rejected the point
  // before its gradient was computed; resuming needs them (select_cv ignores this).
  double* gradients = nullptr;
};

// Progress of a search: after each new criterion evaluation, `after_evaluation(context, evaluations)` is called with
// the number made so far (replayed ones included: 1, 2, …). Returning false stops the search before its next
// evaluation: select_cv then returns Status::Cancelled, and the curve holds every evaluation made (resumable, see
// CvCurve). A plain function pointer and context: no allocation, and nothing is called when it is null.
struct SearchProgress {
  bool (*after_evaluation)(void* context, int32_t evaluations) = nullptr;
  void* context = nullptr;
};

// What one search keeps from one call to the next: a search resumed in steps (CvCurve) is one select_cv call per
// step, and each would otherwise sort and bin its sample again (its grids, its sorted sample, its scan's bounds and
// range). Pass the same object to every call of one search (the same problem, criterion and start, whose views must
// stay valid and unchanged while it is used); the first call fills it. Scores are the same bytes either way.
struct CvSearchKeep;  // cv_search.cpp
namespace mixed_detail {
struct MixedSearchKeep;  // mixed_detail.h: select_mixed's (stats/mixed.h)
}
struct CvSearchState {
  CvSearchState();
  ~CvSearchState();
  std::unique_ptr<CvSearchKeep> keep;
  std::unique_ptr<mixed_detail::MixedSearchKeep> mixed;
};

// Minimises the criterion's score (CV or AICc) over log h, starting from h (dims values, e.g. a rule of thumb), and
// writes the minimiser back into h. One common scale: h = s · h_start, s scanned log-spaced (6 points a decade) over
// the whole sensible range, from h_d = 1/4 of the median gap between the sorted distinct values of x_d to h_d = 4 × the
// range of x_d (the smallest and largest over the dimensions; up to 12 more points beyond an end while the best point
// sits there), then refined by Brent's method between the best scan point's neighbours to 0.5 %: the global minimum of
// the scan. Large bandwidths reach every key, so the scan's upper decade or two cost O(n²) each exactly. An exact
// (grid_tolerance 0) 1-D leave-one-out search of at least 2,000 points scores its scan points with h >= range(x)/64 on
// a fine grid (GridCv at 1e-6) instead, refines exactly around the best scan point and up to two more local minima of
// the scan within the grid's error of it, and returns only exact evaluations; the curve records the grid scores it
// scanned. A multi-dimensional search of the Gaussian Nadaraya–Watson CV (no observation weights) scans from the start
// (s = 1) upward, then downward, and stops each way where a lower bound on CV (cv_scan_bound.h) exceeds the best
// score found: the points it leaves out cannot be the scan's minimum. A 1-D leave-one-out scan of 2^17 points or more
// screens its exact points below the grid's reach on a subsample of rows (cv_band_screen.h): statistically, not
// provably, not its minimum; so does a 2-D one on the grid from 65,536 points (its grid points first, then its exact
// ones, each from the top down: cv_scan_planar.cpp). Per dimension: then coordinate descent, each h_d
// by Brent's method within a factor 4 (later 2) of its current value, the bracket moving while the minimum sits at its
// edge, sweeping until CV improves by less than 1e-7 (at most 12 sweeps). h stays positive and finite; `score` receives
// CV(h). `progress` may stop the search between evaluations (Cancelled; h and score are then left alone). `state`
// (may be null) keeps the search's sorted and binned sample between the calls of a search resumed in steps.
Result select_cv(const Problem& p, bool per_dimension, double* h, double* score, CvCurve* curve,
                 const Criterion& criterion = {}, const SearchProgress& progress = {}, CvSearchState* state = nullptr);

// The options and outcome of select_cv_gradient.
struct GradientSearch {
  // 0: the diagonal metric, one bandwidth per dimension, u_d = (q_d − k_d)/h_d. r >= 1: a linear metric
  // u = L(q − k), L an r × dims matrix (row-major in `transform`, which receives it), with unit bandwidths.
  int32_t rank = 0;
  double* transform = nullptr;  // rank × dims; the search starts from its first min(rank, dims) rows of diag(1/h)
  int32_t max_iterations = 100;
  double gradient_tolerance = 1e-5;     // stop when max |projected ∂CV/∂θ| <= this · CV
  double improvement_tolerance = 1e-9;  // stop when an iteration lowers CV by less than this, relatively
  int32_t iterations = 0;               // out: accepted L-BFGS steps
};

// The box of the diagonal search: log h_d stays within log(h_start,d) ± log(kBandwidthBox), so an irrelevant
// dimension (whose CV keeps falling as h_d → ∞) ends at 1000 × its start instead of running off to infinity.
constexpr double kBandwidthBox = 1e3;

// Minimises leave-one-out CV (Criterion's LeaveOneOut score, always exact: grid_tolerance is ignored) of the
// Nadaraya–Watson estimator by L-BFGS (lbfgs.h) on its exact gradient, starting from h (dims values, e.g. a rule of
// thumb) and writing the result back into h. The variables θ are log h_d (rank 0: projected steps within the box
// kBandwidthBox of the start) or the entries of L (rank r, unbounded). Each evaluation runs attention_forward() on
// the sample with the leave-one-out mask (f_{−i}(x_i) for every i, and the loss); an accepted point then runs
// attention_backward() with dOut_i = 2 (f_{−i}(x_i) − y_i) / n, whose kernel gradient is ∂CV/∂log h
// (rank 0), or whose query and key gradients on x' = L x give ∂CV/∂L = Σ_i (dq'_i + dk'_i) x_iᵀ (queries and keys
// are the same sample). Stops on a small projected gradient, a small relative improvement, max_iterations, or a
// line search that finds no decrease. Writes into h the best point evaluated (rank r: h_d = 1/‖L e_d‖, the
// bandwidth the metric has along axis d), into `score` its CV as the forward computes it (cv_score() agrees to
// float32 rounding), and records every evaluation on `curve` (resumable as select_cv's, with `gradients`).
// `progress` is called after each new evaluation and may stop the search (Cancelled; h and score left alone).
// BadArgument: local-linear, AICc, observation weights, blocked CV (exclude), the uniform kernel (no gradient) or
// p.heads != 1.
Result select_cv_gradient(const Problem& p, double* h, double* score, CvCurve* curve, const Criterion& criterion,
                          const SearchProgress& progress, GradientSearch* search);

}  // namespace ka
