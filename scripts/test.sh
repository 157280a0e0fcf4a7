#!/usr/bin/env bash
# Runs every test: the doctest suite natively, under ASan+UBSan and as wasm under Node (CTest), then the JS and
# browser suites (the main JS suites on both WebAssembly builds); the published types are checked against
# tests/types/consumer.ts (tsc --strict).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build/native --output-on-failure -j "$jobs"
# Under ASan+UBSan every suite but the two longest searches (bandwidth, cv_scan: 2.5 of its 6 minutes), which run
# natively and as wasm: the whole suite stays well under 30 minutes on 2 cores.
ctest --test-dir build/sanitize --output-on-failure -j "$jobs" -E "^(bandwidth|cv_scan)$"
ctest --test-dir build/wasm --output-on-failure -j "$jobs"
npx tsc -p tests/types
npx prettier --check --log-level warn "**/*.{js,mjs,cjs,ts,cts}"  # the JS formatting (.prettierrc.json; npm run format)
node --test --test-reporter=spec tests/js/ tests/browser/ tests/package/ tests/cli/
# The JS suites above ran on init()'s default, the pthreads build in Node: rerun the main ones on the single-thread module.
KA_TEST_THREADS=1 node --test --test-reporter=dot tests/js/api.test.mjs tests/js/fixtures.test.mjs
bash scripts/fuzz.sh  # libFuzzer harnesses of the core: a fixed seed and number of runs each, on a copy of fuzz/corpus
