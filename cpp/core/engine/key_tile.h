// A tile of keys (and their values) packed transposed: dimension-major, padded to whole batches, so that one batch
// holds one dimension of kLanes consecutive keys. Scoring a query against the tile is then a batch loop over keys,
// which serves every dimension M from 1 up. Padding keys score -inf, as do keys a mask excludes.
#pragma once
#include <algorithm>
#include <limits>

#include "engine/head.h"
#include "kernel/kernels_simd.h"

namespace ka {

constexpr int64_t kKeyTile = 64;     // keys per tile (a multiple of every lane count)
constexpr int64_t kQueryBlock = 16;  // queries that share one packed tile
constexpr int64_t kKeyChunk = 512;   // keys packed at once by the wide path (128 KiB at 64 dimensions: stays in L2)
// The narrow path's tiles are longer: it pays a call, a mask check and the flush of its lane sums into double per
// tile and query, against about 25 operations per 4 keys. On 1-D regression at 10^4 × 10^4, 256 keys ran 1.35× as
// fast as 64 in WebAssembly (1.14× natively). The wide path and the backward pass keep kKeyTile: their tiles of
// scores must stay in L1 (the backward ran 8 % slower at 256).
constexpr int64_t kNarrowTile = 256;

struct KeyTile {
  float* keys_t = nullptr;    // dims × stride
  float* values_t = nullptr;  // width × stride (null for weights())
  int64_t first = 0;          // index of the tile's first key
  int64_t count = 0;          // keys in the tile
  int64_t padded = 0;         // count rounded up to whole batches
  int64_t stride = kKeyTile;  // floats from one dimension (or value column) of the tile to the next
};

inline void pack_tile(const Head& hd, int64_t first, int64_t count, KeyTile& tile) {
  tile.first = first;
  tile.count = count;
  tile.padded = simd::round_up(count);
  const int64_t dims = hd.keys.cols;
  for (int64_t d = 0; d < dims; ++d) {
    float* dst = tile.keys_t + d * tile.stride;
    for (int64_t c = 0; c < count; ++c) dst[c] = hd.keys.row(first + c)[d];
    std::fill(dst + count, dst + tile.padded, 0.0f);
  }
  if (!tile.values_t) return;
  for (int64_t d = 0; d < hd.values.cols; ++d) {
    float* dst = tile.values_t + d * tile.stride;
    for (int64_t c = 0; c < count; ++c) dst[c] = hd.values.row(first + c)[d];
    std::fill(dst + count, dst + tile.padded, 0.0f);
  }
}

// Sets the scores of padding keys, and of keys the masks exclude for query i, to -inf.
inline void mask_tile(const Head& hd, int64_t i, const KeyTile& tile, float* scores) {
  const float minus_inf = -std::numeric_limits<float>::infinity();
  std::fill(scores + tile.count, scores + tile.padded, minus_inf);
  if (!hd.masks->any()) return;
  for (int64_t c = 0; c < tile.count; ++c)
    if (!hd.allows(i, tile.first + c)) scores[c] = minus_inf;
}

// scores[c] = log2 w(q, key first + c), with factors[d] = BatchScore<K>::dimension_factor(h_d), for c < padded; -inf
// for padding and for keys the masks exclude.
template <KernelKind K>
void score_tile(const Head& hd, int64_t i, const float* factors, const KeyTile& tile, float* scores) {
  using B = simd::Batch;
  const int64_t dims = hd.queries.cols;
  const float* q = hd.queries.row(i);
  const B scale(BatchScore<K>::scale_factor(hd.kernel.scale));
  for (int64_t c = 0; c < tile.padded; c += simd::kLanes) {
    B acc = BatchScore<K>::init();
    for (int64_t d = 0; d < dims; ++d)
      acc = BatchScore<K>::step(acc, B(q[d]), simd::load(tile.keys_t + d * tile.stride + c), B(factors[d]));
    simd::store(scores + c, BatchScore<K>::finish(acc, scale));
  }
  mask_tile(hd, i, tile, scores);
}

// Keys beyond this bound are inadmissible for every query of [first, first + count): the causal mask's cut.
inline int64_t key_end(const Head& hd, int64_t first_query, int64_t query_count) {
  const int64_t J = hd.keys.rows;
  return hd.masks->causal ? std::min(J, first_query + query_count) : J;
}

// Float32 scores carry about 1e-7 relative error, so a row whose largest score exceeds this in magnitude (far-away
// queries, vanishing bandwidths, huge softmax logits) could misweigh near-tied keys by more than ~1e-3; such rows,
// rare in practice, are recomputed in double, where their limits (the nearest or arg-max key) come out exactly.
constexpr float kFloatScoreLimit = 4096.0f;  // in log2 units, like every float32 score

// True when a score is NaN or +inf: float32 overflowed, and the row must be recomputed in double.
inline bool overflowed(const float* scores, int64_t padded) {
  using B = simd::Batch;
  auto bad = B(0.0f) != B(0.0f);
  for (int64_t c = 0; c < padded; c += simd::kLanes) {
    const B s = simd::load(scores + c);
    // xsimd::isnan, not s != s: xsimd 8.1's AVX != is an ordered compare (_CMP_NEQ_OQ), false for NaN.
    bad = bad | xsimd::isnan(s) | (s == B(std::numeric_limits<float>::infinity()));
  }
  return xsimd::any(bad);
}

}  // namespace ka
