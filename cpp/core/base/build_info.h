// What the core was compiled for, reported to users (e.g. `ka.simd` in JS).
#pragma once

namespace ka {

// The xsimd instruction set of the float batches: "sse4.1" under WebAssembly SIMD128, "fma3+avx2" natively.
const char* simd_name();

}  // namespace ka
