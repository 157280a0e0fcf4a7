// The wide path of the exact engine: softmax attention with head dimension >= kWideMinDims.
#pragma once
#include "engine/head.h"
#include "base/status.h"
#include "base/views.h"
#include "engine/workspace.h"

namespace ka {

constexpr int64_t kWideMinDims = 8;

// Computes queries [range.first, range.last) of one head into `out` (this head's columns). Q·Kᵀ runs in 4-query ×
// 2-batch register tiles over packed key tiles; P·V accumulates each query's value sums vectorised over D, reading
// value rows in place.
Result run_wide(const Head& hd, int32_t head, QueryRange range, Workspace& ws, Matrix out);

}  // namespace ka
