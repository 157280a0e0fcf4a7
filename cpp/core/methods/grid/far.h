// The rows beyond a 1-D or 2-D grid's sample that the grid itself cannot serve (grid_local_fit): the empty row of a
// compact kernel out of reach, a 1-D Gaussian's fit over the keys near the nearer end, or its far limit, and a 2-D
// Gaussian's from a model's side and corner tables (far2d.h).
#pragma once
#include <cstdint>

#include "engine/local_fit.h"
#include "methods/grid/plan.h"

namespace ka {

// Serves the rows far[0 … far_count) of f (queries outside the sample's box, on the grid of `axis`, dims of them;
// `total` the sample's Σω) into `out` as grid_local_fit documents; rows these rules do not serve are appended to
// exact (exact_count of them so far). *empty_row: the first row that is empty under EmptyPolicy::Error, or −1;
// *range_count: the Gaussian rows fitted over the keys near an end. `sorted` (may be null: one pass over the keys per
// call that has such rows) gives the keys at the ends in O(log n + k), the same keys in the same order; `tables` (may
// be null: made for this call) keeps the keys near each end and the far fits made from them between calls.
class SortedKeys;
struct FarTables;
Result far_rows(const Fit& f, const Axis* axis, int64_t dims, double total, const int64_t* far, int64_t far_count,
                const FitOut& out, int64_t* exact, int64_t* exact_count, int64_t* empty_row, int64_t* range_count,
                SortedKeys* sorted = nullptr, FarTables* tables = nullptr);

}  // namespace ka
