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
// and its NaN reaches the output.
struct TileBoxes {
  int64_t tiles, padded, dims;
  Scratch<float> lo, hi, mid;
  explicit TileBoxes(const Head& hd)
      : tiles((hd.keys.rows + kKeyTile - 1) / kKeyTile),
        padded(simd::round_up(tiles)),
        dims(hd.keys.cols),
        lo(padded * dims),
        hi(padded * dims),
        mid(padded * dims) {
    if (!ok()) return;
    const float inf = std::numeric_limits<float>::infinity();
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

// For query q and every tile: bound[t], the best score any point of the tile's box can have (the score at the box
// point nearest to q), and mid[t], the score of the tile's middle key. Kernels decrease with each |u_d|, so the
// nearest point scores highest.
template <KernelKind K>
void tile_bounds(const float* q, const TileBoxes& boxes, const float* factors, float* bound, float* mid) {
  for (int64_t t = 0; t < boxes.padded; t += kLanes) {
    Batch b = BatchScore<K>::init(), m = BatchScore<K>::init();
    for (int64_t d = 0; d < boxes.dims; ++d) {
      const Batch qd(q[d]), f(factors[d]);
      const int64_t at = d * boxes.padded + t;
      const Batch nearest =
          xsimd::min(xsimd::max(qd, simd::load(boxes.lo.get() + at)), simd::load(boxes.hi.get() + at));
      b = BatchScore<K>::step(b, qd, nearest, f);
      m = BatchScore<K>::step(m, qd, simd::load(boxes.mid.get() + at), f);
    }
    simd::store(bound + t, BatchScore<K>::finish(b, Batch(1.0f)));
    simd::store(mid + t, BatchScore<K>::finish(m, Batch(1.0f)));
  }
}

}  // namespace local_fit_tiles
}  // namespace ka
