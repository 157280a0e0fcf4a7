// The k-d tree of loess's interpolated surface (kd_tree.h).
#include "stats/loess/kd_tree.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/rare.h"
#include "engine/neighbours.h"
#include "stats/loess/id_table.h"

namespace ka::loess {
namespace {

// The tree is built once per fit over few cells (each holds at most ⌊n·span·cell⌋ points): its steps are compiled for
// size (base/rare.h, KA_COLD); the sort of a cell's points is the module's order_by.
struct Builder {
  const Sample& sample;
  KdTree& tree;
  int64_t capacity;            // R's nvmax = ncmax = max(200, n)
  IdTable ids;                 // every vertex by its coordinates: a cut reuses the ones that exist
  std::vector<double> values;  // one cell's coordinates along the cut, sorted
  std::vector<double> keys;    // ... in the cell's order
  std::vector<int64_t> order;  // ... the order that sorts them

  KA_COLD int32_t add_vertex(const double* v) {
    uint64_t hash = 0;
    for (int32_t j = 0; j < tree.dims; ++j) {
      const double c = v[j] + 0.0;  // −0 and +0 are one coordinate, as R compares them
      uint64_t bits;
      std::memcpy(&bits, &c, sizeof bits);
      hash = (hash ^ bits) * 0x100000001b3ULL;
    }
    const int32_t fresh = tree.vertex_count();
    const int32_t id = ids.find_or_insert(hash, fresh, [&](int32_t other) {
      const double* w = tree.vertex(other);
      for (int32_t j = 0; j < tree.dims; ++j)
        if (!(w[j] == v[j])) return false;
      return true;
    });
    if (id == fresh) tree.vertices.insert(tree.vertices.end(), v, v + tree.dims);
    return id;
  }

  // The median cut of cell p's points along `axis` after R's walk to a place between two different values; the
  // points are left sorted along the axis. Returns the last point of the lower part.
  KA_COLD int64_t median_cut(int64_t begin, int64_t end, int32_t axis) {
    int64_t* pts = tree.points.data();
    const int32_t d = tree.dims;
    const double* x = sample.x.data();
    const int64_t count = end - begin;
    values.resize(size_t(count));
    if (d == 1) {  // the working order is already sorted
      for (int64_t i = begin; i < end; ++i) values[size_t(i - begin)] = x[pts[i]];
    } else {
      // Ties keep the cell's order, not the points' index order as R's sort would: the cut falls between different
      // values (or, all equal, the points are one location), so the tree is the same.
      keys.resize(size_t(count));
      order.resize(size_t(count));
      for (int64_t i = 0; i < count; ++i) keys[size_t(i)] = x[pts[begin + i] * d + axis];
      order_by(keys.data(), order.data(), count);
      for (int64_t i = 0; i < count; ++i) values[size_t(i)] = keys[size_t(order[size_t(i)])];
      for (int64_t i = 0; i < count; ++i) order[size_t(i)] = pts[begin + order[size_t(i)]];  // the points, sorted
      std::copy(order.begin(), order.end(), pts + begin);
    }
    // R's m = ⌊(l + u)/2⌋ in 1-based positions l = begin + 1, u = end.
    const int64_t m = (begin + 1 + end) / 2 - 1;
    int64_t offset = 0;
    while (m + offset < end - 1 && m + offset >= begin) {
      if (values[size_t(m + offset - begin)] != values[size_t(m + offset + 1 - begin)]) return m + offset;
      offset = -offset;
      if (offset >= 0) ++offset;
    }
    return m;
  }

  KA_COLD void split(int32_t p, int32_t axis, double at, int64_t last) {
    const int32_t vc = tree.corners;
    std::vector<int32_t> lower(static_cast<size_t>(vc)), upper(static_cast<size_t>(vc));
    for (int32_t b = 0; b < vc; ++b) lower[size_t(b)] = upper[size_t(b)] = tree.corner_of(p, b);
    // Each corner on the lower side of the cut gets a partner on the cut plane (R's order: corners by increasing
    // index among those with bit `axis` clear).
    for (int32_t b = 0; b < vc; ++b) {
      if (b & (1 << axis)) continue;
      double v[kMaxDims];
      std::copy(tree.vertex(tree.corner_of(p, b)), tree.vertex(tree.corner_of(p, b)) + tree.dims, v);
      v[axis] = at;
      const int32_t id = add_vertex(v);
      lower[size_t(b | (1 << axis))] = id;
      upper[size_t(b)] = id;
    }
    const int32_t lo = int32_t(tree.cells.size()), hi = lo + 1;
    KdCell& cell = tree.cells[size_t(p)];
    cell.axis = axis;
    cell.split = at;
    cell.lower = lo;
    cell.upper = hi;
    const int64_t begin = cell.begin, end = cell.end;
    tree.cells.push_back(KdCell{-1, 0, 0, 0, begin, last + 1});
    tree.cells.push_back(KdCell{-1, 0, 0, 0, last + 1, end});
    for (const int32_t id : lower) tree.corner.push_back(id);
    for (const int32_t id : upper) tree.corner.push_back(id);
  }

  // Whether cell p stays a leaf; else the cut (axis, value, last point of the lower part).
  KA_COLD bool leaf(int32_t p, int64_t fc, int32_t* axis, double* at, int64_t* last) {
    const KdCell cell = tree.cells[size_t(p)];
    const int32_t d = tree.dims, vc = tree.corners;
    const double *lo = tree.vertex(tree.corner_of(p, 0)), *hi = tree.vertex(tree.corner_of(p, vc - 1));
    double diam = 0;
    for (int32_t j = 0; j < d; ++j) diam += (hi[j] - lo[j]) * (hi[j] - lo[j]);
    if (cell.end - cell.begin <= fc || std::sqrt(diam) <= 0) return true;
    if (capacity < int64_t(tree.cells.size()) + 2 || double(capacity) < tree.vertex_count() + vc / 2.0) return true;
    // The coordinate along which the cell's points spread widest (the first of equals).
    double widest = -1;
    for (int32_t j = 0; j < d; ++j) {
      double a = sample.x[size_t(tree.points[size_t(cell.begin)] * d + j)], b = a;
      for (int64_t i = cell.begin; i < cell.end; ++i) {
        const double v = sample.x[size_t(tree.points[size_t(i)] * d + j)];
        a = std::min(a, v);
        b = std::max(b, v);
      }
      if (b - a > widest) widest = b - a, *axis = j;
    }
    *last = median_cut(cell.begin, cell.end, *axis);
    *at = sample.x[size_t(tree.points[size_t(*last)] * d + *axis)];
    return lo[*axis] == *at || hi[*axis] == *at;
  }
};

}  // namespace

KA_COLD Status build_kd_tree(const Sample& sample, int64_t fc, KdTree* out) {
  KdTree& tree = *out;
  const int32_t d = sample.dims;
  tree.dims = d;
  tree.corners = 1 << d;
  tree.vertices.clear();
  tree.cells.clear();
  tree.corner.clear();
  tree.points.resize(size_t(sample.n));
  for (int64_t i = 0; i < sample.n; ++i) tree.points[size_t(i)] = i;
  Builder builder{sample, tree, std::max<int64_t>(200, sample.n), {}, {}, {}, {}};
  // The root box: the data's, widened at each end by 0.5 % of its extent (R's ehg126).
  double lower[kMaxDims], upper[kMaxDims];
  for (int32_t j = 0; j < d; ++j) {
    const double a = sample.lower[size_t(j)], b = sample.upper[size_t(j)];
    const double margin = 0.005 * std::max(b - a, 1e-10 * std::max(std::fabs(a), std::fabs(b)) + 1e-30);
    lower[j] = a - margin;
    upper[j] = b + margin;
  }
  for (int32_t b = 0; b < tree.corners; ++b) {
    double v[kMaxDims];
    for (int32_t j = 0; j < d; ++j) v[j] = (b >> j) & 1 ? upper[j] : lower[j];
    tree.corner.push_back(builder.add_vertex(v));
  }
  tree.cells.push_back(KdCell{-1, 0, 0, 0, 0, sample.n});
  for (int32_t p = 0; p < int32_t(tree.cells.size()); ++p) {
    int32_t axis = 0;
    double at = 0;
    int64_t last = 0;
    if (!builder.leaf(p, fc, &axis, &at, &last)) builder.split(p, axis, at, last);
  }
  return Status::Ok;
}

int kd_descend(const KdTree& tree, const double* z, int32_t start, int32_t* path) {
  int len = 0;
  int32_t c = start;
  path[len++] = c;
  while (tree.cells[size_t(c)].axis >= 0 && len < kMaxDepth) {
    const KdCell& cell = tree.cells[size_t(c)];
    c = z[cell.axis] <= cell.split ? cell.lower : cell.upper;
    path[len++] = c;
  }
  return len;
}

}  // namespace ka::loess
