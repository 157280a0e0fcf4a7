// Mergeable partial results, for sharding keys across workers, processes or machines.
//
// The state of query i (head h) over a set of keys is (m, z, a): m the reference log-weight (natural log; at least
// every score, −inf when no key was admissible), z = Σ_j exp(s_ij − m) and a = Σ_j exp(s_ij − m) v_j. States over
// disjoint key sets merge exactly by the max-shift identity (online_softmax.h), in any order, and finalize to what
// attention() over the union of the keys returns (up to float32 rounding of the stored states).
#pragma once
#include "engine/online_softmax.h"

namespace ka {

// max and sum hold I × H floats ([query][head]); acc is I × D (each head's D/H value sums in its columns): the
// serial form of online_softmax.h's state, in float32.
using States = StateTable<float>;

// The states of every query over p.keys. Masks index keys within this shard (0 … J−1). p.empty is not used.
Result attention_states(const Problem& p, States out);

// into ← merge(into, other), element-wise; both must have the same shape.
Result merge_states(States into, const States& other);

// out = a / z per query and head; a query whose merged state is empty (z = 0) follows `policy`, which must not be
// Nearest (the keys are not at hand). Error returns EmptyRow with the first such query and head.
Result finalize_states(const States& s, EmptyPolicy policy, Matrix out);

}  // namespace ka
