// The key tiles' bounding boxes of the exact local fit (local_fit.cpp), by which it skips the tiles that cannot
// matter to a query.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>

#include "engine/exact_narrow.h"

namespace ka {
namespace local_fit_tiles {

using simd::Batch;
using simd::kLanes;

// Per key tile, dimension-major and padded to whole batches of tiles (dims × padded): the bounding box (lo, hi) and
// the coordinates of the tile's middle key. A tile with a NaN key gets an unbounded box, so it is never skipped
// and its NaN reaches the output. `sorted`: every key's first coordinate is a number and they do not decrease, so the
// tiles' first-coordinate intervals are in order and a query's tiles can be found by bisection (row_window).
struct TileBoxes {
  int64_t tiles, padded, dims;
  Scratch<float> lo, hi, mid;
  bool sorted = true;
  explicit TileBoxes(const Head& hd)
      : tiles((hd.keys.rows + kKeyTile - 1) / kKeyTile),
        padded(simd::round_up(tiles)),
        dims(hd.keys.cols),
        lo(padded * dims),
        hi(padded * dims),
        mid(padded * dims) {
    if (!ok()) return;
    const float inf = std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < hd.keys.rows && sorted; ++j)
      sorted = hd.keys.row(j)[0] == hd.keys.row(j)[0] && (j == 0 || !(hd.keys.row(j)[0] < hd.keys.row(j - 1)[0]));
    for (int64_t d = 0; d < dims; ++d) {
      std::fill(lo.get() + d * padded, lo.get() + (d + 1) * padded, 0.0f);
      std::fill(hi.get() + d * padded, hi.get() + (d + 1) * padded, 0.0f);
      std::fill(mid.get() + d * padded, mid.get() + (d + 1) * padded, 0.0f);
      for (int64_t t = 0; t < tiles; ++t) {
        float a = inf, b = -inf;
        for (int64_t j = t * kKeyTile; j < std::min(hd.keys.rows, (t + 1) * kKeyTile); ++j) {
          const float v = hd.keys.row(j)[d];
          if (v != v) {
            a = -inf;
            b = inf;
            break;
          }
          a = std::min(a, v);
          b = std::max(b, v);
        }
        lo.get()[d * padded + t] = a;
        hi.get()[d * padded + t] = b;
        mid.get()[d * padded + t] = hd.keys.row(middle(t, hd.keys.rows))[d];
      }
    }
  }
  static int64_t middle(int64_t t, int64_t end) { return std::min(end - 1, t * kKeyTile + kKeyTile / 2); }
  bool ok() const { return lo.ok() && hi.ok() && mid.ok(); }
};

// For query q and the tiles [first, last) (multiples of kLanes, last <= padded): bound[t], the best score any point
// of the tile's box can have (the score at the box point nearest to q); mid[t], the score of the tile's middle key;
// and near[t], the best score of the box's first-coordinate interval alone. Kernels decrease with each |u_d|, so the
// nearest point scores highest, and each dimension's step adds a term that lowers the score (in float too: adding a
// term of one sign is monotone), so near[t] >= bound[t] and near[t] >= mid[t].
template <KernelKind K>
void tile_bounds(const float* q, const TileBoxes& boxes, const float* factors, float* bound, float* mid, float* near,
                 int64_t first, int64_t last) {
  for (int64_t t = first; t < last; t += kLanes) {
    Batch b = BatchScore<K>::init(), m = BatchScore<K>::init();
    for (int64_t d = 0; d < boxes.dims; ++d) {
      const Batch qd(q[d]), f(factors[d]);
      const int64_t at = d * boxes.padded + t;
      const Batch nearest =
          xsimd::min(xsimd::max(qd, simd::load(boxes.lo.get() + at)), simd::load(boxes.hi.get() + at));
      b = BatchScore<K>::step(b, qd, nearest, f);
      m = BatchScore<K>::step(m, qd, simd::load(boxes.mid.get() + at), f);
      if (d == 0) simd::store(near + t, BatchScore<K>::finish(b, Batch(1.0f)));
    }
    simd::store(bound + t, BatchScore<K>::finish(b, Batch(1.0f)));
    simd::store(mid + t, BatchScore<K>::finish(m, Batch(1.0f)));
  }
}

using TileBounds = void (*)(const float*, const TileBoxes&, const float*, float*, float*, float*, int64_t, int64_t);

// The tiles a query of the local fit must test, [first, last) (multiples of kLanes), with their bounds in `bound`,
// and `start`, the best admissible middle-key score over every tile (the row's first shift): `middle(t, mid_t)` gives
// tile t's middle-key score with its observation weight, or −inf where the key is not admissible. Every tile outside
// the range would be skipped by the fit anyway, so leaving it out changes no bit of the result: on sorted keys
// (TileBoxes::sorted) the range grows a batch of tiles at a time from the query's own tile while its outermost tile's
// first-coordinate bound `near` is at least start − skip (the bound only falls outward, so every tile beyond has
// near < start − skip, hence bound and middle score below the row's shift minus skip, and below start) and above
// −inf (a tile out of a compact kernel's reach adds nothing). Unsorted keys or a query with a NaN coordinate: every
// tile, as before. Costs O(log tiles) plus the tiles in reach, instead of O(tiles), per query.
struct Window {
  int64_t first, last;
  float start;
};
template <class Middle>
Window row_window(const float* q, const TileBoxes& boxes, int64_t tiles, const float* factors, TileBounds bounds,
                  float skip, float* bound, float* mid, float* near, const Middle& middle) {
  Window w{0, 0, -std::numeric_limits<float>::infinity()};
  const auto take = [&](int64_t first, int64_t last) {
    bounds(q, boxes, factors, bound, mid, near, first, last);
    for (int64_t t = first; t < std::min(last, tiles); ++t) w.start = std::max(w.start, middle(t, mid[t]));
  };
  bool number = true;
  for (int64_t d = 0; d < boxes.dims; ++d) number = number && q[d] == q[d];
  if (tiles == 0) return w;
  if (!boxes.sorted || !number) {
    w.last = boxes.padded;
    take(0, w.last);
    return w;
  }
  const float* hi = boxes.hi.get();  // dimension 0: the first `padded` entries
  const int64_t own = std::min<int64_t>(std::lower_bound(hi, hi + tiles, q[0]) - hi, tiles - 1);
  w.first = own / kLanes * kLanes;
  w.last = w.first + kLanes;
  take(w.first, w.last);
  for (;;) {
    const float floor = w.start - skip;
    const auto open = [&](int64_t t) {
      return near[t] > -std::numeric_limits<float>::infinity() && !(near[t] < floor);
    };
    const bool left = w.first > 0 && open(w.first);
    const bool right = w.last < tiles && open(std::min(w.last, tiles) - 1);
    if (!left && !right) return w;
    if (left) {
      take(w.first - kLanes, w.first);
      w.first -= kLanes;
    }
    if (right) {
      take(w.last, w.last + kLanes);
      w.last += kLanes;
    }
  }
}

}  // namespace local_fit_tiles
}  // namespace ka
