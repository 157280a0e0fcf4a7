// Binned local-polynomial regression in 1-D and 2-D (Wand 1994; Fan & Marron 1994): the sample is linearly binned
// onto a regular grid, the moments the estimator needs (Σw·zᵏ up to degree 2, Σw·y·zᵏ up to degree 1 and, for
// standard errors, Σw²·zᵏ) are discrete convolutions of the bins with the sampled kernel — separable in 2-D, since
// the distance kernels are products over dimensions — and each query reads them by (bi)linear interpolation between
// grid nodes. Cost O(n + G·min(L, log G) + I) for G nodes and a kernel L nodes wide per axis (each pass of the
// convolutions is a direct sum or an FFT, fft.h, whichever costs less), instead of O(n·I): what makes a bandwidth
// slider live and leave-one-out CV on a million points cheap.
#pragma once
#include <cstdint>

#include "engine/local_fit.h"
#include "base/scratch.h"

namespace ka {

// Grid nodes along one axis for a sample spread over `range` and bandwidth h at relative tolerance `tolerance`: a
// node spacing of about h·sqrt(12·tolerance) (binning and interpolation errors are O((spacing/h)²)), at least 64
// nodes and at most `most` (kMaxGridNodes, or a CV search's finest grid). Returns 0 when that many nodes would not
// reach the tolerance: the caller should run exactly.
constexpr int64_t kMaxGridNodes = int64_t(1) << 18;  // per grid: along the axis in 1-D, in all in 2-D
constexpr int64_t kMaxGridDims = 2;
int64_t grid_nodes(double range, double h, double tolerance, int64_t most = kMaxGridNodes);
// log2 of the cells of a 1-D CV search's finest grid (GridCv) for `points` points: about as many cells as points,
// from kMaxGridNodes up to 2^kMaxCvLevel. A search's grid then serves bandwidths down to about ten spacings, where its
// convolutions and the exact band's keys in reach cost alike (plan_band_cv); a model keeps kMaxGridNodes.
constexpr int kMaxCvLevel = 20;
int cv_finest_level(int64_t points);
// Nodes in all of a 2-D grid for `points` points (a model's or a CV score's): up to about four times as many as
// points, from kMaxGridNodes up to 2^kMaxCvLevel (1024²: 9 channels of doubles take 75 MB; a model's 15, with standard
// errors, 126). The CV minimum falls as n^(-1/6) and the grid's spacing with it: at kMaxGridNodes alone a 10⁶-point
// search's minimum (h ≈ 1.6 % of the range) lay below the grid's reach, and its exact scores and the model's exact fit,
// O(n²h²), took 996 s where R's loess takes 3.5. A surface with more structure has its minimum lower: at 10⁵ points,
// sin 6x₁ + sin 12x₂ at h = 0.0159, below the 2¹⁸ nodes' reach (0.0178) with as many nodes as points, where the
// search's exact scores took 9.4 s and the model's exact fit 2.7 (WebAssembly).
int64_t most_grid_nodes_2d(int64_t points);
// What the plan reads of a sample x (grid_nodes, grid_cv_pays_2d, the plan_* rules of methods/plan.h): its rows,
// columns and, for up to kMaxGridDims columns, each one's range (max − min of its float32 values, in double). Made
// from x in one pass, implicitly, where a plan is asked once; a search makes it once and asks the plan at every
// bandwidth (a pass per question, up to a dozen an evaluation, had been 8 % of a 10⁶-point 2-D search).
struct SampleExtent {
  int64_t rows = 0, cols = 0;
  double range[kMaxGridDims] = {0, 0};
  SampleExtent() = default;
  SampleExtent(ConstMatrix x);  // implicit: a sample stands for its extent
};

// Nodes per axis for a sample x (its keys) and bandwidths h (one per column): the most any axis needs, the same
// count along both axes in 2-D; 0 unless tolerance > 0, x has 1 or 2 columns and at least 2 rows, the kernel has a
// grid (a distance kernel other than Cauchy, which is not a product over dimensions), the grid stays within
// kMaxGridNodes along an axis and most_grid_nodes_2d(n) in all in 2-D, and its convolutions cost less than the exact
// fit of the sample at itself (a kernel wide against a fine grid, on a small sample, runs exactly; convolutions_pay in
// grid/plan.h).
int64_t grid_nodes(const SampleExtent& x, KernelKind kind, const float* h, double tolerance);

// The fit of local_fit(f, out), computed on a grid of `nodes` nodes per axis over the bounding box of
// f.problem.keys, whose output nodes extend the kernel's reach (reach_of × h) beyond the box on each side. Needs 1 or
// 2 dimensions, a distance kernel other than Cauchy, and of the masks at most leave_one_out (each sample point then
// loses its own contribution, exactly, from the interpolated moments); `out.self_weight` needs the queries to be the
// sample's points (query i is key i, or key f.query_keys[i]: a mixed regression's groups). A query within reach of the
// data is served from the grid, inside the box or outside it; the Laplacian reads the moments at the nearest point of
// the box and shifts them (beyond the data its weights along an axis share one factor), at any distance. Rows the grid
// cannot serve within its accuracy run exactly by local_fit: inside the box, those with too little weight for the
// grid's rounding (kServedShare in grid/plan.h); outside it, local-linear extrapolations worse conditioned than the
// data's edge (kEdgeAmplification; a 1-D Gaussian's go to the far rules below) and a compact kernel's rows within two
// spacings of its support's end. Every other row outside the box gets an answer without a pass over the sample: a
// compact kernel with no key within h along an axis gives the empty row by p.empty; a 1-D Gaussian beyond what the
// grid serves depends only on the keys near the nearer end whose weight still matters (those within t_cut of it,
// grid/far.cpp: the mass left out stays below the tolerance the nodes were sized for): a row asking for its mean alone
// reads the end's far table (grid/far_table.h: the fit as a function of the distance, exact at nodes 5 % apart and
// interpolated between them), O(1); a row asking for more is fitted exactly over those keys, O(k); where only the
// end's own keys matter it gets the far limit, the ω-weighted mean of y over them, in O(1); a pass over the keys per
// call (not per row) gathers and sorts them. 2-D Gaussian rows beyond the grid run exactly here; a grid model
// (model.h) serves those asking for their means alone from its side and corner far tables (grid/far2d.h), every
// local-linear row outside the box among them. The Nearest policy in 2-D and ends whose keys all have ω = 0 still run
// exactly. Rows not served by the grid get NaN self_weight and
// sum_sq_weights when self_weight is asked for (summarize_fit then counts them as empty rows). `exact_rows`, when
// given, receives how many rows ran exactly through local_fit over all keys (not counting error_estimate's probes);
// `range_rows` how many Gaussian rows beyond the grid were fitted over the keys near an end (1-D) or from a model's
// far tables (2-D).
//
// `error_estimate`, when given, receives max_i |f_grid(q_i) − f_exact(q_i)| / (max y − min y) over up to 64 of the
// queries spread evenly through them (exact fits of those rows), or 0 when there are no queries.
Result grid_local_fit(const Fit& f, int64_t nodes, const FitOut& out, double* error_estimate = nullptr,
                      int64_t* exact_rows = nullptr, int64_t* range_rows = nullptr);

// Leave-one-out CV of one 1-D sample at many bandwidths (a bandwidth search), on grids of 2^k + 1 nodes over the
// sample's range. The points are sorted by their cell on the finest grid (cv_finest_level), and linearly binned
// there, once; a coarser grid's bins are derived from those exactly (halve_bins), and its cells are runs of the
// finest ones. The grid of a bandwidth is therefore a function of the sample and the bandwidth alone: a score does
// not depend on which bandwidths were scored before it (a search resumed in steps gives the bytes of one call). An
// evaluation then costs O(G·L) for the convolutions plus one sequential pass over the points, cell by cell, that reads
// each cell's moments as lines across it, removes each point's own share (OwnShare, query.h) and sums the squared
// residuals. Rows the grid cannot serve (kServedShare, or a local-linear pivot the guard would raise) are fitted
// exactly over the keys in their reach, which the sorted points give (a pass over the sample each had cost a clustered
// sample most of its search). The sorted copy costs 8 bytes a point (12 with observation weights) and, at 10⁷ points
// natively, about 0.25 s once; it makes a pass about 8× cheaper than reading the moments in sample order (≈ 10 ms
// instead of ≈ 80). 2-D samples keep, for now, the per-evaluation path (cv_score through grid_local_fit).
class GridCv {
 public:
  // `f`: the sample as keys and queries (the same view), 1-D, one head, no masks but leave-one-out, the estimator
  // Nadaraya–Watson or local-linear (local-quadratic never suits), any observation weights; its views must outlive
  // this object. `tolerance` as in grid_nodes. `exclude` r > 0: blocked CV (bandwidth.h, Criterion::exclude), each
  // point's band |x_j − x_i| <= r left out of its fit exactly (cv_band.h). `aicc`: score() gives AICc instead
  // (stats/regression.h's aicc of summarize_fit's sums: each point's fit and its own weight ℓ_ii in it, the point
  // included), exclude must be 0.
  GridCv(const Fit& f, double tolerance, double exclude = 0, bool aicc = false);

  // Whether the sample suits the grid: finite keys spanning a range, valid weights, a kernel with a grid and
  // tolerance > 0. If not, every score() declines.
  bool suits() const { return suits_; }
  // The leave-one-out (or blocked) CV score of bandwidth h as cv_score defines it (+inf when a counted row is empty
  // or the sum is NaN), or its AICc (+inf where a point's design is singular in float64), with *served true; *served
  // false when the plan runs h exactly (plan_grid_cv_cells: no grid reaches the tolerance at h, or it costs more than
  // the exact score; nothing computed), or when blocked CV's band leaves a point too little of the grid's weight (the
  // caller scores h exactly). `why` (may be null; kReasonSize bytes) receives the plan's reason either way. `deferred`
  // (may be null): where given, the points the grid cannot serve are left out (*deferred true where there are any):
  // *score is then the others' sum over the total weight, a lower bound on the score.
  Result score(float h, double* score, bool* served, char* why = nullptr, bool* deferred = nullptr);
  // Whether score(h) would run on a grid (the plan gives h cells), without scoring it.
  bool serves(float h) const;

 private:
  Result sort_and_bin();
  // Adds ω_i Σ_c (y_ic − f_{−i}(x_i)_c)² of the exact fits of these sorted points to *sum: the float64 textbook solve
  // over each point's window of the sorted points (the cells within reach of the keys whose weight exceeds
  // 2^-(25 + log₂ n) of the nearest key's, or the support), not a pass over the sample. With `trace` (AICc): the fits
  // with the point included, their ℓ_ii added to *trace. A singular design makes *sum NaN.
  Result exact_rows_into(const int64_t* sorted, int64_t count, double* sum, double* trace = nullptr);

  Fit fit_;
  double tolerance_, exclude_;
  bool aicc_;
  float h_ = 1;  // fit_'s bandwidth
  bool suits_ = false;
  double lo_ = 0, range_ = 0, total_ = 0;
  int64_t counted_ = 0;  // points with ω > 0: the only ones a score reads
  bool sorted_ = false;  // the points are sorted and binned (on the first score that a grid serves)
  // The counted points in cell order (cell g holds start_[g] … start_[g+1] − 1): x, y (the row of each), ω (only
  // with observation weights); and the bins of that grid, channel-major: Σω, then Σω·y per column.
  Scratch<int64_t> start_;
  Scratch<float> x_, y_, w_;
  Scratch<double> bins_;
  int finest_ = 0;  // log2 of the finest grid's cells (cv_finest_level)
  // The bins of every coarser level, the one below the finest first, each channel-major as bins_ (level_offset(l)
  // nodes per channel before level l's; level_offset(−1) in all).
  Scratch<double> levels_;
  int64_t level_offset(int level) const;
};

}  // namespace ka
