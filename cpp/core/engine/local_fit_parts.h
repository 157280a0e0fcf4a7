// The parts of the exact local fit (local_fit.h) that its two files share: the shape of a fit, a query's moments, a
// task's scratch for one key tile, and the loops over a tile's keys that depend on the kernel and the shape
// (local_fit_tiles.cpp), which local_fit.cpp reaches through pointers from its blocks of queries and rows.
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_fit.h"
#include "engine/online_softmax.h"
#include "engine/shifted_sums.h"
#include "engine/tile_boxes.h"

namespace ka {
namespace local_fit_parts {

using local_fit_tiles::TileBoxes;

// A fit's local design: p design columns z (design_columns) of a polynomial of `degree`, dims key coordinates, width
// value columns; with_b: the sums of squared weights are kept too (Σℓ² or effective keys are asked for).
struct Shape {
  int64_t dims, width, p;
  bool with_b;
  int degree;
  MomentLayout layout() const { return {p, width, with_b}; }
};

// The moments of one query (MomentSums, shifted_sums.h), in units of 2^max (log2, as the float32 scores), and
// whether float32 was not enough for the row (it is then recomputed in double).
struct Moments : MomentSums<double, true> {
  using MomentSums<double, true>::MomentSums;
  bool redo = false;
};

// Per-task scratch: one packed tile, and the tile's design columns z and weighted ones w·z (p rows of kKeyTile, in
// design_row's order; z's first row holds ones).
struct TileWork {
  Scratch<float> keys_t, values_t, log_omega, scores, bias, z, wz, factors, inv_h;  // log_omega: log2 ω per key
  TileWork(const Shape& s)
      : keys_t(s.dims * kKeyTile),
        values_t(s.width * kKeyTile),
        log_omega(kKeyTile),
        scores(kKeyTile),
        bias(kKeyTile),
        z(s.p * kKeyTile),
        wz(s.p * kKeyTile),
        factors(s.dims),
        inv_h(s.dims) {}
  bool ok() const {
    return keys_t.ok() && values_t.ok() && log_omega.ok() && scores.ok() && bias.ok() && z.ok() && wz.ok() &&
           factors.ok() && inv_h.ok();
  }
};

// Adds one tile's weights 2^(score − max)·ω, and their products with the design and the values, to the moments.
using Accumulate = void (*)(const KeyTile&, const float* scores, const float* q, TileWork&, const Shape&, Moments&);
// The instance for a shape: fused in registers for the common ones (p <= 3, one value column: degrees 0 and 1 in 1-D
// and 2-D, degree 2 in 1-D), in passes of registers for degree 2 in 2-D with one value column, else any.
Accumulate accumulate_for(const Shape& s);

// scores[c] = log2 K((q − key c)/h) for a packed tile's keys.
using KeyScores = void (*)(const float* q, const KeyTile&, const float* factors, int64_t dims, float* scores);

// What depends on the kernel, once per kernel: the per-key loops (key_scores, tile_bounds) and the bandwidth factor.
// The rest of the fit (per query block, per row, per tile decision) is the same code for every kernel.
struct KernelLoops {
  KeyScores key_scores;
  local_fit_tiles::TileBounds tile_bounds;
  float (*dimension_factor)(float);
};
KernelLoops kernel_loops(KernelKind kind);  // a distance kernel

}  // namespace local_fit_parts
}  // namespace ka
