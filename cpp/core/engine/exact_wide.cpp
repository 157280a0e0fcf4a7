// Softmax attention for head dimensions >= 8: flash-style blocks of 16 queries over tiles of 64 keys.
#include "engine/exact_wide.h"

#include <algorithm>
#include <cmath>

#include "engine/tile_kernels.h"

namespace ka {
namespace {

using simd::Batch;
using simd::kLanes;
using tiles::accumulate_values4;
using tiles::dot_tile;

// The largest of a row's tile of scores.
float tile_max(const float* S, int64_t padded) {
  Batch m = simd::load(S);
  for (int64_t c = kLanes; c < padded; c += kLanes) m = xsimd::max(m, simd::load(S + c));
  return simd::max(m);
}

// Shifts one row's tile of scores by the row's shift `max` (at least their largest) and exponentiates them in place;
// returns the sum of the tile's weights.
float exponentiate(float* S, int64_t padded, float max) {
  const Batch shift(max);
  const simd::ExpConstants& ek = simd::exp_constants();
  Batch sum(0.0f);
  for (int64_t c = 0; c < padded; c += kLanes) {
    const Batch w = simd::exp2_nonpositive(simd::load(S + c) - shift, ek);
    simd::store(S + c, w);
    sum += w;
  }
  return simd::sum(sum);
}

// Everything one packed tile does to one block of queries: scores, masks, the online-softmax update and P·V. Each
// query's state is split by precision: its shift (log2 units) in float32 for the SIMD exponent, its z in double, its
// value sums in float32 in its output row, where P·V accumulates them; one rescale_to (shifted_sums.h) moves them all.
struct BlockState {
  const float* const* q;  // the block's query rows
  int64_t first, rows;    // global index of the first query, and how many
  float* max;             // per query of the block, log2 units
  double* sum;
  uint8_t* overflow;
  float* const* acc;  // per query of the block: its value sums (its output row)
};

void block_tile(const Head& hd, float scale, const KeyTile& tile, float* S, float* zeros, const BlockState& b) {
  const int64_t width = hd.values.cols;
  dot_tile(b.q, b.rows, hd.queries.cols, scale, tile, S);
  for (int64_t r = 0; r < b.rows; ++r) {
    float* s = S + r * kKeyTile;
    mask_tile(hd, b.first + r, tile, s);
    if (b.overflow[r] || (b.overflow[r] = overflowed(s, tile.padded))) {
      std::fill(s, s + tile.padded, 0.0f);  // the row is redone in double; keep its sums finite meanwhile
      continue;
    }
    const float top = tile_max(s, tile.padded);
    if (top == -std::numeric_limits<float>::infinity()) {
      std::fill(s, s + tile.padded, 0.0f);  // no admissible key: zero weights for P·V
      continue;
    }
    if (top > b.max[r]) rescale_to<true>(b.max[r], top, SumRun<double>{b.sum + r, 1}, SumRun<float>{b.acc[r], width});
    b.sum[r] += exponentiate(s, tile.padded, b.max[r]);
  }
  // P·V four rows at a time; a partial group borrows zero weights and a scratch row.
  for (int64_t r0 = 0; r0 < b.rows; r0 += 4) {
    const float* p[4];
    float* acc[4];
    for (int r = 0; r < 4; ++r) {
      const bool real = r0 + r < b.rows;
      p[r] = real ? S + (r0 + r) * kKeyTile : zeros;
      acc[r] = real ? b.acc[r0 + r] : zeros + kKeyTile;
    }
    accumulate_values4(p, tile, hd.values, acc);
  }
}

}  // namespace

Result run_wide(const Head& hd, int32_t head, QueryRange range, Workspace& ws, Matrix out) {
  const int64_t J = hd.keys.rows, dims = hd.queries.cols, width = hd.values.cols;
  const int64_t first = range.first, I = range.last - range.first;  // state arrays are indexed from `first`
  const float scale = BatchScore<KernelKind::Softmax>::scale_factor(hd.kernel.scale);  // log2 units
  float* const max = ws.row_max.get();
  double* const sum = ws.row_sum.get();
  uint8_t* const overflow = ws.row_flag.get();
  const auto acc = [&](int64_t r) { return out.row(first + r) + head * width; };  // value sums accumulate in place
  std::fill(max, max + I, -std::numeric_limits<float>::infinity());
  std::fill(sum, sum + I, 0.0);
  std::fill(overflow, overflow + I, 0);
  for (int64_t i = 0; i < I; ++i) std::fill(acc(i), acc(i) + width, 0.0f);
  float* const zeros = ws.zeros.get();  // kKeyTile zero weights, then a scratch row of `width`
  std::fill(zeros, zeros + kKeyTile + width, 0.0f);
  const auto step = simd::keep_out_of_line(&block_tile);

  // Keys are packed once per chunk (it stays in L2) and every query block streams over it; the per-query
  // online-softmax states live in max/sum and in the output rows between chunks.
  const float* q[kQueryBlock];
  float* rows_acc[kQueryBlock];
  for (int64_t c0 = 0; c0 < J; c0 += kKeyChunk) {
    const int64_t chunk = std::min(kKeyChunk, J - c0);
    for (int64_t t = 0; t < chunk; t += kKeyTile) {
      KeyTile tile{ws.keys_t.get() + t * dims, nullptr};
      pack_tile(hd, c0 + t, std::min(kKeyTile, chunk - t), tile);
    }
    for (int64_t b0 = 0; b0 < I; b0 += kQueryBlock) {
      const int64_t rows = std::min(kQueryBlock, I - b0), i0 = first + b0;
      const int64_t end = std::min(key_end(hd, i0, rows), c0 + chunk);
      for (int64_t r = 0; r < rows; ++r) {
        q[r] = hd.queries.row(i0 + r);
        rows_acc[r] = acc(b0 + r);
      }
      const BlockState block{q, i0, rows, max + b0, sum + b0, overflow + b0, rows_acc};
      for (int64_t j0 = c0; j0 < end; j0 += kKeyTile) {
        const int64_t count = std::min(kKeyTile, end - j0);
        const KeyTile tile{ws.keys_t.get() + (j0 - c0) * dims, nullptr, j0, count, simd::round_up(count)};
        step(hd, scale, tile, ws.scores.get(), zeros, block);
      }
    }
  }
  for (int64_t r = 0; r < I; ++r) {
    SoftmaxState<double> st(ws.row_acc.get(), width);
    st.max = max[r] * kLn2;
    st.sum() = sum[r];
    for (int64_t d = 0; d < width; ++d) st.acc()[d] = acc(r)[d];
    const bool redo = needs_double(overflow[r], max[r], false) || !finite_state(st);
    if (write_row(hd, head, first + r, redo, st, ws, acc(r)) == RowOutcome::Error)
      return {Status::EmptyRow, first + r, head};
  }
  return {};
}

}  // namespace ka
