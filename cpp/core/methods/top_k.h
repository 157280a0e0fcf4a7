// Top-k attention (issue 5, item 4): each query keeps only its k largest weights, renormalised. A different model
// from full attention, not an approximation with a tolerance; its distance from full attention is reported exactly
// as certified sparsity reports its own (the dropped mass), so the two share SparseOut and SparseReport.
#pragma once
#include <cstdint>

#include "engine/problem.h"
#include "methods/sparse.h"

namespace ka {

// attention() with every row's weights (as weights() computes them: any kernel, mask, group, head count and empty
// policy) cut to its k largest, ties going to the lower key index, and renormalised; zero weights are never kept.
// out.dropped[i·H + h] = (weight dropped) / (weight kept), so every output is within dropped / (1 + dropped) × the
// range of the values of full attention; 0 when the row has at most k nonzero weights, NaN for a NaN row (an
// empty row under EmptyPolicy::NaN). report->error_estimate is the largest dropped / (1 + dropped), kept_keys and
// skipped_keys count (query, key) pairs. Sums in double; one thread; memory O(16·J), never I×J.
// sum_sq_weights, effective_keys and log_denominator of `out` are not computed (must be null).
Result top_k_attention(const Problem& p, int64_t k, const SparseOut& out, SparseReport* report);

}  // namespace ka
