// A grid model's far tables (1-D ends, 2-D sides and corners) and the 2-D Gaussian rows beyond the grid's reach that
// they serve (far2d.cpp).
#pragma once
#include <cstdint>

#include "engine/local_fit.h"
#include "methods/grid/far_corner.h"
#include "methods/grid/far_side.h"
#include "methods/grid/far_table.h"
#include "methods/grid/plan.h"

namespace ka {

class SortedKeys;

// A model's tables: one per end in 1-D; in 2-D one per side (side[d][high]: beyond the box along axis d, on its high
// side, within it along the other axis) and one per corner (corner[high₁][high₂]).
struct FarTables {
  FarTable low, high;
  FarSide side[2][2];
  FarCorner corner[2][2];
};

// Serves the 2-D Gaussian rows far[0 … far_count) of f (queries outside the sample's box, on the grid of `axis`;
// `total` the sample's Σω) asking for their means alone (and `guarded`), from the side and corner tables of `tables`
// (far_side.h, far_corner.h), whose keys come from `sorted` in O(log n + k) (the run of x₁ behind an edge, or the bands
// of x₂ above or below the data); appends to exact the rows they cannot serve (a mask, other outputs, no model's sorted
// sample, a table that cannot meet the tolerance there). ε = kPivotFloor·τ for the tolerance τ the grid's nodes were
// sized for along the finer axis, as the 1-D far rules take it (far.cpp). *range_count counts the rows served.
Result far_rows_2d(const Fit& f, const Axis* axis, double total, const int64_t* far, int64_t far_count,
                   const FitOut& out, int64_t* exact, int64_t* exact_count, int64_t* range_count, SortedKeys* sorted,
                   FarTables* tables);

}  // namespace ka
