// The WebAssembly SIMD ceiling probe for `npm run bench`: the kernels of ceiling_kernels.h, compiled with the core's
// flags (-O3 -msimd128 -msse4.1 and cpp/sse_fix.h, taken from ka_core by CMake) into a small single-file ES module.
#include <emscripten/emscripten.h>

#include "ceiling_kernels.h"

extern "C" {

EMSCRIPTEN_KEEPALIVE double ceiling_dot(int calls) { return ka_bench::dot_gflops(calls); }
EMSCRIPTEN_KEEPALIVE double ceiling_madd(int calls) { return ka_bench::madd_gflops(calls); }
}
