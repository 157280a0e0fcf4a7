#!/usr/bin/env bash
# Runs every test: the doctest suite natively, under ASan+UBSan and as wasm under Node (CTest), then the JS and
# browser suites (the main JS suites on both WebAssembly builds); the published types are checked against
# tests/types/consumer.ts (tsc --strict).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
ctest --test-dir build/native --output-on-failure -j "$jobs"
# Under ASan+UBSan every suite but the longest searches and the thread pool's (bandwidth, cv_scan, cv_scan_2d,
# threads: 20-30 times their native time there, more than half of the sanitized run), which run natively and as wasm
# (threads also as the pthreads build): the whole suite stays well under 30 minutes on 2 cores.
ctest --test-dir build/sanitize --output-on-failure -j "$jobs" -E "^(bandwidth|cv_scan|cv_scan_2d|threads)$"
ctest --test-dir build/wasm --output-on-failure -j "$jobs"
npx tsc -p tests/types
npx prettier --check --log-level warn "**/*.{js,mjs,cjs,ts,cts}"  # the JS formatting (.prettierrc.json; npm run format)
# The JS and CLI suites two files at a time (each file is its own Node process, mostly on one core); the browser and
# package suites one at a time (Chromium, bundlers and npm use both cores themselves).
node --test --test-concurrency=2 --test-reporter=spec tests/js/ tests/cli/
node --test --test-concurrency=1 --test-reporter=spec tests/browser/ tests/package/
# The JS suites above ran on init()'s default, the pthreads build in Node: rerun the main ones on the single-thread module.
KA_TEST_THREADS=1 node --test --test-concurrency=2 --test-reporter=dot tests/js/api.test.mjs tests/js/fixtures.test.mjs
bash scripts/fuzz.sh  # libFuzzer harnesses of the core: a fixed seed and number of runs each, on a copy of fuzz/corpus
