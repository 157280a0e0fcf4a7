#!/usr/bin/env bash
# Builds what `npm run bench` runs besides the package itself (scripts/build.sh package builds that):
#   build/bench/native-sse4.1/ka_native_bench   the core natively at the WebAssembly SIMD width (SSE4.1, 4 floats)
#   build/bench/native-avx2/ka_native_bench     the core natively with AVX2+FMA (8 floats)
#   build/bench/wasm/ceiling.mjs                the WebAssembly SIMD ceiling probe, with the core's wasm flags
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
# emcc's JS optimizer needs Debian's acorn at -O1 and above (docs/toolchain.md, "Setup").
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
common=(-DCMAKE_BUILD_TYPE=Release -DKA_BUILD_TESTS=OFF -DKA_BUILD_BENCH=ON)

for flavour in sse4.1 avx2; do
  avx2=$([[ $flavour == avx2 ]] && echo ON || echo OFF)
  cmake -S . -B "build/bench/native-$flavour" "${common[@]}" -DKA_NATIVE_AVX2="$avx2" >/dev/null
  cmake --build "build/bench/native-$flavour" --target ka_native_bench -j "$jobs"
done
cmake -S . -B build/bench/wasm "${common[@]}" \
  -DCMAKE_TOOLCHAIN_FILE=/usr/share/emscripten/cmake/Modules/Platform/Emscripten.cmake >/dev/null
cmake --build build/bench/wasm --target ka_ceiling -j "$jobs"
