// The cells a sparse row visits (sparse.cpp): the query's place in the cell grid, and the nearest admissible key by
// rings of cells, which sets the radius of the cells within reach. Internal to sparse.cpp, which alone includes it.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "methods/sparse_runs.h"

namespace ka {
namespace sparse {
namespace {

// What one row needs from the grid: the query in u units on the three axes and its clamped cell.
struct Position {
  double u[A] = {0, 0, 0};
  int64_t cell[A] = {0, 0, 0};
};

Position locate(const CellGrid& g, const float* q) {
  Position p;
  for (int64_t d = 0; d < g.dims; ++d) {
    const int a = int(A - g.dims + d);
    p.u[a] = double(q[d]) * g.inv_h[a];
    p.cell[a] = g.cell_of(a, p.u[a]);
  }
  return p;
}

// The smallest distance (u units, along any one axis) from the query to a key outside the box lo..hi; +inf when
// the box holds every cell. Every norm used here is at least the largest per-axis distance, so it bounds them all.
double outside_gap(const CellGrid& g, const Position& p, const int64_t* lo, const int64_t* hi) {
  double gap = kInf;
  for (int a = 0; a < A; ++a) {
    if (lo[a] > 0) gap = std::min(gap, std::max(0.0, p.u[a] - (g.origin[a] + double(lo[a]) * g.width[a]) - g.slack));
    if (hi[a] < g.n[a] - 1)
      gap = std::min(gap, std::max(0.0, g.origin[a] + double(hi[a] + 1) * g.width[a] - p.u[a] - g.slack));
  }
  return gap;
}

// The smallest ν over admissible keys (exponential kernels), by rings of cells around the query's cell, stopping
// when no key outside the rings searched can be nearer. +inf when no key is admissible.
double nearest_norm(const Query& qr, const Norm& norm, const Position& p) {
  const CellGrid& g = *qr.g;
  const Head& hd = *qr.hd;
  double best = kInf;
  for (int64_t r = 0;; ++r) {
    int64_t lo[A], hi[A];
    for (int a = 0; a < A; ++a) {
      lo[a] = std::max<int64_t>(0, p.cell[a] - r);
      hi[a] = std::min(g.n[a] - 1, p.cell[a] + r);
    }
    for (int64_t c0 = lo[0]; c0 <= hi[0]; ++c0)
      for (int64_t c1 = lo[1]; c1 <= hi[1]; ++c1) {
        const bool inner = std::abs(c0 - p.cell[0]) < r && std::abs(c1 - p.cell[1]) < r;
        for (int64_t c2 = lo[2]; c2 <= hi[2]; ++c2) {
          if (inner && std::abs(c2 - p.cell[2]) < r) {  // inside the previous ring: jump to its far side
            c2 = p.cell[2] + r - 1;
            continue;
          }
          const int64_t id = g.id(c0, c1, c2);
          const int64_t b = g.start[size_t(id)], e = g.start[size_t(id + 1)];
          if (!qr.masked) {  // in float32 lanes; rounded up a little, which only widens the radius
            const float nu = nearest_in_run(norm.squared, g, p.u, b, e);
            if (nu < INFINITY) best = std::min(best, double(nu) * (1 + 1e-5) + 1e-30);
            continue;
          }
          for (int64_t s = b; s < e; ++s) {
            if (!hd.allows(qr.i, g.order[size_t(s)])) continue;
            double nu = 0;
            for (int64_t d = 0; d < g.dims; ++d) {
              const int a = int(A - g.dims + d);
              nu += norm.of(p.u[a] - double(g.keys_t[size_t(d * g.stride + s)]) * g.inv_h[a]);
            }
            best = std::min(best, nu);
          }
        }
      }
    const double gap = outside_gap(g, p, lo, hi);
    if (gap == kInf || (best < kInf && norm.of(gap) >= best)) return best;
  }
}

}  // namespace
}  // namespace sparse
}  // namespace ka
