#!/usr/bin/env bash
# Runs every test: the doctest suite natively, under ASan+UBSan and as wasm under Node (CTest), then the JS and
# browser suites.
set -euo pipefail
cd "$(dirname "$0")/.."
ctest --test-dir build/native --output-on-failure
ctest --test-dir build/sanitize --output-on-failure
ctest --test-dir build/wasm --output-on-failure
node --test --test-reporter=spec tests/js/ tests/browser/
