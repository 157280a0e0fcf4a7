// Blocked CV on a grid (GridCv with exclude r > 0, grid.h): each held-out point's fit from the grid's moments at
// x_i less the exact contributions of the keys of its band |x_j − x_i| <= r (the point itself among them). The band
// is small next to the kernel's reach where the grid serves, and its keys are found through the runs of the sorted
// grid's cells, so a point costs O(keys in its band) more than leave-one-out.
#pragma once
#include <cstdint>

#include "engine/problem.h"

namespace ka {

struct BandPass {
  const double* at_node;  // the grid's moments at its nodes, `stride` doubles apart (S_a, then T_a per column)
  const double* slopes;   // per cell: the next node's moments less this node's
  int64_t stride, cells, width;
  int shift;             // log2 of the finest cells in one cell of this grid
  int finest;            // log2 of the finest grid's cells
  const int64_t* start;  // the finest cells' runs of sorted points (binning.h)
  int64_t points;        // the sorted points (those with ω > 0)
  const float* x;
  const float* y;  // width per point
  const float* w;  // null without observation weights
  double lo, range, r, served_above;
  KernelKind kind;
  float h;
  bool linear;   // local-linear (else Nadaraya–Watson)
  double* band;  // scratch: 3 + 2·width doubles
};

// Adds ω_i Σ_c (y_ic − f_{−band(i)}(x_i)_c)² over every sorted point to *sum. Returns false at the first point the
// grid cannot serve (its moments less the band leave too little weight, or local-linear's pivot would need its
// floor): the caller then scores the bandwidth exactly.
bool band_residuals(const BandPass& b, double* sum);

}  // namespace ka
