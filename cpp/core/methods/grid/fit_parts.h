// The steps of grid_local_fit (grid.h), for the callers that keep some of them from call to call (GridModel keeps
// the key ranges, the bins and the moments): check, lay the axes out, bin and convolve, serve the queries.
#pragma once
#include <cstdint>

#include "engine/local_fit.h"
#include "methods/grid/plan.h"

namespace ka {

// grid_local_fit's argument checks (shape, kernel, masks, node count, observation weights). A model checks its
// sample's observation weights once (check_observation_weights, GridModel::ready) and each call's shape with
// `weights_checked`, so that a call passes over no n-long array.
Status check_grid_fit(const Fit& f, int64_t nodes, const FitOut& out, bool weights_checked = false);

// Each column's smallest and largest key; false when one is NaN or infinite (the fit then runs exactly).
bool key_ranges(ConstMatrix keys, float* lo, float* hi);

// The axes of a grid of `nodes` nodes per axis over the box [lo, hi] at f's kernel and bandwidths: spacing, taps
// per side (the kernel's reach, capped at the node count), output nodes and which passes run by FFT; `box_only`: a 2-D
// fit of the sample at itself, whose moments hold the box's output nodes alone (Axis::held).
void lay_axes(const Fit& f, int64_t nodes, const float* lo, const float* hi, Axis* axis, bool box_only = false);

// Σω and Σω² over the sample (n each without observation weights).
void sample_totals(const Fit& f, double* total, double* total_sq);

// Entries per output node of convolve_moments' moments for f's estimator, dimensions and columns, with or without
// the Σ K²·ω² moments (NodeMoments).
int64_t moment_stride(const Fit& f, bool squares);

// The rest of grid_local_fit from the moments of the grid `axis` (convolve_moments, with the Σ K²·ω² moments when
// `squares`, as they must be when out asks for standard errors or effective keys): each query from the interpolated
// moments, the far rules and the exact rows, and the error estimate. `sorted` (a model's, may be null) serves the
// rows the grid does not: the far rules' end keys, and each exact row (and error probe) over the keys in its reach
// (SortedKeys::exact_rows), so that no call passes over the sample; prepared on first need. Without it (or with a
// mask) every such row runs over all keys, as grid_local_fit does. `tables` (a model's, may be null) keeps the far
// rules' keys near each end and their fits between calls (far_table.h).
class SortedKeys;
struct FarTables;
Result serve_grid(const Fit& f, const Axis* axis, const double* moments, double total, double total_sq, bool squares,
                  const FitOut& out, double* error_estimate, int64_t* exact_rows_out, int64_t* range_rows_out,
                  SortedKeys* sorted = nullptr, FarTables* tables = nullptr);

}  // namespace ka
