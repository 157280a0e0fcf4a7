// Force-included in the WebAssembly build only (docs/toolchain.md, "SIMD through xsimd on WebAssembly"):
// Emscripten 3.1.6 emulates these SSE intrinsics one lane at a time; map them to single WebAssembly SIMD instructions.
// xsimd itself is untouched.
#pragma once
#include <wasm_simd128.h>
#include <smmintrin.h>

#undef _mm_cvttps_epi32
#undef _mm_cvtps_epi32
#undef _mm_min_ps
#undef _mm_max_ps
// Saturating conversions differ from SSE only for NaN and out-of-range lanes. pmin/pmax with swapped arguments
// reproduce minps/maxps exactly, NaN and signed zeros included.
#define _mm_cvttps_epi32(a) ((__m128i)wasm_i32x4_trunc_sat_f32x4((v128_t)(a)))
#define _mm_cvtps_epi32(a) ((__m128i)wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_nearest((v128_t)(a))))
#define _mm_min_ps(a, b) ((__m128)wasm_f32x4_pmin((v128_t)(b), (v128_t)(a)))
#define _mm_max_ps(a, b) ((__m128)wasm_f32x4_pmax((v128_t)(b), (v128_t)(a)))
