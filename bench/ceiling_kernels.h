// The SIMD ceiling probes of `npm run bench`, written with the core's own SIMD layer (xsimd at the build's batch
// width: 4 floats under WebAssembly SIMD128 and native SSE4.1, 8 under AVX2). Shared by ceiling.cpp (wasm) and
// native_bench.cpp, so the wasm and native figures come from the same source.
//   dot:  two L1-resident arrays of 2048 floats, 4 batch accumulators (loads and multiply+add per element pair).
//   madd: 12 independent chains x = x·a + b, a separate multiply and add each (no FMA: WebAssembly SIMD has none),
//         enough chains to cover the 2 × 3-cycle latency at 2 multiply+add pairs per cycle; 12 chains + 2 constants
//         stay within the ~15 SIMD registers V8 gives (docs/toolchain.md, "What fast loops need in V8").
// Both kernels are called many times through a volatile function pointer: binaryen's inliner ignores `noinline`, and a
// kernel inlined into a caller that runs once stays in V8's baseline tier (docs/toolchain.md, "What fast loops need in
// V8").
#pragma once
#include <chrono>

#include <xsimd/xsimd.hpp>

namespace ka_bench {

using Batch = xsimd::batch<float>;
constexpr int kLanes = int(Batch::size);
constexpr int kDotLength = 2048;
constexpr int kChains = 12;
constexpr int kMaddSteps = 1024;

inline float dot(const float* a, const float* b) {
  Batch s0(0.0f), s1(0.0f), s2(0.0f), s3(0.0f);
  for (int i = 0; i < kDotLength; i += 4 * kLanes) {
    s0 += Batch::load_unaligned(a + i) * Batch::load_unaligned(b + i);
    s1 += Batch::load_unaligned(a + i + kLanes) * Batch::load_unaligned(b + i + kLanes);
    s2 += Batch::load_unaligned(a + i + 2 * kLanes) * Batch::load_unaligned(b + i + 2 * kLanes);
    s3 += Batch::load_unaligned(a + i + 3 * kLanes) * Batch::load_unaligned(b + i + 3 * kLanes);
  }
  return xsimd::hadd((s0 + s1) + (s2 + s3));
}

// x_c ← x_c·a + b for kMaddSteps steps; a < 1 keeps every chain bounded (it converges to b / (1 − a)). a and b are
// arguments, not constants: V8 rematerialises a v128.const at every use instead of keeping it in a register.
inline void madd(float* state, float a_in, float b_in) {
  const Batch a(a_in), b(b_in);
  Batch x[kChains];
  for (int c = 0; c < kChains; ++c) x[c] = Batch::load_unaligned(state + c * kLanes);
  for (int s = 0; s < kMaddSteps; ++s) {
    for (int c = 0; c < kChains; ++c) x[c] = x[c] * a + b;
  }
  for (int c = 0; c < kChains; ++c) x[c].store_unaligned(state + c * kLanes);
}

inline volatile float sink = 0;

template <class Body>
double gflops(double flops, Body body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return flops / elapsed.count() / 1e9;
}

// GFLOP/s of `calls` dot products (2 flops per element pair).
inline double dot_gflops(int calls) {
  static float a[kDotLength], b[kDotLength];
  for (int i = 0; i < kDotLength; ++i) a[i] = b[kDotLength - 1 - i] = float(i % 7) * 0.125f;
  float (*volatile kernel)(const float*, const float*) = dot;
  return gflops(2.0 * kDotLength * calls, [&] {
    float s = 0;
    for (int n = 0; n < calls; ++n) s += kernel(a, b);
    sink = s;
  });
}

// GFLOP/s of `calls` madd blocks (a multiply and an add per lane per step).
inline double madd_gflops(int calls) {
  static float state[kChains * kLanes];
  for (int i = 0; i < kChains * kLanes; ++i) state[i] = float(i) / (kChains * kLanes);
  void (*volatile kernel)(float*, float, float) = madd;
  return gflops(2.0 * kMaddSteps * kChains * kLanes * calls, [&] {
    for (int n = 0; n < calls; ++n) kernel(state, 0.999f, 0.001f);
    sink = state[0];
  });
}

}  // namespace ka_bench
