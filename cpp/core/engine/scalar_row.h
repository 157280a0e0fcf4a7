// The plain scalar path: one query against every key, one key at a time, in T. It is the readable form of what the
// SIMD engine computes, and the engine's fallback for rows whose float32 scores overflowed (in double every score
// of float32 inputs is finite: |u| <= 2·FLT_MAX / FLT_TRUE_MIN ≈ 5e83, so u² stays far below DBL_MAX).
#pragma once
#include "engine/head.h"
#include "engine/online_softmax.h"

namespace ka {

template <class T>
void accumulate_row(const Head& hd, int64_t i, SoftmaxState<T>& st) {
  const int64_t dims = hd.queries.cols;
  for (int64_t j = 0; j < hd.keys.rows; ++j) {
    if (!hd.allows(i, j)) continue;
    st.add(log_score<T>(hd.kernel, hd.queries.row(i), hd.keys.row(j), dims), hd.values.row(j));
  }
}

}  // namespace ka
