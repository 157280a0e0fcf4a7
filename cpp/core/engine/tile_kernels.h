// The register-tiled micro-kernels shared by the wide softmax forward (exact_wide.cpp) and its backward
// (backward_wide.cpp): Q·Kᵀ over a packed key tile, and row sums of weighted rows.
#pragma once
#include <algorithm>
#include <cstdint>

#include "engine/key_tile.h"
#include "kernel/kernels_simd.h"
#include "base/views.h"

namespace ka::tiles {

using simd::Batch;
using simd::kLanes;
constexpr int64_t kMicroRows = 4;  // queries per register tile: 4 × 2 accumulators + 2 keys + 4 broadcasts <= 14

// S[r][c] = scale · q_r · k_c (NaN where the float32 dot overflowed) for the block's rows (pointers in q) and the
// packed tile. Missing rows of the last register tile repeat row 0 and are not stored.
inline void dot_tile(const float* const* q, int64_t rows, int64_t dims, float scale, const KeyTile& tile, float* S) {
  using Score = BatchScore<KernelKind::Softmax>;
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
        a00 = xsimd::fma(x, k0, a00);
        a01 = xsimd::fma(x, k1, a01);
        x = Batch(q1[d]);
        a10 = xsimd::fma(x, k0, a10);
        a11 = xsimd::fma(x, k1, a11);
        x = Batch(q2[d]);
        a20 = xsimd::fma(x, k0, a20);
        a21 = xsimd::fma(x, k1, a21);
        x = Batch(q3[d]);
        a30 = xsimd::fma(x, k0, a30);
        a31 = xsimd::fma(x, k1, a31);
      }
      const Batch rows_out[4][2] = {{a00, a01}, {a10, a11}, {a20, a21}, {a30, a31}};
      for (int64_t r = 0; r < stored; ++r) {
        simd::store(out + r * kKeyTile + c, Score::overflow_to_nan(rows_out[r][0], s));
        simd::store(out + r * kKeyTile + c + kLanes, Score::overflow_to_nan(rows_out[r][1], s));
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
      for (int64_t r = 0; r < stored; ++r) simd::store(out + r * kKeyTile + c, Score::overflow_to_nan(rows_out[r], s));
    }
  }
}

// acc_r[0, width) += Σ_c p_r[c] · v_(first + c) for 4 rows at once: 4 rows × 2 batches of value columns stay in
// registers while the keys stream past, so each value load feeds 4 multiply-adds.
inline void accumulate_values4(const float* const* p, const KeyTile& tile, const ConstMatrix& values,
                               float* const* acc) {
  const int64_t width = values.cols;
  int64_t b = 0;
  for (; b + 2 * kLanes <= width; b += 2 * kLanes) {
    Batch a00 = simd::load(acc[0] + b), a01 = simd::load(acc[0] + b + kLanes);
    Batch a10 = simd::load(acc[1] + b), a11 = simd::load(acc[1] + b + kLanes);
    Batch a20 = simd::load(acc[2] + b), a21 = simd::load(acc[2] + b + kLanes);
    Batch a30 = simd::load(acc[3] + b), a31 = simd::load(acc[3] + b + kLanes);
    const float* v = values.row(tile.first) + b;
    for (int64_t c = 0; c < tile.count; ++c, v += values.stride) {
      const Batch v0 = simd::load(v), v1 = simd::load(v + kLanes);
      Batch w(p[0][c]);
      a00 = xsimd::fma(w, v0, a00);
      a01 = xsimd::fma(w, v1, a01);
      w = Batch(p[1][c]);
      a10 = xsimd::fma(w, v0, a10);
      a11 = xsimd::fma(w, v1, a11);
      w = Batch(p[2][c]);
      a20 = xsimd::fma(w, v0, a20);
      a21 = xsimd::fma(w, v1, a21);
      w = Batch(p[3][c]);
      a30 = xsimd::fma(w, v0, a30);
      a31 = xsimd::fma(w, v1, a31);
    }
    simd::store(acc[0] + b, a00);
    simd::store(acc[0] + b + kLanes, a01);
    simd::store(acc[1] + b, a10);
    simd::store(acc[1] + b + kLanes, a11);
    simd::store(acc[2] + b, a20);
    simd::store(acc[2] + b + kLanes, a21);
    simd::store(acc[3] + b, a30);
    simd::store(acc[3] + b + kLanes, a31);
  }
  for (; b < width; ++b) {
    for (int r = 0; r < 4; ++r) {
      float a = acc[r][b];
      for (int64_t c = 0; c < tile.count; ++c) a += p[r][c] * values.row(tile.first + c)[b];
      acc[r][b] = a;
    }
  }
}

// acc_r[0, width) += Σ_(n < count) w_r[n · step] · x_n for r < 4, where row x_n starts at x + n · x_stride: the
// same register tile as accumulate_values4, with the weights read at a stride (step = kKeyTile reads a column of a
// tile of scores, so Pᵀ·dO needs no transposed copy). Columns past the last whole batch are summed in scalar code.
inline void accumulate_rows4(const float* const* w, int64_t step, int64_t count, const float* x, int64_t x_stride,
                             int64_t width, float* const* acc) {
  int64_t b = 0;
  for (; b + 2 * kLanes <= width; b += 2 * kLanes) {
    Batch a00 = simd::load(acc[0] + b), a01 = simd::load(acc[0] + b + kLanes);
    Batch a10 = simd::load(acc[1] + b), a11 = simd::load(acc[1] + b + kLanes);
    Batch a20 = simd::load(acc[2] + b), a21 = simd::load(acc[2] + b + kLanes);
    Batch a30 = simd::load(acc[3] + b), a31 = simd::load(acc[3] + b + kLanes);
    const float *w0 = w[0], *w1 = w[1], *w2 = w[2], *w3 = w[3];
    const float* v = x + b;
    for (int64_t n = 0; n < count; ++n, v += x_stride, w0 += step, w1 += step, w2 += step, w3 += step) {
      const Batch v0 = simd::load(v), v1 = simd::load(v + kLanes);
      Batch c(*w0);
      a00 = xsimd::fma(c, v0, a00);
      a01 = xsimd::fma(c, v1, a01);
      c = Batch(*w1);
      a10 = xsimd::fma(c, v0, a10);
      a11 = xsimd::fma(c, v1, a11);
      c = Batch(*w2);
      a20 = xsimd::fma(c, v0, a20);
      a21 = xsimd::fma(c, v1, a21);
      c = Batch(*w3);
      a30 = xsimd::fma(c, v0, a30);
      a31 = xsimd::fma(c, v1, a31);
    }
    simd::store(acc[0] + b, a00);
    simd::store(acc[0] + b + kLanes, a01);
    simd::store(acc[1] + b, a10);
    simd::store(acc[1] + b + kLanes, a11);
    simd::store(acc[2] + b, a20);
    simd::store(acc[2] + b + kLanes, a21);
    simd::store(acc[3] + b, a30);
    simd::store(acc[3] + b + kLanes, a31);
  }
  for (; b + kLanes <= width; b += kLanes) {
    Batch a0 = simd::load(acc[0] + b), a1 = simd::load(acc[1] + b);
    Batch a2 = simd::load(acc[2] + b), a3 = simd::load(acc[3] + b);
    const float* v = x + b;
    for (int64_t n = 0; n < count; ++n, v += x_stride) {
      const Batch v0 = simd::load(v);
      a0 = xsimd::fma(Batch(w[0][n * step]), v0, a0);
      a1 = xsimd::fma(Batch(w[1][n * step]), v0, a1);
      a2 = xsimd::fma(Batch(w[2][n * step]), v0, a2);
      a3 = xsimd::fma(Batch(w[3][n * step]), v0, a3);
    }
    simd::store(acc[0] + b, a0);
    simd::store(acc[1] + b, a1);
    simd::store(acc[2] + b, a2);
    simd::store(acc[3] + b, a3);
  }
  for (; b < width; ++b)
    for (int r = 0; r < 4; ++r) {
      float a = acc[r][b];
      for (int64_t n = 0; n < count; ++n) a += w[r][n * step] * x[n * x_stride + b];
      acc[r][b] = a;
    }
}

}  // namespace ka::tiles
