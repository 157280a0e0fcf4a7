// Linear binning of a sample onto the grid's nodes (binning.h).
#include "methods/grid/binning.h"

#include <algorithm>
#include <cmath>

#include "base/simd.h"

namespace ka {

void column_range(ConstMatrix keys, int64_t d, int64_t first, int64_t end, float* lo, float* hi, bool* finite) {
  float l = *lo, h = *hi, check = 0;
  for (int64_t j = first; j < end; ++j) {
    const float x = keys.row(j)[d];
    l = std::min(l, x);
    h = std::max(h, x);
    check += x - x;  // NaN for a NaN or infinite x, and then for the sum
  }
  *lo = l;
  *hi = h;
  *finite = *finite && check == 0;
}

namespace {

// Linear binning of points [first, end) of a 1-D sample on the axis from lo, step apart (nodes of them), without
// Σω² (a fit or a CV score needs none): each point's weight and ω·y go to the two nodes around it, in proportion to
// its distance to them. Width 0: any number of value columns, else exactly that many (a constant).
template <int64_t Width>
void bin_line(double lo, double step, int64_t nodes, ConstMatrix keys, ConstMatrix values, const float* omega,
              int64_t first, int64_t end, double* count, double* sums) {
  const int64_t width = Width ? Width : values.cols, last = nodes - 2;
  const double scale = 1.0 / step;
  for (int64_t j = first; j < end; ++j) {
    const double t = (double(keys.row(j)[0]) - lo) * scale;  // ≥ 0: lo is the smallest key
    const int64_t g = std::min(last, int64_t(t));
    const double right = t - double(g), w = omega ? double(omega[j]) : 1.0;
    count[g] += w * (1 - right);
    count[g + 1] += w * right;
    const float* y = values.row(j);
    for (int64_t c = 0; c < width; ++c) {
      const double wy = w * double(y[c]);
      sums[g * width + c] += wy * (1 - right);
      sums[(g + 1) * width + c] += wy * right;
    }
  }
}

}  // namespace

void bin_sample(const Fit& f, const Axis* axis, int64_t dims, bool squares, double* count, double* count_sq,
                double* sums) {
  const Problem& p = f.problem;
  const int64_t n = p.keys.rows, width = p.values.cols;
  const float* omega = f.observation_weights;
  const auto weight_of = [&](int64_t j) { return omega ? double(omega[j]) : 1.0; };
  const Axis& x1 = axis[0];
  if (dims == 1 && !squares) {
    const auto bin = simd::keep_out_of_line(width == 1 ? &bin_line<1> : &bin_line<0>);
    for (int64_t j = 0; j < n; j += kBlock)
      bin(x1.lo, x1.step, x1.nodes, p.keys, p.values, omega, j, std::min(n, j + kBlock), count, sums);
  } else {
    for (int64_t j = 0; j < n; ++j) {
      int64_t g[kMaxGridDims] = {0, 0};
      double frac[kMaxGridDims] = {0, 0};
      for (int64_t d = 0; d < dims; ++d) {
        const double t = (double(p.keys.row(j)[d]) - axis[d].lo) / axis[d].step;
        g[d] = std::min<int64_t>(axis[d].nodes - 2, int64_t(std::floor(t)));
        frac[d] = t - double(g[d]);
      }
      const double w = weight_of(j);
      for (int c2 = 0; c2 < (dims == 2 ? 2 : 1); ++c2)
        for (int c1 = 0; c1 < 2; ++c1) {
          const double share = (c1 ? frac[0] : 1 - frac[0]) * (dims == 2 ? (c2 ? frac[1] : 1 - frac[1]) : 1.0);
          const int64_t cell = (g[0] + c1) + x1.nodes * (g[1] + c2);
          count[cell] += w * share;
          if (squares) count_sq[cell] += w * w * share;
          for (int64_t col = 0; col < width; ++col)
            sums[cell * width + col] += w * double(p.values.row(j)[col]) * share;
        }
    }
  }
}

void halve_bins(const double* f, int64_t cells, double* c) {
  double before = 0;  // f[2j − 1]
  for (int64_t j = 0; j < cells; ++j) {
    const double after = f[2 * j + 1], at = f[2 * j];
    c[j] = at + 0.5 * (before + after);
    before = after;
  }
  c[cells] = f[2 * cells] + 0.5 * before;
}

namespace {

// Where x falls on a grid of `cells` cells from lo, t = (x − lo)·scale nodes along: its cell, and t.
struct Cells {
  double lo, scale;
  int64_t cells;
  double at(float x) const { return (double(x) - lo) * scale; }
  int64_t of(float x) const { return std::min(cells - 1, int64_t(at(x))); }
};

// Counts the points [first, end) with ω > 0 into count[cell + 1].
void count_cells(const Cells& grid, const Fit& f, int64_t first, int64_t end, int64_t* count) {
  const ConstMatrix keys = f.problem.keys;
  const float* omega = f.observation_weights;
  for (int64_t i = first; i < end; ++i)
    if (!omega || omega[i] != 0) ++count[grid.of(keys.row(i)[0]) + 1];
}

// The sorted points: x, y (width per point) and ω (null without observation weights).
struct SortedPoints {
  float* x;
  float* y;
  float* w;
  int64_t width;
  void swap(int64_t a, int64_t b) const {
    std::swap(x[a], x[b]);
    for (int64_t c = 0; c < width; ++c) std::swap(y[a * width + c], y[b * width + c]);
    if (w) std::swap(w[a], w[b]);
  }
};

// Points to move: x_i = x[i·x_stride], y_ic = y[i·y_stride + c], ω_i = w[i] (w null: all ones).
struct Source {
  const float* x;
  int64_t x_stride;
  const float* y;
  int64_t y_stride;
  const float* w;
};

// Moves the points [first, end) of `from` with ω > 0 to `into`, point i to place next[key(x_i)]++. Weighted and
// Width (0: any) are constants, for loops without overhead in the common cases.
template <bool Weighted, int64_t Width, class Key>
void scatter(const Source& from, int64_t first, int64_t end, const Key& key, int64_t* next, const SortedPoints& into) {
  const int64_t width = Width ? Width : into.width;
  const float* x = from.x;
  const float* y = from.y;
  const float* w = from.w;
  const int64_t x_stride = from.x_stride, y_stride = from.y_stride;
  float* to_x = into.x;
  float* to_y = into.y;
  float* to_w = into.w;
  for (int64_t i = first; i < end; ++i) {
    if (Weighted && w[i] == 0) continue;
    const float at = x[i * x_stride];
    const int64_t k = next[key(at)]++;
    to_x[k] = at;
    for (int64_t c = 0; c < width; ++c) to_y[k * width + c] = y[i * y_stride + c];
    if (Weighted) to_w[k] = w[i];
  }
}

template <class Key>
void scatter(const Source& from, int64_t first, int64_t end, const Key& key, int64_t* next, const SortedPoints& into) {
  if (from.w)
    into.width == 1 ? scatter<true, 1>(from, first, end, key, next, into)
                    : scatter<true, 0>(from, first, end, key, next, into);
  else
    into.width == 1 ? scatter<false, 1>(from, first, end, key, next, into)
                    : scatter<false, 0>(from, first, end, key, next, into);
}

// The sort is a radix sort in two steps, each touching few memory pages at a time (a single scatter over tens of
// thousands of cells thrashed the TLB: 50 ns a point at 10⁷): first the points [first, end) with ω > 0 are moved
// to the run of their bucket, a group of 2^`low_bits` cells (next[b]: bucket b's next free place) …
void place_in_buckets(const Cells& grid, int low_bits, const Fit& f, int64_t first, int64_t end, int64_t* next,
                      const SortedPoints& into) {
  const Problem& p = f.problem;
  const Source from{p.keys.data, p.keys.stride, p.values.data, p.values.stride, f.observation_weights};
  const Cells local = grid;
  scatter(
      from, first, end, [&](float x) { return local.of(x) >> low_bits; }, next, into);
}

// … then each bucket, in cache, is sorted by cell (cells [first, end), cell g's run starting at start[g]; `next`
// is scratch for `end − first` cells): through `spare` (room for `room` points) when the bucket fits there, else in
// place, where each swap puts one point in its final place (a chain of dependent steps, several times slower).
void sort_bucket(const Cells& grid, const int64_t* start, int64_t first, int64_t end, int64_t* next,
                 const SortedPoints& points, const SortedPoints& spare, int64_t room) {
  std::copy(start + first, start + end, next);
  const int64_t base = start[first], count = start[end] - base, width = points.width;
  if (count <= room) {
    std::copy(points.x + base, points.x + base + count, spare.x);
    std::copy(points.y + base * width, points.y + (base + count) * width, spare.y);
    if (points.w) std::copy(points.w + base, points.w + base + count, spare.w);
    const Cells local = grid;
    scatter(
        Source{spare.x, 1, spare.y, width, points.w ? spare.w : nullptr}, 0, count,
        [&](float x) { return local.of(x) - first; }, next, points);
    return;
  }
  for (int64_t g = first; g < end; ++g)
    for (int64_t& k = next[g - first]; k < start[g + 1];) {
      const int64_t c = grid.of(points.x[k]);
      if (c == g)
        ++k;
      else
        points.swap(k, next[c - first]++);
    }
}

// A bucket sorted through a spare buffer holds at most this many points (a bucket of clustered data can hold them
// all; it is sorted in place instead).
constexpr int64_t kSpareRoom = int64_t(1) << 17;

// Linear binning of the sorted points of cells [first, end): Σω into bins[0 … cells], Σω·y of column c into
// bins[(1 + c)·(cells + 1) …]; each cell's shares summed before they are added to its two nodes.
void bin_cells(const Cells& grid, const int64_t* start, const float* x, const float* y, const float* w, int64_t width,
               int64_t first, int64_t end, double* bins) {
  const int64_t nodes = grid.cells + 1;
  for (int64_t g = first; g < end; ++g)
    for (int64_t channel = 0; channel <= width; ++channel) {
      double left = 0, right = 0;
      for (int64_t k = start[g]; k < start[g + 1]; ++k) {
        const double r = grid.at(x[k]) - double(g);
        const double v = (w ? double(w[k]) : 1.0) * (channel ? double(y[k * width + channel - 1]) : 1.0);
        left += v * (1 - r);
        right += v * r;
      }
      bins[channel * nodes + g] += left;
      bins[channel * nodes + g + 1] += right;
    }
}

}  // namespace

Status sort_and_bin_cells(const Fit& f, double lo, double range, int64_t counted, int level, Scratch<int64_t>* start,
                          Scratch<float>* x, Scratch<float>* y, Scratch<float>* w, Scratch<double>* bins) {
  const Problem& p = f.problem;
  const int64_t n = p.keys.rows, width = p.values.cols, cells = int64_t(1) << level;
  const bool weighted = f.observation_weights;
  const int low_bits = level - 8;  // 256 buckets
  const int64_t buckets = cells >> low_bits;
  const int64_t room = std::min(counted, kSpareRoom);
  Scratch<int64_t> next(std::max(buckets, int64_t(1) << low_bits));
  Scratch<float> spare_x(room), spare_y(room * width), spare_w(weighted ? room : 0);
  if (!start->reset_zeroed(cells + 1) || !next.ok() || !x->reset_zeroed(counted) || !y->reset_zeroed(counted * width) ||
      !w->reset_zeroed(weighted ? counted : 0) || !bins->reset_zeroed((1 + width) * (cells + 1)) || !spare_x.ok() ||
      !spare_y.ok() || !spare_w.ok())
    return Status::OutOfMemory;
  const Cells grid{lo, double(cells) / range, cells};
  const SortedPoints points{x->get(), y->get(), w->get(), width},
      spare{spare_x.get(), spare_y.get(), spare_w.get(), width};
  int64_t* at = start->get();
  const auto count = simd::keep_out_of_line(&count_cells);
  const auto place = simd::keep_out_of_line(&place_in_buckets);
  const auto sort = simd::keep_out_of_line(&sort_bucket);
  const auto bin = simd::keep_out_of_line(&bin_cells);
  for (int64_t i = 0; i < n; i += kBlock) count(grid, f, i, std::min(n, i + kBlock), at);
  for (int64_t g = 0; g < cells; ++g) at[g + 1] += at[g];
  for (int64_t b = 0; b < buckets; ++b) next.get()[b] = at[b << low_bits];
  for (int64_t i = 0; i < n; i += kBlock) place(grid, low_bits, f, i, std::min(n, i + kBlock), next.get(), points);
  for (int64_t b = 0; b < buckets; ++b)
    sort(grid, at, b << low_bits, (b + 1) << low_bits, next.get(), points, spare, room);
  for (int64_t g = 0; g < cells; g += kBlock)
    bin(grid, at, x->get(), y->get(), w->get(), width, g, std::min(cells, g + kBlock), bins->get());
  return Status::Ok;
}

}  // namespace ka
