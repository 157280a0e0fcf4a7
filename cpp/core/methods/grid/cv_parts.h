// What the 1-D leave-one-out scores on the grid share (GridCv, grid.h; MixedGridCv, cv_mixed.h): the axis of a grid
// of 2^k cells over the sample's range, the moments a score reads cell by cell, and the local-linear fit from them.
#pragma once
#include <algorithm>
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_fit.h"
#include "kernel/kernels.h"
#include "methods/grid/plan.h"

namespace ka {

// The axis of `cells` cells from lo over `range` at bandwidth h: its nodes, the kernel's reach in taps, and whether
// convolve runs it by FFT (S_a and T_a of a column share a transform).
Axis cv_axis(double lo, double range, int64_t cells, KernelKind kind, float h);

// The moments at every output node of x (x.E × stride, stride = s + width·t with s = 3, t = 2 local-linear, else 1
// and 1): S_a for a < s from the channel Σω of `bins`, then per column T_a for a < t from the channels Σω·y
// (channel-major, `bin_stride` nodes apart); and per cell of the sample's nodes (output nodes L … L + cells) the
// slope of each moment across it (cells × stride), for lines moment = at + u·slope, u ∈ [0, 1].
Status cv_moments(KernelKind kind, float h, const Axis& x, const double* bins, int64_t bin_stride, int64_t width,
                  bool linear, Scratch<double>* moments, Scratch<double>* slopes);

// The local-linear fit T₀/S₀ + q(qT₀ − T₁)/π, q = S₁/S₀, from the moments: first_column_of_inverse for 2 × 2 in
// closed form, with its pivot floor π = max(S₂ − qS₁, kPivotFloor·S₂) and no slope where π is not positive.
// Leave-one-out CV serves only points whose pivot needs no floor (guard_free): the others run exactly, where the
// textbook solve replaces the guard (bandwidth.h).
inline bool guard_free(double s0, double s1, double s2) { return s2 - s1 / s0 * s1 >= kPivotFloor * s2; }
inline double linear_fit(double s0, double s1, double s2, double t0, double t1) {
  const double q = s1 / s0, pivot = std::max(s2 - q * s1, kPivotFloor * s2);
  return t0 / s0 + (pivot > 0 ? q * (q * t0 - t1) / pivot : 0.0);
}

}  // namespace ka
