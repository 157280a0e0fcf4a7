// Binned local-polynomial regression in 1-D and 2-D (Wand 1994; Fan & Marron 1994): the sample is linearly binned
// onto a regular grid, the moments the estimator needs (Σw·zᵏ up to degree 2, Σw·y·zᵏ up to degree 1 and, for
// standard errors, Σw²·zᵏ) are discrete convolutions of the bins with the sampled kernel — separable in 2-D, since
// the distance kernels are products over dimensions — and each query reads them by (bi)linear interpolation between
// grid nodes. Cost O(n + G·L + I) for G nodes and a kernel L nodes wide per axis, instead of O(n·I): what makes a
// bandwidth slider live and leave-one-out CV on a million points cheap.
#pragma once
#include <cstdint>

#include "local_fit.h"

namespace ka {

// Grid nodes along one axis for a sample spread over `range` and bandwidth h at relative tolerance `tolerance`: a
// node spacing of about h·sqrt(12·tolerance) (binning and interpolation errors are O((spacing/h)²)), at least 64
// nodes and at most kMaxGridNodes. Returns 0 when that many nodes would not reach the tolerance: the caller should
// run exactly.
constexpr int64_t kMaxGridNodes = int64_t(1) << 18;  // per grid: along the axis in 1-D, in all in 2-D
constexpr int64_t kMaxGridDims = 2;
int64_t grid_nodes(double range, double h, double tolerance);
// Nodes per axis for a sample x (its keys) and bandwidths h (one per column): the most any axis needs, the same
// count along both axes in 2-D; 0 unless tolerance > 0, x has 1 or 2 columns and at least 2 rows, the kernel has a
// grid (a distance kernel other than Cauchy, which is not a product over dimensions) and the grid stays within
// kMaxGridNodes.
int64_t grid_nodes(ConstMatrix x, KernelKind kind, const float* h, double tolerance);

// The fit of local_fit(f, out), computed on a grid of `nodes` nodes per axis over the bounding box of
// f.problem.keys. Needs 1 or 2 dimensions, a distance kernel other than Cauchy, and of the masks at most leave_one_out (each sample point then loses its own
// contribution, exactly, from the interpolated moments); `out.self_weight` needs the queries to be the sample. Queries
// the grid cannot serve (outside the kernel's reach of every bin, or empty there) are computed exactly by local_fit,
// so the empty-row policy and the far-query limits are those of the exact engine; so are queries outside the bounding
// box of the sample, where local-linear extrapolation would amplify the grid's errors. Their self_weight and
// sum_sq_weights are NaN when self_weight is asked for (summarize_fit then counts them as empty rows).
//
// `error_estimate`, when given, receives max_i |f_grid(q_i) − f_exact(q_i)| / (max y − min y) over up to 64 of the
// queries spread evenly through them (exact fits of those rows), or 0 when there are no queries.
Result grid_local_fit(const Fit& f, int64_t nodes, const FitOut& out, double* error_estimate = nullptr);

}  // namespace ka
