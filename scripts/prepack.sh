#!/usr/bin/env bash
# npm's prepack hook (npm pack, npm publish): the tarball needs web/dist/, which git ignores, so build it here.
# Without emcc it refuses rather than pack a package whose import fails. KA_PREPACK_USE_DIST=1 packs the web/dist/ that
# is already there without rebuilding (tests/package/clone.test.mjs, which copies a fresh build into a clone).
set -euo pipefail
cd "$(dirname "$0")/.."
outputs=(web/dist/kernel_attention.mjs web/dist/kernel_attention.wasm
  web/dist/kernel_attention_threads.mjs web/dist/kernel_attention_threads.wasm web/dist/kernel_attention_threads.worker.js
  web/dist/node/kernel_attention_threads.js
  web/dist/node/kernel_attention_threads.worker.js web/dist/node/package.json)
missing() { for f in "${outputs[@]}"; do [[ -f $f ]] || echo "$f"; done; }

if [[ ${KA_PREPACK_USE_DIST:-} == 1 ]]; then
  if [[ -n $(missing) ]]; then
    echo "prepack: KA_PREPACK_USE_DIST=1, but these build outputs are missing:" >&2; missing >&2; exit 1
  fi
  echo "prepack: packing the existing web/dist/ (KA_PREPACK_USE_DIST=1)" >&2
  exit 0
fi
if ! command -v emcc >/dev/null || ! command -v cmake >/dev/null; then
  echo "prepack: refusing to pack: the WebAssembly build needs emcc (Emscripten 3.1.6) and cmake, and this machine" >&2
  echo "lacks them. Install them (Debian: npm run setup), or run npm pack where they are." >&2
  exit 1
fi
bash scripts/build.sh package
if [[ -n $(missing) ]]; then
  echo "prepack: the build finished without these outputs:" >&2; missing >&2; exit 1
fi
