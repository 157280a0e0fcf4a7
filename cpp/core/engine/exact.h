// The exact streaming engine: Nadaraya–Watson smoothing and attention, f(q_i) = Σ_j w_ij v_j / Σ_j w_ij.
#pragma once
#include "engine/problem.h"

namespace ka {

// Computes out (I × D, row-major, row stride out.stride) for every query, head by head.
// Preconditions are those of check(p, true); violations return BadShape/BadArgument and leave `out` untouched.
// Memory: O(tile) scratch, never I×J. Scores are shifted by their running maximum (online softmax), so no weight
// overflows and the best key always has weight 1. Rows whose float32 scores overflow are recomputed in double.
// A query with no admissible key follows p.empty; with EmptyPolicy::Error the call returns EmptyRow with the
// first such row (and head) in the Result, and the contents of `out` are unspecified.
// p.threads > 1 splits the queries over that many threads (where the build has threads); every output is
// bit-identical to the single-thread result, whatever the thread count.
Result attention(const Problem& p, Matrix out);
// The same on `threads` threads instead of p.threads.
Result attention(const Problem& p, Matrix out, int32_t threads);

// Calls with fewer query blocks (key_tile.h's kQueryBlock rows each) than this, unmasked, cut the keys into shards
// (exact.cpp): a caller that splits one call's rows into several calls keeps the bytes only with pieces of at least
// kShardBelowBlocks · kQueryBlock rows wherever the whole call was unsharded (attention.js's steps read it).
constexpr int64_t kShardBelowBlocks = 4;

template <class S>
struct StateTable;
// Where a caller wants each row's unnormalised state instead of its output (online_softmax.h): max and sum in double,
// so that merging states loses nothing to a rounded max; the table's acc is the output matrix itself.
using StateOut = StateTable<double>;
// attention(), or with `states` the unnormalised per-query states (see states.h). Internal to the core.
Result run_exact(const Problem& p, Matrix out, const StateOut* states, int32_t threads);

}  // namespace ka
