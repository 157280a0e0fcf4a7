// The exact local fit's loops over the keys of one packed tile that depend on the kernel or the shape
// (local_fit_parts.h): the keys' scores, and the moments' sums in float32 SIMD lanes flushed into the row's double
// moments, one instance per kernel and per shape, reached through pointers. Everything that runs once per query or
// per block lives in local_fit.cpp.
#include <algorithm>
#include <limits>

#include "engine/exact_narrow.h"
#include "engine/local_fit_parts.h"

namespace ka {
namespace local_fit_parts {
namespace {

using local_fit_tiles::tile_bounds;
using simd::Batch;
using simd::kLanes;

// Σ_c x[c]·y[c] over `padded` floats (a multiple of kLanes), two accumulators to halve the add chain.
inline double dot(const float* x, const float* y, int64_t padded) {
  Batch s0(0.0f), s1(0.0f);
  int64_t c = 0;
  for (; c + 2 * kLanes <= padded; c += 2 * kLanes) {
    s0 = xsimd::fma(simd::load(x + c), simd::load(y + c), s0);
    s1 = xsimd::fma(simd::load(x + c + kLanes), simd::load(y + c + kLanes), s1);
  }
  for (; c < padded; c += kLanes) s0 = xsimd::fma(simd::load(x + c), simd::load(y + c), s0);
  return double(simd::sum(s0 + s1));
}

// Adds the weights 2^(score − max) · ω of one tile and their products with the design and the values to the
// moments, any shape: the weighted design columns go through w.z / w.wz, then one dot product per moment.
void accumulate_any(const KeyTile& tile, const float* scores, const float* q, TileWork& w, const Shape& s, Moments& m) {
  const simd::ExpConstants& ek = simd::exp_constants();
  const Batch shift(float(m.max));
  double *a = m.a(), *b = m.b(), *t = m.t();
  float* z = w.z.get();  // z[0] holds ones; then the scaled offsets, then (degree 2) their products (design_row)
  float* wz = w.wz.get();
  const int64_t linear_end = s.degree > 0 ? 1 + s.dims : 1;
  for (int64_t c = 0; c < tile.padded; c += kLanes) {
    const Batch weight = simd::exp2_nonpositive(simd::load(scores + c) - shift, ek);
    simd::store(wz + c, weight);
    for (int64_t d = 1; d < linear_end; ++d) {
      // Centred at the query before any product, so float32 keeps the local design's relative accuracy.
      const Batch u =
          (simd::load(tile.keys_t + (d - 1) * kKeyTile + c) - Batch(q[d - 1])) * Batch(w.inv_h.get()[d - 1]);
      simd::store(z + d * kKeyTile + c, u);
      simd::store(wz + d * kKeyTile + c, weight * u);
    }
    int64_t k = linear_end;
    for (int64_t x = 1; x < linear_end && k < s.p; ++x)
      for (int64_t y = x; y < linear_end; ++y, ++k) {
        const Batch uu = simd::load(z + x * kKeyTile + c) * simd::load(z + y * kKeyTile + c);
        simd::store(z + k * kKeyTile + c, uu);
        simd::store(wz + k * kKeyTile + c, weight * uu);
      }
  }
  for (int64_t x = 0; x < s.p; ++x) {
    for (int64_t y = x; y < s.p; ++y) {
      a[x * s.p + y] += dot(wz + x * kKeyTile, z + y * kKeyTile, tile.padded);
      if (s.with_b) b[x * s.p + y] += dot(wz + x * kKeyTile, wz + y * kKeyTile, tile.padded);
    }
    for (int64_t c = 0; c < s.width; ++c)
      t[x * s.width + c] += dot(wz + x * kKeyTile, tile.values_t + c * kKeyTile, tile.padded);
  }
}

// The same for the common shapes (P ≤ 3 design columns, one value column), with every moment summed in registers
// in a single pass over the tile. SQUARE: the 1-D local-quadratic design [1, u, u²]; else [1, u₁ … u_dims].
template <int P, bool WITH_B, bool SQUARE = false>
void accumulate_fused(const KeyTile& tile, const float* scores, const float* q, TileWork& w, const Shape&, Moments& m) {
  constexpr int kPairs = P * (P + 1) / 2;
  const simd::ExpConstants& ek = simd::exp_constants();
  const Batch shift(float(m.max));
  Batch a[kPairs], b[kPairs], t[P], qb[P], ih[P];
  for (int k = 0; k < kPairs; ++k) a[k] = b[k] = Batch(0.0f);
  for (int x = 0; x < P; ++x) t[x] = Batch(0.0f);
  for (int d = 1; d < (SQUARE ? 2 : P); ++d) {
    qb[d] = Batch(q[d - 1]);
    ih[d] = Batch(w.inv_h.get()[d - 1]);
  }
  for (int64_t c = 0; c < tile.padded; c += kLanes) {
    Batch z[P], wz[P];
    wz[0] = simd::exp2_nonpositive(simd::load(scores + c) - shift, ek);
    for (int d = 1; d < P; ++d) {
      z[d] = SQUARE && d == 2 ? z[1] * z[1] : (simd::load(tile.keys_t + (d - 1) * kKeyTile + c) - qb[d]) * ih[d];
      wz[d] = wz[0] * z[d];
    }
    const Batch y = simd::load(tile.values_t + c);
    int k = 0;
    for (int x = 0; x < P; ++x) {
      for (int v = x; v < P; ++v, ++k) {
        a[k] = v == 0 ? a[k] + wz[x] : xsimd::fma(wz[x], z[v], a[k]);
        if constexpr (WITH_B) b[k] = xsimd::fma(wz[x], wz[v], b[k]);
      }
      t[x] = xsimd::fma(wz[x], y, t[x]);
    }
  }
  // The flush: the tile's float32 lane sums into the row's double moments (the upper triangles of a and b).
  double *ma = m.a(), *mb = m.b(), *mt = m.t();
  int k = 0;
  for (int x = 0; x < P; ++x) {
    for (int v = x; v < P; ++v, ++k) {
      ma[x * P + v] += double(simd::sum(a[k]));
      if constexpr (WITH_B) mb[x * P + v] += double(simd::sum(b[k]));
    }
    mt[x] += double(simd::sum(t[x]));
  }
}

// 3-D local-linear, one value column (design [1, u₁, u₂, u₃]): accumulate_any's sums to the same bytes, with fewer
// passes over the tile. Each moment keeps dot()'s two accumulators (even batches in the first, odd in the second, added
// at the flush), and each term is dot()'s: fma(w·z_x, z_v, s) as rounded floats, the weight itself for x = 0. One
// pass sums Σw·z·zᵀ and Σw·z·y; with Σw² a second reads the weighted design back (all 48 accumulators in one pass
// spill in WebAssembly). accumulate_any's stores and its 14 (24) passes over them had been most of a 3-D fit.
template <bool WITH_B>
void accumulate_linear_3d(const KeyTile& tile, const float* scores, const float* q, TileWork& w, const Shape&,
                          Moments& m) {
  constexpr int P = 4, kPairs = P * (P + 1) / 2;
  const simd::ExpConstants& ek = simd::exp_constants();
  const Batch shift(float(m.max));
  float* wz_rows = w.wz.get();  // the weighted design, P rows of kKeyTile (with Σw²)
  Batch qb[P], ih[P];
  for (int d = 1; d < P; ++d) {
    qb[d] = Batch(q[d - 1]);
    ih[d] = Batch(w.inv_h.get()[d - 1]);
  }
  struct Sums {
    Batch a[kPairs], t[P];
  } even, odd;
  for (Sums* s : {&even, &odd}) {
    for (Batch& v : s->a) v = Batch(0.0f);
    for (Batch& v : s->t) v = Batch(0.0f);
  }
  const auto add = [&](int64_t c, Sums& s) {
    Batch z[P], wz[P];
    wz[0] = simd::exp2_nonpositive(simd::load(scores + c) - shift, ek);
    for (int d = 1; d < P; ++d) {
      z[d] = (simd::load(tile.keys_t + (d - 1) * kKeyTile + c) - qb[d]) * ih[d];
      wz[d] = wz[0] * z[d];
    }
    if constexpr (WITH_B)
      for (int x = 0; x < P; ++x) simd::store(wz_rows + x * kKeyTile + c, wz[x]);
    const Batch y = simd::load(tile.values_t + c);
    int k = 0;
    for (int x = 0; x < P; ++x) {
      for (int v = x; v < P; ++v, ++k) s.a[k] = v == 0 ? s.a[k] + wz[0] : xsimd::fma(wz[x], z[v], s.a[k]);
      s.t[x] = xsimd::fma(wz[x], y, s.t[x]);
    }
  };
  int64_t c = 0;
  for (; c + 2 * kLanes <= tile.padded; c += 2 * kLanes) {
    add(c, even);
    add(c + kLanes, odd);
  }
  if (c < tile.padded) add(c, even);
  double *ma = m.a(), *mt = m.t();
  int k = 0;
  for (int x = 0; x < P; ++x) {
    for (int v = x; v < P; ++v, ++k) ma[x * P + v] += double(simd::sum(even.a[k] + odd.a[k]));
    mt[x] += double(simd::sum(even.t[x] + odd.t[x]));
  }
  if constexpr (WITH_B) {
    Batch b_even[kPairs], b_odd[kPairs];
    for (int j = 0; j < kPairs; ++j) b_even[j] = b_odd[j] = Batch(0.0f);
    const auto add_squares = [&](int64_t at, Batch* b) {
      Batch wz[P];
      for (int x = 0; x < P; ++x) wz[x] = simd::load(wz_rows + x * kKeyTile + at);
      int j = 0;
      for (int x = 0; x < P; ++x)
        for (int v = x; v < P; ++v, ++j) b[j] = xsimd::fma(wz[x], wz[v], b[j]);
    };
    int64_t e = 0;
    for (; e + 2 * kLanes <= tile.padded; e += 2 * kLanes) {
      add_squares(e, b_even);
      add_squares(e + kLanes, b_odd);
    }
    if (e < tile.padded) add_squares(e, b_even);
    double* mb = m.b();
    int j = 0;
    for (int x = 0; x < P; ++x)
      for (int v = x; v < P; ++v, ++j) mb[x * P + v] += double(simd::sum(b_even[j] + b_odd[j]));
  }
}

// 2-D local-quadratic, one value column (design [1, u₁, u₂, u₁², u₁u₂, u₂²]): its 21 moments Σw·z·zᵀ are 15
// monomials Σw·u₁^i·u₂^j (i + j <= 4), the same again in w² for Σw², and 6 value sums: too many accumulators for
// one pass in registers (V8 keeps about 15 SIMD registers), so the tile is walked in passes of at most 9: the
// weights and offsets (kept in w.wz / w.z) with Σw, Σw·u and the value sums; then the monomials of degree 2 and 3;
// then those of degree 4 (and the same three in w² with Σw² asked for).
template <bool Square>
void monomials_2d(const float* wb, const float* u1b, const float* u2b, int64_t padded, double* m) {
  Batch m20(0.0f), m11(0.0f), m02(0.0f), m30(0.0f), m21(0.0f), m12(0.0f), m03(0.0f);
  for (int64_t c = 0; c < padded; c += kLanes) {
    Batch wt = simd::load(wb + c);
    if constexpr (Square) wt = wt * wt;
    const Batch u1 = simd::load(u1b + c), u2 = simd::load(u2b + c), w1 = wt * u1, w2 = wt * u2;
    m20 = xsimd::fma(w1, u1, m20);
    m11 = xsimd::fma(w1, u2, m11);
    m02 = xsimd::fma(w2, u2, m02);
    const Batch w11 = w1 * u1, w22 = w2 * u2;
    m30 = xsimd::fma(w11, u1, m30);
    m21 = xsimd::fma(w11, u2, m21);
    m12 = xsimd::fma(w22, u1, m12);
    m03 = xsimd::fma(w22, u2, m03);
  }
  Batch m40(0.0f), m31(0.0f), m22(0.0f), m13(0.0f), m04(0.0f);
  for (int64_t c = 0; c < padded; c += kLanes) {
    Batch wt = simd::load(wb + c);
    if constexpr (Square) wt = wt * wt;
    const Batch u1 = simd::load(u1b + c), u2 = simd::load(u2b + c), w11 = wt * u1 * u1, w22 = wt * u2 * u2;
    m40 = xsimd::fma(w11 * u1, u1, m40);
    m31 = xsimd::fma(w11 * u1, u2, m31);
    m22 = xsimd::fma(w11, u2 * u2, m22);
    m13 = xsimd::fma(w22 * u2, u1, m13);
    m04 = xsimd::fma(w22 * u2, u2, m04);
  }
  const Batch all[12] = {m20, m11, m02, m30, m21, m12, m03, m40, m31, m22, m13, m04};
  for (int k = 0; k < 12; ++k) m[k] = double(simd::sum(all[k]));
}

void accumulate_quadratic_2d(const KeyTile& tile, const float* scores, const float* q, TileWork& w, const Shape& s,
                             Moments& m) {
  const simd::ExpConstants& ek = simd::exp_constants();
  const Batch shift(float(m.max)), q1(q[0]), q2(q[1]), i1(w.inv_h.get()[0]), i2(w.inv_h.get()[1]);
  float *wb = w.wz.get(), *u1b = w.z.get() + kKeyTile, *u2b = w.z.get() + 2 * kKeyTile;
  Batch s0(0.0f), s1(0.0f), s2(0.0f), t[6];
  for (Batch& v : t) v = Batch(0.0f);
  for (int64_t c = 0; c < tile.padded; c += kLanes) {
    const Batch wt = simd::exp2_nonpositive(simd::load(scores + c) - shift, ek);
    // Centred at the query before any product, so float32 keeps the local design's relative accuracy.
    const Batch u1 = (simd::load(tile.keys_t + c) - q1) * i1, u2 = (simd::load(tile.keys_t + kKeyTile + c) - q2) * i2;
    simd::store(wb + c, wt);
    simd::store(u1b + c, u1);
    simd::store(u2b + c, u2);
    s0 = s0 + wt;
    s1 = xsimd::fma(wt, u1, s1);
    s2 = xsimd::fma(wt, u2, s2);
    const Batch wy = wt * simd::load(tile.values_t + c), wy1 = wy * u1, wy2 = wy * u2;
    t[0] = t[0] + wy;
    t[1] = t[1] + wy1;
    t[2] = t[2] + wy2;
    t[3] = xsimd::fma(wy1, u1, t[3]);
    t[4] = xsimd::fma(wy1, u2, t[4]);
    t[5] = xsimd::fma(wy2, u2, t[5]);
  }
  // The design's pairs (x <= v; z = 1, u₁, u₂, u₁², u₁u₂, u₂²) as monomials, in the order of `sums` below: Σw,
  // Σw·u₁, Σw·u₂, then monomials_2d's twelve.
  static constexpr int8_t kPair[21] = {0, 1, 2, 3, 4, 5, 3, 4, 6, 7, 8, 5, 7, 8, 9, 10, 11, 12, 12, 13, 14};
  const auto flush = [](const double* sums, double* into) {
    int k = 0;
    for (int x = 0; x < 6; ++x)
      for (int v = x; v < 6; ++v, ++k) into[x * 6 + v] += sums[kPair[k]];
  };
  double sums[15] = {double(simd::sum(s0)), double(simd::sum(s1)), double(simd::sum(s2))};
  monomials_2d<false>(wb, u1b, u2b, tile.padded, sums + 3);
  flush(sums, m.a());
  double* mt = m.t();
  for (int x = 0; x < 6; ++x) mt[x] += double(simd::sum(t[x]));
  if (s.with_b) {
    Batch b0(0.0f), b1(0.0f), b2(0.0f);
    for (int64_t c = 0; c < tile.padded; c += kLanes) {
      const Batch wt = simd::load(wb + c), w2 = wt * wt;
      b0 = b0 + w2;
      b1 = xsimd::fma(w2, simd::load(u1b + c), b1);
      b2 = xsimd::fma(w2, simd::load(u2b + c), b2);
    }
    sums[0] = double(simd::sum(b0)), sums[1] = double(simd::sum(b1)), sums[2] = double(simd::sum(b2));
    monomials_2d<true>(wb, u1b, u2b, tile.padded, sums + 3);
    flush(sums, m.b());
  }
}

// scores[c] = log2 K((q − key c)/h) for the packed tile's `padded` keys: the one loop over keys that depends on the
// kernel, compiled once per kernel (factors[d] = BatchScore<K>::dimension_factor(h_d)).
template <KernelKind K>
void key_scores(const float* q, const KeyTile& tile, const float* factors, int64_t dims, float* scores) {
  for (int64_t c = 0; c < tile.padded; c += kLanes) {
    Batch score = BatchScore<K>::init();
    for (int64_t d = 0; d < dims; ++d)
      score = BatchScore<K>::step(score, Batch(q[d]), simd::load(tile.keys_t + d * kKeyTile + c), Batch(factors[d]));
    simd::store(scores + c, BatchScore<K>::finish(score, Batch(1.0f)));
  }
}

template <KernelKind K>
KernelLoops loops_of() {
  return {simd::keep_out_of_line(&key_scores<K>), &tile_bounds<K>, &BatchScore<K>::dimension_factor};
}

}  // namespace

Accumulate accumulate_for(const Shape& s) {
  Accumulate fn = &accumulate_any;
  if (s.width == 1) {
    if (s.p == 1) fn = s.with_b ? &accumulate_fused<1, true> : &accumulate_fused<1, false>;
    if (s.p == 2) fn = s.with_b ? &accumulate_fused<2, true> : &accumulate_fused<2, false>;
    if (s.p == 3 && s.degree == 1) fn = s.with_b ? &accumulate_fused<3, true> : &accumulate_fused<3, false>;
    if (s.p == 3 && s.degree == 2) fn = s.with_b ? &accumulate_fused<3, true, true> : &accumulate_fused<3, false, true>;
    if (s.p == 6 && s.dims == 2) fn = &accumulate_quadratic_2d;
    if (s.p == 4 && s.dims == 3 && s.degree == 1)
      fn = s.with_b ? &accumulate_linear_3d<true> : &accumulate_linear_3d<false>;
  }
  return simd::keep_out_of_line(fn);
}

KernelLoops kernel_loops(KernelKind kind) {
  return with_kernel(kind, [](auto k) {
    if constexpr (k() == KernelKind::Softmax)
      return KernelLoops{};  // local_fit refuses softmax
    else
      return loops_of<k()>();
  });
}

}  // namespace local_fit_parts
}  // namespace ka
