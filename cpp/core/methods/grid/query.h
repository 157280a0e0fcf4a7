// Where a query sits on a grid of moments (grid_local_fit's output nodes) and its moments there: what serve_grid
// and the grid's derivatives (gradient.h) read per query.
#pragma once
#include <cstdint>

#include "methods/grid/plan.h"

namespace ka {

// Where one query sits on the grid: the output node e below it and its fraction of a spacing on each axis, the
// offset δ (bandwidths) from where its moments are read, and whether the grid can serve it.
struct GridQuery {
  int64_t e[kMaxGridDims] = {0, 0};
  double frac[kMaxGridDims] = {0, 0}, delta[kMaxGridDims] = {0, 0};
  bool inside = true, on_grid = true, finite = true, kink = false;
};

// Where q (dims coordinates) sits on the grid of `axis`; `laplacian` reads the moments at the nearest point of the box
// (query.cpp says why), `compact` marks the rows beyond a compact kernel's support or on its kink.
GridQuery locate(const float* q, const Axis* axis, int64_t dims, bool laplacian, bool compact);

// The moments at query g into v (layout.stride() entries, as `layout` lays them out): interpolated between the output
// nodes around it, then moved to the query by δ where they were read elsewhere.
void moments_at(const GridQuery& g, const double* mom, const Axis* axis, int64_t dims, const NodeMoments& layout,
                double* v);

// A sample point's own share of the moments read where it lies (leave-one-out takes it out): binned to the nodes
// around it by shares (1 − f, f) along an axis and read back by the same shares, it meets itself through the taps
// K(0) = 1 and K(±r), r = step/h, so its Σ K·uᵃ along that axis is A₀ = 1 − f(1 − f)·zero, A₁ = 0 (the offsets ±r
// cancel) and A₂ = f(1 − f)·two, where the exact fit's are 1, 0 and 0: the difference, up to (spacing/h)²/4 of its
// weight, is nothing beside many neighbours but had left a held-out point with few of them most of a 2-D score's error
// (1.7 times the tolerance on clustered points, 26 where a point has two neighbours; cv_scan_2d_test.cpp). In 2-D the
// products over the axes; Σ K²·uᵃ (B) through K(r)².
struct OwnShare {
  double zero[2] = {0, 0}, two[2] = {0, 0};  // 2(1 − K(r)) and 2K(r)·r²; [1]: the same with K(r)² (B's taps)
  OwnShare() = default;
  OwnShare(KernelKind kind, const Axis& axis);  // the taps as convolve_moments and cv_moments lay them
  double s0(double f, bool squared = false) const { return 1 - f * (1 - f) * zero[squared]; }
  double s2(double f, bool squared = false) const { return f * (1 - f) * two[squared]; }
};
struct OwnTerms {
  double s[6], b[6];  // Σ K·uᵏ and Σ K²·uᵏ of a unit weight, kPowers order (1-D: the first three, powers of u)
};
OwnTerms own_terms(const GridQuery& g, const OwnShare* axes, int64_t dims);

// The index in kPowers order (convolution.h) of the product of design columns r and c (0: the constant, 1 … dims:
// the offsets): the moment that sits at (r, c) of A and B.
inline int64_t product_power(int64_t r, int64_t c, int64_t dims) {
  if (r == 0 || c == 0) return r + c;
  if (dims == 1) return 2;
  return r == c ? (r == 1 ? 3 : 5) : 4;
}

}  // namespace ka
