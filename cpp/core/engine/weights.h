// The explicit weight matrix, for callers who ask for it (plots, inspection): O(I·J) output.
#pragma once
#include "engine/problem.h"

namespace ka {

// Writes the normalised weights w_ij / Σ_l w_il into out, laid out [head][query][key] (H·I·J floats); each row
// sums to 1. p.values is ignored. Empty rows follow p.empty: NaN, zeros, the nearest keys sharing weight 1
// (zeros when the masks allow no key), or EmptyRow. Same preconditions and overflow handling as attention().
Result weights(const Problem& p, float* out);

// Rows [first, last) of head `head` of that matrix, into out ((last − first)·J floats, row-major): what weights()
// writes there, for callers that stream over query rows.
Result weight_rows(const Problem& p, int32_t head, int64_t first, int64_t last, float* out);

}  // namespace ka
