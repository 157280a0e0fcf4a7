#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/, clang with -fsanitize=fuzzer,address,undefined, in build/fuzz) and runs
# each for a bounded time over a scratch copy of its committed seed corpus; fails on the first finding.
#   scripts/fuzz.sh                     every harness, KA_FUZZ_SECONDS (default 30) seconds each
#   scripts/fuzz.sh attention states    only these
#   KA_FUZZ_SECONDS=300 scripts/fuzz.sh a longer run (docs/reliability.md)
# A finding leaves its input in build/fuzz/findings/<harness>/; reproduce with build/fuzz/fuzz/fuzz_<harness> FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${KA_FUZZ_SECONDS:-30}
harnesses=("$@")
((${#harnesses[@]})) || harnesses=(attention weights states bandwidth regression)
jobs=$(nproc 2>/dev/null || echo 2)

CC=clang CXX=clang++ cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKA_FUZZ=ON -DKA_BUILD_TESTS=OFF \
  >/dev/null
cmake --build build/fuzz -j "$jobs" --target "${harnesses[@]/#/fuzz_}"

for h in "${harnesses[@]}"; do
  # The committed corpus stays as committed: new inputs go to a scratch copy that each run starts afresh.
  work=build/fuzz/corpus/$h findings=build/fuzz/findings/$h
  rm -rf "$work" && mkdir -p "$work" "$findings"
  cp fuzz/corpus/"$h"/* "$work"/
  echo "fuzz: $h for ${seconds}s ($(ls "$work" | wc -l) seeds)" >&2
  # Findings abort (UBSan aborts, invariants abort); a run that hits none exits 0 after max_total_time.
  if ! nice -n 10 build/fuzz/fuzz/fuzz_"$h" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 \
       -max_len=4096 -print_final_stats=1 -artifact_prefix="$findings/" "$work" 2>build/fuzz/"$h".log; then
    tail -n 60 build/fuzz/"$h".log >&2
    echo "fuzz: $h found a problem; input in $findings/" >&2
    exit 1
  fi
  grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::average_exec_per_sec)' build/fuzz/"$h".log >&2 || true
done
echo "fuzz: ${#harnesses[@]} passed, 0 failed"
