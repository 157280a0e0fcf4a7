// The narrow path of the exact engine: any kernel, any dimension, vectorised over keys. It serves small dimensions
// (1-D and 2-D regression, where the work is exp-bound) and every distance kernel.
#pragma once
#include <algorithm>
#include <cmath>

#include "workspace.h"

namespace ka {
namespace narrow {

using simd::Batch;
using simd::kLanes;

// Distance-kernel scores are <= 0, so a fixed shift of 0 keeps every weight <= 1 without tracking a running maximum.
// A row whose best score stays below this has lost weights to underflow (exp < e^-87 flushes to 0) and is redone.
constexpr float kFixedShiftFloor = -40.0f;

// Row state kept lane-wise between tiles: kLanes partial sums of weights and of each value column.
// W is the value width when it is small enough to keep the sums in registers (1..4), or 0 for any width.
template <int W>
struct Lanes {
  static void add(const KeyTile& tile, const float* scores, const Batch& shift, int64_t width, float* lane_sum,
                  float* lane_acc) {
    constexpr int64_t kRegs = W > 0 ? W : 1;
    Batch sum = simd::load(lane_sum);
    Batch acc[kRegs];
    if constexpr (W > 0)
      for (int d = 0; d < W; ++d) acc[d] = simd::load(lane_acc + d * kLanes);
    for (int64_t c = 0; c < tile.padded; c += kLanes) {
      const Batch w = simd::exp_nonpositive(simd::load(scores + c) - shift);
      sum += w;
      if constexpr (W > 0) {
        for (int d = 0; d < W; ++d) acc[d] = xsimd::fma(w, simd::load(tile.values_t + d * kKeyTile + c), acc[d]);
      } else {
        for (int64_t d = 0; d < width; ++d) {
          float* a = lane_acc + d * kLanes;
          simd::store(a, xsimd::fma(w, simd::load(tile.values_t + d * kKeyTile + c), simd::load(a)));
        }
      }
    }
    simd::store(lane_sum, sum);
    if constexpr (W > 0)
      for (int d = 0; d < W; ++d) simd::store(lane_acc + d * kLanes, acc[d]);
  }
};

inline float tile_max(const float* scores, int64_t padded) {
  Batch m = simd::load(scores);
  for (int64_t c = kLanes; c < padded; c += kLanes) m = xsimd::max(m, simd::load(scores + c));
  return simd::max(m);
}

// Running-maximum update (softmax, whose scores have no upper bound): rescale the lanes when the tile raises the max.
template <int W>
void add_running(const KeyTile& tile, const float* scores, int64_t width, float& max, float* lane_sum, float* lane_acc) {
  const float top = tile_max(scores, tile.padded);
  if (top == -std::numeric_limits<float>::infinity()) return;
  if (top > max) {
    const Batch f(max == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(max - top));
    simd::store(lane_sum, simd::load(lane_sum) * f);
    for (int64_t d = 0; d < width; ++d) simd::store(lane_acc + d * kLanes, simd::load(lane_acc + d * kLanes) * f);
    max = top;
  }
  Lanes<W>::add(tile, scores, Batch(max), width, lane_sum, lane_acc);
}

template <KernelKind K, int W>
Result run(const Head& hd, int32_t head, Workspace& ws, Matrix out) {
  constexpr bool kFixedShift = K != KernelKind::Softmax;
  const int64_t I = hd.queries.rows, dims = hd.queries.cols, width = hd.values.cols;
  float* factors = ws.factors.get();
  for (int64_t d = 0; d < dims; ++d)
    factors[d] = K == KernelKind::Softmax ? 1.0f : BatchScore<K>::dimension_factor(hd.kernel.bandwidth[d]);
  KeyTile tile{ws.keys_t.get(), ws.values_t.get()};
  float max[kQueryBlock];  // softmax: running maximum; distance kernels: best score seen (the shift stays 0)
  bool overflow[kQueryBlock];
  float* const scores = ws.scores.get();

  for (int64_t i0 = 0; i0 < I; i0 += kQueryBlock) {
    const int64_t rows = std::min(kQueryBlock, I - i0);
    std::fill(max, max + rows, -std::numeric_limits<float>::infinity());
    std::fill(overflow, overflow + rows, false);
    std::fill(ws.lane_sum.get(), ws.lane_sum.get() + rows * kLanes, 0.0f);
    std::fill(ws.lane_acc.get(), ws.lane_acc.get() + rows * width * kLanes, 0.0f);

    const int64_t end = key_end(hd, i0, rows);
    for (int64_t j0 = 0; j0 < end; j0 += kKeyTile) {
      pack_tile(hd, j0, std::min(kKeyTile, end - j0), tile);
      for (int64_t r = 0; r < rows; ++r) {
        if (overflow[r]) continue;
        score_tile<K>(hd, i0 + r, factors, tile, scores);
        float* lane_sum = ws.lane_sum.get() + r * kLanes;
        float* lane_acc = ws.lane_acc.get() + r * width * kLanes;
        if constexpr (kFixedShift) {
          max[r] = std::max(max[r], tile_max(scores, tile.padded));
          Lanes<W>::add(tile, scores, Batch(0.0f), width, lane_sum, lane_acc);
        } else {
          if ((overflow[r] = overflowed(scores, tile.padded))) continue;
          add_running<W>(tile, scores, width, max[r], lane_sum, lane_acc);
        }
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      const float* lane_sum = ws.lane_sum.get() + r * kLanes;
      const float* lane_acc = ws.lane_acc.get() + r * width * kLanes;
      SoftmaxState<double> st{kFixedShift ? 0.0 : double(max[r]), 0.0, ws.row_acc.get(), width};
      for (int64_t l = 0; l < kLanes; ++l) st.sum += lane_sum[l];
      for (int64_t d = 0; d < width; ++d) {
        double a = 0;
        for (int64_t l = 0; l < kLanes; ++l) a += lane_acc[d * kLanes + l];
        st.acc[d] = a;
      }
      bool redo = needs_double(overflow[r], max[r], is_compact(K));
      if (kFixedShift && max[r] > -std::numeric_limits<float>::infinity() && max[r] < kFixedShiftFloor) redo = true;
      const RowOutcome outcome = finish_row(hd, i, redo, st, ws, out.row(i) + head * width);
      if (outcome == RowOutcome::Error) return {Status::EmptyRow, i, head};
    }
  }
  return {};
}

}  // namespace narrow
}  // namespace ka
