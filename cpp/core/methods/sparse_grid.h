// The spatial index of sparse.h: a uniform cell grid over one head's keys in bandwidth units (u = x / h), with the
// keys sorted by cell and a summed-area table of the cell counts.
//
// Why a uniform grid and not a k-d tree: in at most 3 dimensions, at a query radius known in units of h (the kernel's
// reach), a grid finds the cells in reach by arithmetic, with no tree walk and no branchy traversal; keys sorted by
// cell make each row of cells along the last axis one contiguous run of keys, which the SIMD loop consumes as the
// exact engine consumes a tile; it builds in O(J) by a counting sort; and the summed-area table counts the keys of
// any box of cells in O(1), which is what the dropped-mass bound needs. A k-d tree adapts better to strongly
// clustered data; here the cell count is capped at J, so clustered data costs more keys per cell (time), never a
// wrong answer or a looser certificate.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "engine/head.h"
#include "base/rare.h"
#include "base/simd.h"

namespace ka {

struct CellGrid {
  static constexpr int kAxes = 3;
  int64_t dims = 0;                  // dimension d of the head lives on axis kAxes − dims + d; others have 1 cell
  int64_t n[kAxes] = {1, 1, 1};      // cells per axis
  double origin[kAxes] = {0, 0, 0};  // lowest key coordinate (u units)
  double width[kAxes] = {1, 1, 1};   // cell width (u units)
  double inv_h[kAxes] = {1, 1, 1};   // 1 / bandwidth
  // Rounding allowance (u units) subtracted from every gap: a key is assigned to its cell by a rounded division,
  // so it may sit a few ulps outside the cell's computed bounds.
  double slack = 0;
  int64_t stride = 0;                   // J rounded up, plus one batch: sorted arrays may be read a batch past a run
  std::vector<int64_t> start;           // cells + 1: keys of cell c are [start[c], start[c + 1]) in sorted order
  std::vector<int64_t> sat;             // (n0 + 1)(n1 + 1)(n2 + 1): keys in cells with every index below (a, b, c)
  std::vector<int32_t> order;           // sorted position → original key index
  std::vector<float> keys_t, values_t;  // dims × stride and width × stride, sorted, zero-padded

  int64_t id(int64_t c0, int64_t c1, int64_t c2) const { return (c0 * n[1] + c1) * n[2] + c2; }
  int64_t cell_of(int a, double u) const {
    const double c = std::floor((u - origin[a]) / width[a]);
    return c < 0 ? 0 : c >= double(n[a]) ? n[a] - 1 : int64_t(c);
  }
  // Distance along axis a from u to cell c (less the slack, at least 0).
  double gap(int a, int64_t c, double u) const {
    const double lo = origin[a] + double(c) * width[a], hi = origin[a] + double(c + 1) * width[a];
    return std::max(0.0, std::max(lo - u, u - hi) - slack);
  }
  // Keys in the box of cells lo..hi (inclusive, per axis); 0 when the box is empty.
  int64_t count(const int64_t* lo, const int64_t* hi) const {
    for (int a = 0; a < kAxes; ++a)
      if (lo[a] > hi[a]) return 0;
    const int64_t s1 = n[1] + 1, s2 = n[2] + 1;
    const auto at = [&](int64_t a, int64_t b, int64_t c) { return sat[size_t((a * s1 + b) * s2 + c)]; };
    const int64_t a0 = lo[0], a1 = hi[0] + 1, b0 = lo[1], b1 = hi[1] + 1, c0 = lo[2], c1 = hi[2] + 1;
    return at(a1, b1, c1) - at(a0, b1, c1) - at(a1, b0, c1) - at(a1, b1, c0) + at(a0, b0, c1) + at(a0, b1, c0) +
           at(a1, b0, c0) - at(a0, b0, c0);
  }
};

// Once per call and head, O(J + cells): compiled for size (base/rare.h).

// Builds the grid of head `hd` with cells of about `cell` u units (enlarged until there are at most max(J, 1)
// cells). Values are copied only when hd.values has columns.
KA_COLD inline void build_grid(const Head& hd, double cell, CellGrid& g) {
  const int64_t J = hd.keys.rows, dims = hd.keys.cols, width = hd.values.cols;
  constexpr int A = CellGrid::kAxes;
  g = CellGrid{};
  g.dims = dims;
  double span[A] = {0, 0, 0}, scale = 1;
  for (int64_t d = 0; d < dims; ++d) {
    const int a = int(A - dims + d);
    g.inv_h[a] = 1.0 / double(hd.kernel.bandwidth[d]);
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t j = 0; j < J; ++j) {
      const double u = double(hd.keys.row(j)[d]) * g.inv_h[a];
      lo = std::min(lo, u);
      hi = std::max(hi, u);
    }
    g.origin[a] = J ? lo : 0;
    span[a] = J ? hi - lo : 0;
    scale = std::max({scale, std::fabs(lo), std::fabs(hi)});
  }
  g.slack = 1e-9 * scale;
  const double cap = double(std::max<int64_t>(J, 1));
  for (;;) {
    double cells = 1;
    for (int a = 0; a < A; ++a) {
      g.width[a] = cell;
      g.n[a] = span[a] > 0 ? int64_t(std::min(std::ceil(span[a] / cell), 1048576.0)) : 1;
      g.n[a] = std::max<int64_t>(g.n[a], 1);
      cells *= double(g.n[a]);
    }
    if (cells <= cap) break;
    const double ratio = cells / cap;  // grown by its dims-th root (no std::pow: issue 21, download size)
    cell *= (dims == 1 ? ratio : dims == 2 ? std::sqrt(ratio) : std::cbrt(ratio)) * 1.001;
  }
  const int64_t total = g.n[0] * g.n[1] * g.n[2];
  std::vector<int64_t> cell_of_key(static_cast<size_t>(J));
  g.start.assign(size_t(total + 1), 0);
  for (int64_t j = 0; j < J; ++j) {
    int64_t c[A] = {0, 0, 0};
    for (int64_t d = 0; d < dims; ++d) {
      const int a = int(A - dims + d);
      c[a] = g.cell_of(a, double(hd.keys.row(j)[d]) * g.inv_h[a]);
    }
    cell_of_key[size_t(j)] = g.id(c[0], c[1], c[2]);
    ++g.start[size_t(cell_of_key[size_t(j)] + 1)];
  }
  for (int64_t c = 0; c < total; ++c) g.start[size_t(c + 1)] += g.start[size_t(c)];
  // Summed-area table: sat(a, b, c) = keys in cells [0, a) × [0, b) × [0, c).
  const int64_t s1 = g.n[1] + 1, s2 = g.n[2] + 1;
  g.sat.assign(size_t((g.n[0] + 1) * s1 * s2), 0);
  for (int64_t a = 1; a <= g.n[0]; ++a)
    for (int64_t b = 1; b <= g.n[1]; ++b)
      for (int64_t c = 1; c <= g.n[2]; ++c) {
        const int64_t id = g.id(a - 1, b - 1, c - 1);
        const int64_t here = g.start[size_t(id + 1)] - g.start[size_t(id)];
        const auto at = [&](int64_t x, int64_t y, int64_t z) { return g.sat[size_t((x * s1 + y) * s2 + z)]; };
        g.sat[size_t((a * s1 + b) * s2 + c)] = here + at(a - 1, b, c) + at(a, b - 1, c) + at(a, b, c - 1) -
                                               at(a - 1, b - 1, c) - at(a - 1, b, c - 1) - at(a, b - 1, c - 1) +
                                               at(a - 1, b - 1, c - 1);
      }
  // Counting sort: keys keep their original order within a cell.
  g.order.resize(size_t(J));
  std::vector<int64_t> next(g.start.begin(), g.start.end() - 1);
  for (int64_t j = 0; j < J; ++j) g.order[size_t(next[size_t(cell_of_key[size_t(j)])]++)] = int32_t(j);
  g.stride = simd::round_up(J) + simd::kLanes;
  g.keys_t.assign(size_t(dims * g.stride), 0.0f);
  g.values_t.assign(size_t(width * g.stride), 0.0f);
  for (int64_t s = 0; s < J; ++s) {
    const int64_t j = g.order[size_t(s)];
    for (int64_t d = 0; d < dims; ++d) g.keys_t[size_t(d * g.stride + s)] = hd.keys.row(j)[d];
    for (int64_t c = 0; c < width; ++c) g.values_t[size_t(c * g.stride + s)] = hd.values.row(j)[c];
  }
}

}  // namespace ka
