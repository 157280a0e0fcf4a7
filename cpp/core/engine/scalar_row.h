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

// Marks (with 1) the admissible keys of query i that share the highest nearest_score; returns how many there are.
// `chosen` has J entries. Exact ties share the weight, which is the limit of a vanishing bandwidth.
inline int64_t nearest_keys(const Head& hd, int64_t i, uint8_t* chosen) {
  const int64_t dims = hd.queries.cols;
  double best = -std::numeric_limits<double>::infinity();
  int64_t count = 0;
  for (int64_t j = 0; j < hd.keys.rows; ++j) {
    chosen[j] = 0;
    if (!hd.allows(i, j)) continue;
    const double s = nearest_score<double>(hd.kernel, hd.queries.row(i), hd.keys.row(j), dims);
    if (s > best) { best = s; count = 0; }
    if (s == best) ++count;
  }
  if (count == 0) return 0;
  for (int64_t j = 0; j < hd.keys.rows; ++j)
    chosen[j] = hd.allows(i, j) &&
                nearest_score<double>(hd.kernel, hd.queries.row(i), hd.keys.row(j), dims) == best;
  return count;
}

}  // namespace ka
