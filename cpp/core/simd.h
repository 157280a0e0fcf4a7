// The only file that includes xsimd: the float batch type, its lane count, and the few vector functions the engine
// needs, pinned to xsimd 8.1 names. Under Emscripten this compiles to WebAssembly SIMD128 via SSE4.1 emulation.
#pragma once
#include <cstdint>

#include <xsimd/xsimd.hpp>

namespace ka::simd {

using Batch = xsimd::batch<float>;
using IntBatch = xsimd::batch<int32_t>;
constexpr int64_t kLanes = int64_t(Batch::size);

// Calls a hot per-tile kernel through a pointer the optimiser cannot see through, so it stays a function of its own.
// Under WebAssembly, V8 tiers a function up to optimised code only between calls; a kernel inlined into a caller
// that runs once per call would stay in the baseline compiler, at about a third of the speed (TOOLCHAIN.md §11).
template <class F>
F* keep_out_of_line(F* fn) {
  F* volatile ptr = fn;
  return ptr;
}

inline int64_t round_up(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

inline Batch load(const float* p) { return Batch::load_unaligned(p); }
inline void store(float* p, Batch x) { x.store_unaligned(p); }
inline float sum(Batch x) { return xsimd::hadd(x); }
inline float max(Batch x) {
  alignas(64) float lanes[kLanes];
  x.store_aligned(lanes);
  float m = lanes[0];
  for (int64_t l = 1; l < kLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  return m;
}

// exp(x) for x <= 0 (including -inf -> 0), relative error about 1e-7. Cephes expf in base 2: x = n ln2 + g with
// |g| <= ln2/2; n is rounded with the 1.5·2^23 magic add and 2^n built by shifting n into the exponent bits, so no
// float-to-int conversion is needed (Emscripten 3.1.6 emulates that one lane at a time). Below -87.3 the result
// would be subnormal and is flushed to 0; the engine never needs weights that small relative to the row maximum.
inline Batch exp_nonpositive(Batch x) {
  const Batch magic(12582912.0f);  // 1.5 * 2^23
  const Batch lo(-87.3f);
  const Batch xc = xsimd::max(x, lo);
  const Batch shifted = xsimd::fma(xc, Batch(1.44269504088896341f), magic);
  const Batch n = shifted - magic;
  const Batch g = xsimd::fma(n, Batch(-0.693359375f), xc) + n * Batch(2.12194440e-4f);  // xc - n ln2, two-part ln2
  Batch p(1.9875691500e-4f);
  p = xsimd::fma(p, g, Batch(1.3981999507e-3f));
  p = xsimd::fma(p, g, Batch(8.3334519073e-3f));
  p = xsimd::fma(p, g, Batch(4.1665795894e-2f));
  p = xsimd::fma(p, g, Batch(1.6666665459e-1f));
  p = xsimd::fma(p, g, Batch(5.0000001201e-1f));
  const Batch e = xsimd::fma(p, g * g, g) + Batch(1.0f);
  // The low mantissa bits of `shifted` hold n + 2^22 (two's complement within the 23-bit field).
  const IntBatch bits = xsimd::bitwise_cast<IntBatch>(shifted) - xsimd::bitwise_cast<IntBatch>(magic);
  const Batch pow2n = xsimd::bitwise_cast<Batch>((bits + IntBatch(127)) << 23);
  return xsimd::select(x < lo, Batch(0.0f), e * pow2n);
}

inline Batch log(Batch x) { return xsimd::log(x); }

}  // namespace ka::simd
