// The online-softmax state of one query (Milakov & Gimelshein 2018; KeOps' Max_SumShiftExpWeight reduction).
//
// Over a set of keys with scores s_j and values v_j the state is (m, z, a):
//   m = max_j s_j,   z = sum_j exp(s_j - m),   a = sum_j exp(s_j - m) v_j,   and the result is a / z.
// Max-shift identity: for any c >= m, exp(s_j - c) = exp(s_j - m) exp(m - c), so two states over disjoint key sets
// merge exactly: m = max(m1, m2), z = z1 e^(m1-m) + z2 e^(m2-m), a likewise. Every weight is <= 1 after the shift,
// so nothing overflows, and the arg-max key has weight 1, so z >= 1 whenever any key is admissible: no 0/0.
//
// This file is also the one place that decides what an empty row (no admissible key, z = 0) returns.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "engine/problem.h"

namespace ka {

template <class T>
struct SoftmaxState {
  T max = -std::numeric_limits<T>::infinity();
  T sum = 0;
  T* acc = nullptr;  // `width` weighted value sums, owned by the caller
  int64_t width = 0;

  void reset() {
    max = -std::numeric_limits<T>::infinity();
    sum = 0;
    for (int64_t d = 0; d < width; ++d) acc[d] = 0;
  }

  // Shifts the state to a new maximum c >= max (the max-shift identity above).
  void rescale_to(T c) {
    const T f = max == -std::numeric_limits<T>::infinity() ? T(0) : T(std::exp(max - c));
    sum *= f;
    for (int64_t d = 0; d < width; ++d) acc[d] *= f;
    max = c;
  }

  // Adds one key. A score of -inf (outside the support) contributes nothing.
  void add(T score, const float* value) {
    if (score == -std::numeric_limits<T>::infinity()) return;
    if (score > max) rescale_to(score);
    const T w = std::exp(score - max);
    sum += w;
    for (int64_t d = 0; d < width; ++d) acc[d] += w * T(value[d]);
  }

  void merge(const SoftmaxState& other) {
    if (other.sum == 0) return;
    if (other.max > max) rescale_to(other.max);
    const T f = std::exp(other.max - max);
    sum += other.sum * f;
    for (int64_t d = 0; d < width; ++d) acc[d] += other.acc[d] * f;
  }

  bool empty() const { return !(sum > 0); }
};

enum class RowOutcome { Done, NeedsNearest, Error };

// Fills an empty row (no admissible key) by the policy. NeedsNearest asks the engine for the nearest-key pass;
// Error makes the call fail with Status::EmptyRow.
inline RowOutcome apply_empty_policy(float* out, int64_t width, EmptyPolicy policy) {
  switch (policy) {
    case EmptyPolicy::NaN: std::fill(out, out + width, std::numeric_limits<float>::quiet_NaN()); return RowOutcome::Done;
    case EmptyPolicy::Zero: std::fill(out, out + width, 0.0f); return RowOutcome::Done;
    case EmptyPolicy::Nearest: return RowOutcome::NeedsNearest;
    case EmptyPolicy::Error: return RowOutcome::Error;
  }
  return RowOutcome::Error;
}

// A weighted mean a / z as float32. The mean of finite float32 values lies within float32 range, but a carries the
// float32 tile sums' rounding (~2^-24 relative), so a mean of values at ±FLT_MAX can come out just beyond it: such a
// quotient is clamped to ±FLT_MAX instead of rounding to ±inf. Infinite and NaN quotients (from infinite or NaN
// values) pass through.
inline float mean_to_float(double mean) {
  constexpr double kMax = std::numeric_limits<float>::max();
  return float(std::isfinite(mean) ? std::clamp(mean, -kMax, kMax) : mean);
}

// Writes the row's result a / z, or applies the empty-row policy.
template <class T>
RowOutcome finalize(const SoftmaxState<T>& st, float* out, EmptyPolicy policy) {
  if (st.empty()) return apply_empty_policy(out, st.width, policy);
  for (int64_t d = 0; d < st.width; ++d) out[d] = mean_to_float(double(st.acc[d]) / double(st.sum));
  return RowOutcome::Done;
}

}  // namespace ka
