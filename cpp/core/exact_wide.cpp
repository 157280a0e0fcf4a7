// Softmax attention for head dimensions >= 8: flash-style blocks of 16 queries over tiles of 64 keys.
#include "exact_wide.h"

#include <algorithm>
#include <cmath>

namespace ka {
namespace {

using simd::Batch;
using simd::kLanes;
constexpr int64_t kMicroRows = 4;  // queries per register tile: 4 × 2 accumulators + 2 keys + 4 broadcasts <= 14

// S[r][c] = scale · q_r · k_c for the block's rows (pointers in q) and the packed tile. Missing rows of the last
// register tile repeat row 0 and are not stored.
void dot_tile(const float* const* q, int64_t rows, int64_t dims, float scale, const KeyTile& tile, float* S) {
  const Batch s(scale);
  for (int64_t r0 = 0; r0 < rows; r0 += kMicroRows) {
    const float* q0 = q[r0];
    const float* q1 = r0 + 1 < rows ? q[r0 + 1] : q0;
    const float* q2 = r0 + 2 < rows ? q[r0 + 2] : q0;
    const float* q3 = r0 + 3 < rows ? q[r0 + 3] : q0;
    const int64_t stored = std::min(kMicroRows, rows - r0);
    float* out = S + r0 * kKeyTile;
    int64_t c = 0;
    for (; c + 2 * kLanes <= tile.padded; c += 2 * kLanes) {
      Batch a00(0.0f), a01(0.0f), a10(0.0f), a11(0.0f), a20(0.0f), a21(0.0f), a30(0.0f), a31(0.0f);
      const float* k = tile.keys_t + c;
      for (int64_t d = 0; d < dims; ++d, k += kKeyTile) {
        const Batch k0 = simd::load(k), k1 = simd::load(k + kLanes);
        Batch x(q0[d]);
        a00 = xsimd::fma(x, k0, a00); a01 = xsimd::fma(x, k1, a01);
        x = Batch(q1[d]);
        a10 = xsimd::fma(x, k0, a10); a11 = xsimd::fma(x, k1, a11);
        x = Batch(q2[d]);
        a20 = xsimd::fma(x, k0, a20); a21 = xsimd::fma(x, k1, a21);
        x = Batch(q3[d]);
        a30 = xsimd::fma(x, k0, a30); a31 = xsimd::fma(x, k1, a31);
      }
      const Batch rows_out[4][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}};
      for (int64_t r = 0; r < stored; ++r) {
        simd::store(out + r * kKeyTile + c, rows_out[r][0] * s);
        simd::store(out + r * kKeyTile + c + kLanes, rows_out[r][1] * s);
      }
    }
    for (; c < tile.padded; c += kLanes) {
      Batch a0(0.0f), a1(0.0f), a2(0.0f), a3(0.0f);
      const float* k = tile.keys_t + c;
      for (int64_t d = 0; d < dims; ++d, k += kKeyTile) {
        const Batch k0 = simd::load(k);
        a0 = xsimd::fma(Batch(q0[d]), k0, a0);
        a1 = xsimd::fma(Batch(q1[d]), k0, a1);
        a2 = xsimd::fma(Batch(q2[d]), k0, a2);
        a3 = xsimd::fma(Batch(q3[d]), k0, a3);
      }
      const Batch rows_out[4] = {a0, a1, a2, a3};
      for (int64_t r = 0; r < stored; ++r) simd::store(out + r * kKeyTile + c, rows_out[r] * s);
    }
  }
}

// acc[0, width) += Σ_c p[c] · v_(first + c), vectorised over the value columns in chunks of 8 batches held in
// registers while the keys stream past.
void accumulate_values(const float* p, const KeyTile& tile, const ConstMatrix& values, float* acc) {
  const int64_t width = values.cols;
  int64_t b = 0;
  for (; b + 8 * kLanes <= width; b += 8 * kLanes) {
    Batch a[8];
    for (int k = 0; k < 8; ++k) a[k] = simd::load(acc + b + k * kLanes);
    for (int64_t c = 0; c < tile.count; ++c) {
      const Batch w(p[c]);
      const float* v = values.row(tile.first + c) + b;
      for (int k = 0; k < 8; ++k) a[k] = xsimd::fma(w, simd::load(v + k * kLanes), a[k]);
    }
    for (int k = 0; k < 8; ++k) simd::store(acc + b + k * kLanes, a[k]);
  }
  for (; b + kLanes <= width; b += kLanes) {
    Batch a = simd::load(acc + b);
    for (int64_t c = 0; c < tile.count; ++c) a = xsimd::fma(Batch(p[c]), simd::load(values.row(tile.first + c) + b), a);
    simd::store(acc + b, a);
  }
  for (; b < width; ++b) {
    float a = acc[b];
    for (int64_t c = 0; c < tile.count; ++c) a += p[c] * values.row(tile.first + c)[b];
    acc[b] = a;
  }
}

// Shifts one row's tile of scores by the row's running maximum (raising it first if the tile holds a larger score)
// and exponentiates them in place. Returns the factor exp(old max - new max) by which the row's earlier sums must
// be scaled (1 when the maximum did not move); tile_sum receives the sum of the tile's weights.
float exponentiate(float* S, int64_t padded, float& max, float& tile_sum) {
  Batch m = simd::load(S);
  for (int64_t c = kLanes; c < padded; c += kLanes) m = xsimd::max(m, simd::load(S + c));
  const float tile_max = simd::max(m);
  tile_sum = 0.0f;
  if (tile_max == -std::numeric_limits<float>::infinity()) return 1.0f;
  float factor = 1.0f;
  if (tile_max > max) {
    factor = max == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp2(max - tile_max);
    max = tile_max;
  }
  const Batch shift(max);
  const simd::ExpConstants& ek = simd::exp_constants();
  Batch sum(0.0f);
  for (int64_t c = 0; c < padded; c += kLanes) {
    const Batch w = simd::exp2_nonpositive(simd::load(S + c) - shift, ek);
    simd::store(S + c, w);
    sum += w;
  }
  tile_sum = simd::sum(sum);
  return factor;
}

}  // namespace

Result run_wide(const Head& hd, int32_t head, Workspace& ws, Matrix out) {
  const int64_t I = hd.queries.rows, J = hd.keys.rows, dims = hd.queries.cols, width = hd.values.cols;
  const float scale = BatchScore<KernelKind::Softmax>::scale_factor(hd.kernel.scale);  // log2 units
  float* const max = ws.row_max.get();
  double* const sum = ws.row_sum.get();
  uint8_t* const overflow = ws.row_flag.get();
  float* const S = ws.scores.get();
  const auto acc = [&](int64_t i) { return out.row(i) + head * width; };  // value sums accumulate in place
  std::fill(max, max + I, -std::numeric_limits<float>::infinity());
  std::fill(sum, sum + I, 0.0);
  std::fill(overflow, overflow + I, 0);
  for (int64_t i = 0; i < I; ++i) std::fill(acc(i), acc(i) + width, 0.0f);

  // Keys are packed once per chunk (it stays in L2) and every query block streams over it; the per-query
  // online-softmax states live in max/sum and in the output rows between chunks.
  const float* q[kQueryBlock];
  const auto dot = simd::keep_out_of_line(&dot_tile);
  const auto exp_tile = simd::keep_out_of_line(&exponentiate);
  const auto add_values = simd::keep_out_of_line(&accumulate_values);
  for (int64_t c0 = 0; c0 < J; c0 += kKeyChunk) {
    const int64_t chunk = std::min(kKeyChunk, J - c0);
    for (int64_t t = 0; t < chunk; t += kKeyTile) {
      KeyTile tile{ws.keys_t.get() + t * dims, nullptr};
      pack_tile(hd, c0 + t, std::min(kKeyTile, chunk - t), tile);
    }
    for (int64_t i0 = 0; i0 < I; i0 += kQueryBlock) {
      const int64_t rows = std::min(kQueryBlock, I - i0);
      const int64_t end = std::min(key_end(hd, i0, rows), c0 + chunk);
      for (int64_t r = 0; r < rows; ++r) q[r] = hd.queries.row(i0 + r);
      for (int64_t j0 = c0; j0 < end; j0 += kKeyTile) {
        const KeyTile tile{ws.keys_t.get() + (j0 - c0) * dims, nullptr, j0, std::min(kKeyTile, end - j0),
                           simd::round_up(std::min(kKeyTile, end - j0))};
        dot(q, rows, dims, scale, tile, S);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t i = i0 + r;
          float* s = S + r * kKeyTile;
          mask_tile(hd, i, tile, s);
          if (overflow[i] || (overflow[i] = overflowed(s, tile.padded))) continue;
          float tile_sum;
          const float factor = exp_tile(s, tile.padded, max[i], tile_sum);
          if (tile_sum == 0.0f) continue;
          if (factor != 1.0f) {
            sum[i] *= factor;
            for (int64_t d = 0; d < width; ++d) acc(i)[d] *= factor;
          }
          sum[i] += tile_sum;
          add_values(s, tile, hd.values, acc(i));
        }
      }
    }
  }
  for (int64_t i = 0; i < I; ++i) {
    SoftmaxState<double> st{max[i] * kLn2, sum[i], ws.row_acc.get(), width};
    for (int64_t d = 0; d < width; ++d) st.acc[d] = acc(i)[d];
    const bool redo = needs_double(overflow[i], max[i], false) || !finite_state(st);
    if (finish_row(hd, i, redo, st, ws, acc(i)) == RowOutcome::Error)
      return {Status::EmptyRow, i, head};
  }
  return {};
}

}  // namespace ka
