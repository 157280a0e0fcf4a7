#!/usr/bin/env bash
# Builds the native core + doctest suite (build/native) and the WebAssembly module + wasm doctest suite (build/wasm).
#   scripts/build.sh            both
#   scripts/build.sh wasm       the WebAssembly modules and the wasm doctest suite
#   scripts/build.sh package    only the WebAssembly modules, single-thread and pthreads (what the package, the demo and
#                               the benchmark need)
#   scripts/build.sh sanitize   the native suite under AddressSanitizer + UBSan (build/sanitize)
#   scripts/build.sh sizes      the single-thread module linked again with function names (build/sizes), and what its
#                               bytes are (bench/wasm-sizes.mjs: docs/package.md, "What the bytes are")
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
jobs=$(nproc 2>/dev/null || echo 2)
# emcc's JS optimizer needs Debian's acorn at -O1 and above (docs/toolchain.md, "Setup").
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}

if [[ $what == all || $what == native ]]; then
  cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build/native -j "$jobs"
fi
if [[ $what == all || $what == sanitize ]]; then
  cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
    -DKA_SANITIZE=ON >/dev/null
  cmake --build build/sanitize -j "$jobs" --target ka_tests
fi
if [[ $what == all || $what == wasm || $what == package || $what == sizes ]]; then
  cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_TOOLCHAIN_FILE=/usr/share/emscripten/cmake/Modules/Platform/Emscripten.cmake >/dev/null
  if [[ $what == sizes ]]; then
    cmake --build build/wasm -j "$jobs" --target ka_wasm
  elif [[ $what == package ]]; then
    cmake --build build/wasm -j "$jobs" --target ka_wasm ka_wasm_threads ka_wasm_threads_node
  else
    cmake --build build/wasm -j "$jobs"
  fi
fi
if [[ $what == sizes ]]; then
  # ka_wasm's own link line with --profiling-funcs (names kept, code as optimised as the shipped module's) and the
  # output in build/sizes instead of web/dist.
  mkdir -p build/sizes
  link=$(sed -e "s| -o [^ ]*kernel_attention.mjs | -o $PWD/build/sizes/kernel_attention.mjs |" \
    build/wasm/CMakeFiles/ka_wasm.dir/link.txt)
  (cd build/wasm && eval "$link --profiling-funcs")
  node bench/wasm-sizes.mjs build/sizes/kernel_attention.wasm --top 20
fi
