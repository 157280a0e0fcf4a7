// The only file that includes xsimd: the float batch type, its lane count, and the few vector functions the engine
// needs, pinned to xsimd 8.1 names. Under Emscripten this compiles to WebAssembly SIMD128 via SSE4.1 emulation.
#pragma once
#include <cstdint>

#include <xsimd/xsimd.hpp>

// Hot helpers must be inlined into their loops; GCC otherwise calls exp through memory at -O3.
#define KA_ALWAYS_INLINE inline __attribute__((always_inline))

namespace ka::simd {

using Batch = xsimd::batch<float>;
using IntBatch = xsimd::batch<int32_t>;
using DoubleBatch = xsimd::batch<double>;
constexpr int64_t kLanes = int64_t(Batch::size);
constexpr int64_t kDoubleLanes = int64_t(DoubleBatch::size);

// Calls a hot per-tile kernel through a pointer the optimiser cannot see through, so it stays a function of its own.
// Under WebAssembly, V8 tiers a function up to optimised code only between calls; a kernel inlined into a caller
// that runs once per call would stay in the baseline compiler, at about a third of the speed (docs/toolchain.md, "What
// fast loops need in V8").
template <class F>
F* keep_out_of_line(F* fn) {
  F* volatile ptr = fn;
  return ptr;
}

inline int64_t round_up(int64_t n) { return (n + kLanes - 1) / kLanes * kLanes; }

inline Batch load(const float* p) { return Batch::load_unaligned(p); }
inline DoubleBatch load(const double* p) { return DoubleBatch::load_unaligned(p); }
inline void store(double* p, DoubleBatch x) { x.store_unaligned(p); }
inline void store(float* p, Batch x) { x.store_unaligned(p); }
inline float sum(Batch x) { return xsimd::hadd(x); }
inline float max(Batch x) {
  alignas(64) float lanes[kLanes];
  x.store_aligned(lanes);
  float m = lanes[0];
  for (int64_t l = 1; l < kLanes; ++l) m = lanes[l] > m ? lanes[l] : m;
  return m;
}

// Constants of exp2_nonpositive, read from memory. Written inline, each would be a v128.const, which V8 builds in a
// register with several instructions at every use; a broadcast load is one instruction.
struct ExpConstants {
  // 1.5·2^23 + 127: adding it rounds to an integer n and leaves n + 127, the biased exponent of 2^n, in the low
  // mantissa bits, so 2^n is one shift away.
  float magic = 12583039.0f;
  float lo = -127.0f;  // clamped here, n + 127 = 0 and 2^n comes out as exactly 0
  float hi = 127.0f;   // exp2_neg's clamp, -lo
  // 2^f on [-1/2, 1/2], degree 5, fitted for relative error (1.5e-7 with float32 coefficients).
  float c[6] = {1.0000001192092896f,  0.6931469440460205f,   0.24022112786769867f,
                0.05550713092088699f, 0.009675883688032627f, 0.0013277444522827864f};
  // The same polynomial in g = -f, for exp2_neg: the odd coefficients negated. Stored rather than negated in code, so
  // that each step is the same single fma (or multiply, add) as in exp2_nonpositive, with or without hardware FMA.
  float c_neg[6] = {c[0], -c[1], c[2], -c[3], c[4], -c[5]};
};

// The shared constants, behind a pointer the optimiser cannot fold back into inline constants. Fetch it once per
// kernel call, outside the hot loop.
inline const ExpConstants& exp_constants() {
  static const ExpConstants constants;
  return *keep_out_of_line(&constants);
}

// p(t) · 2^n for |t| <= 1/2, where p is the degree-5 polynomial with coefficients c in Estrin form (its short
// dependency chain matters more than its operation count here) and `shifted` holds n + 127 in its low mantissa bits,
// so that 2^n is one shift away: the common tail of exp2_nonpositive and exp2_neg.
KA_ALWAYS_INLINE Batch polynomial_times_pow2(Batch t, const float (&c)[6], Batch shifted) {
  const Batch t2 = t * t;
  const Batch a = xsimd::fma(Batch(c[5]), t, Batch(c[4]));
  const Batch b = xsimd::fma(Batch(c[3]), t, Batch(c[2]));
  const Batch c01 = xsimd::fma(Batch(c[1]), t, Batch(c[0]));
  const Batch p = xsimd::fma(xsimd::fma(a, t2, b), t2, c01);
  return p * xsimd::bitwise_cast<Batch>(xsimd::bitwise_cast<IntBatch>(shifted) << 23);
}

// 2^x for x <= 0 (including -inf -> 0), relative error about 2e-7 on [-126, 0]. The float paths of the engine keep
// scores in log2 units (the kernels fold log2(e) into their factors), so this is their exp. x = n + f with
// |f| <= 1/2: n is rounded with the magic add and 2^n built by shifting the biased exponent left by 23, with no
// float-to-int conversion (Emscripten 3.1.6 emulates that one lane at a time) and no select; 2^f is the polynomial.
// At or below -126.5 the result is exactly 0 (just above, it is subnormal).
KA_ALWAYS_INLINE Batch exp2_nonpositive(Batch x, const ExpConstants& k) {
  const Batch magic(k.magic);
  const Batch xc = xsimd::max(x, Batch(k.lo));
  const Batch shifted = xc + magic;
  return polynomial_times_pow2(xc - (shifted - magic), k.c, shifted);
}

// 2^-y for y >= 0 (including +inf -> 0): exp2_nonpositive(-y) bit for bit, for a caller whose argument is naturally
// non-negative (a distance kernel's cost), so that no negation lengthens the chain. The same steps mirrored:
// magic - y rounds to n + 127 with n = round(-y), g = y + n = -f, and the polynomial is evaluated in g (c_neg).
KA_ALWAYS_INLINE Batch exp2_neg(Batch y, const ExpConstants& k) {
  const Batch magic(k.magic);
  const Batch yc = xsimd::min(y, Batch(k.hi));
  const Batch shifted = magic - yc;
  return polynomial_times_pow2(yc + (shifted - magic), k.c_neg, shifted);
}

inline Batch log2(Batch x) { return xsimd::log2(x); }

}  // namespace ka::simd
