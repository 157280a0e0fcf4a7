// The k-d tree of loess's interpolated surface, built as R's ehg126/ehg124/ehg125/ehg129 build it (Cleveland &
// Grosse 1991, §4): cells cut at the median of their widest coordinate until they hold at most fc points, and the
// cells' corners as the vertices where local fits are made.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/status.h"
#include "stats/loess/sample.h"

namespace ka::loess {

struct KdCell {
  int32_t axis = -1;             // the coordinate cut, or -1 for a leaf
  double split = 0;              // points with coordinate <= split go to the lower child
  int32_t lower = 0, upper = 0;  // the children (cells with axis >= 0)
  int64_t begin = 0, end = 0;    // the cell's points: KdTree::points[begin, end)
};

struct KdTree {
  int32_t dims = 1;
  int32_t corners = 2;           // 2^dims vertices per cell
  std::vector<double> vertices;  // vertex count × dims, scaled coordinates
  std::vector<KdCell> cells;     // cells[0] is the root; children follow their parents
  std::vector<int32_t> corner;   // cells × corners: corner b has coordinate j at the cell's upper end iff bit j of b
  std::vector<int64_t> points;   // working-order indices; each cell's are a range of it

  int32_t vertex_count() const { return int32_t(vertices.size() / size_t(dims)); }
  const double* vertex(int32_t v) const { return vertices.data() + size_t(v) * size_t(dims); }
  int32_t corner_of(int32_t cell, int32_t b) const { return corner[size_t(cell) * size_t(corners) + size_t(b)]; }
};

// Builds the tree of the sample with leaves of at most fc points (fc = ⌊n·span·cell⌋ in R). The root is the box of
// the data widened by 0.5 % of its extent (at least 1e-10 of the coordinate's magnitude) at each end. A cell is cut
// while it holds more than fc points and R's workspace (max(200, n) cells and vertices) allows: along the
// coordinate where its points spread widest (the first such), at the median point, moved to the nearest place where
// two sorted values differ (R's walk: offsets 0, +1, −1, +2, ...) so that ties stay together; no cut when that
// value is on the cell's boundary. The cut's new vertices are shared with the cells that already have them.
Status build_kd_tree(const Sample& sample, int64_t fc, KdTree* out);

// The leaf holding z (scaled coordinates, inside the root box): the descent R's ehg128 makes, lower child when
// z[axis] <= split. path (capacity kMaxDepth) receives the cells from the root to the leaf; returns its length.
constexpr int kMaxDepth = 64;
int kd_descend(const KdTree& tree, const double* z, int32_t start, int32_t* path);

}  // namespace ka::loess
