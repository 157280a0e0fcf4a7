// The online-softmax state of one query (Milakov & Gimelshein 2018; KeOps' Max_SumShiftExpWeight reduction).
//
// Over a set of keys with scores s_j and values v_j the state is (m, z, a):
//   m = max_j s_j,   z = sum_j exp(s_j - m),   a = sum_j exp(s_j - m) v_j,   and the result is a / z.
// Max-shift identity: for any c >= m, exp(s_j - c) = exp(s_j - m) exp(m - c), so two states over disjoint key sets
// merge exactly: m = max(m1, m2), z = z1 e^(m1-m) + z2 e^(m2-m), a likewise. Every weight is <= 1 after the shift,
// so nothing overflows, and the arg-max key has weight 1, so z >= 1 whenever any key is admissible: no 0/0.
//
// This file is also the one place that turns a state into its output row, finalize(), and so the one place that
// decides what an empty row (no admissible key, z = 0) returns.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "engine/head.h"

namespace ka {

// The max-shift identity's factor e^(from − to), which moves sums taken under the shift `from` to a shift
// to >= from; 0 when nothing was summed yet (from = −inf). shift_factor2 is the same in base 2, for the float
// paths' log2 scores. Every running state in the core rescales by these two, in the precision of its own sums.
template <class T>
T shift_factor(T from, T to) {
  return from == -std::numeric_limits<T>::infinity() ? T(0) : T(std::exp(from - to));
}
template <class T>
T shift_factor2(T from, T to) {
  return from == -std::numeric_limits<T>::infinity() ? T(0) : T(std::exp2(from - to));
}

// The batch half of a rescale: n sums taken under the old shift, times its shift_factor.
template <class T>
void scale_sums(T* x, int64_t n, T f) {
  for (int64_t k = 0; k < n; ++k) x[k] *= f;
}

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
    const T f = shift_factor(max, c);
    sum *= f;
    scale_sums(acc, width, f);
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

  // The batch form of add(), for a block of keys whose weights were taken under this state's shift (a fixed
  // shift, or one rescale_to() moved the state to first): z += block_sum, a_d += block_acc(d) for d < width.
  // `block_acc` is a function of d, so that SIMD lane sums can be reduced straight into the state. Width > 0 says
  // that width is that constant: the loop then unrolls, and a caller's registers indexed by d stay registers (a
  // run-time index would put them in memory for the whole of the caller's hot loop).
  template <int64_t Width = 0, class F>
  void add_block(T block_sum, F&& block_acc) {
    sum += block_sum;
    const int64_t n = Width > 0 ? Width : width;
    for (int64_t d = 0; d < n; ++d) acc[d] += T(block_acc(d));
  }

  // add() that also keeps Σw², under the same shift, in *sum_sq (the squared weights move by twice the shift).
  void add_with_square(T score, const float* value, T* sum_sq) {
    if (score == -std::numeric_limits<T>::infinity()) return;
    if (score > max) *sum_sq *= shift_factor(2 * max, 2 * score);
    add(score, value);
    const T w = std::exp(score - max);
    *sum_sq += w * w;
  }

  void merge(const SoftmaxState& other) {
    if (other.sum == 0) return;
    if (other.max > max) rescale_to(other.max);
    // exp, not shift_factor: merge_states takes states from JS, which may pair max = −inf with a nonzero sum, and
    // such a merge keeps the result it has always had.
    const T f = std::exp(other.max - max);
    sum += other.sum * f;
    for (int64_t d = 0; d < width; ++d) acc[d] += other.acc[d] * f;
  }

  bool empty() const { return !(sum > 0); }

  // The state as the engine hands it on: an empty state's max (a fixed shift, or the last rescale) means nothing,
  // and is given as −inf.
  SoftmaxState settled() const {
    SoftmaxState s = *this;
    if (empty()) s.max = -std::numeric_limits<T>::infinity();
    return s;
  }
};

// The batch form for a row whose scores are all known (the explicit weights): the shift is their maximum, so no
// rescale is needed; each score is replaced by its weight e^(s − max) (2^(s − max) when Log2: float32 log2 scores)
// and the state (width 0) holds the shift and the sum. No admissible score (all −inf, or none): the empty state, and
// the scores are left as they are.
template <class T, bool Log2>
SoftmaxState<T> exponentiate_row(T* scores, int64_t n) {
  SoftmaxState<T> st;
  for (int64_t j = 0; j < n; ++j) st.max = std::max(st.max, scores[j]);
  if (!(st.max > -std::numeric_limits<T>::infinity())) return st;
  for (int64_t j = 0; j < n; ++j)
    st.sum += scores[j] = Log2 ? std::exp2(scores[j] - st.max) : std::exp(scores[j] - st.max);
  return st;
}

// Many rows' states in their serial form (max, sum, value sums): max and sum per query and head ([query][head]),
// the value sums in acc's columns (head h in [h·width, (h+1)·width)).
// S = float is the public form (states.h); the engine keeps double max and sum between its own passes, so that
// merging loses nothing to a rounded max.
template <class S>
struct StateTable {
  S* max;
  S* sum;
  Matrix acc;
  int32_t heads;

  int64_t width() const { return acc.cols / heads; }

  // Row i, head h as a state whose value sums are copied into `scratch` (width() doubles).
  SoftmaxState<double> load(int64_t i, int32_t h, double* scratch) const {
    const int64_t w = width(), at = i * heads + h;
    const float* a = acc.row(i) + h * w;
    for (int64_t d = 0; d < w; ++d) scratch[d] = a[d];
    return {double(max[at]), double(sum[at]), scratch, w};
  }

  void save(int64_t i, int32_t h, const SoftmaxState<double>& st) const {
    const int64_t at = i * heads + h;
    max[at] = S(st.max);
    sum[at] = S(st.sum);
    float* a = acc.row(i) + h * st.width;
    for (int64_t d = 0; d < st.width; ++d) a[d] = float(st.acc[d]);
  }
};

enum class RowOutcome { Done, Error };

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
    if (s > best) {
      best = s;
      count = 0;
    }
    if (s == best) ++count;
  }
  if (count == 0) return 0;
  for (int64_t j = 0; j < hd.keys.rows; ++j)
    chosen[j] = hd.allows(i, j) && nearest_score<double>(hd.kernel, hd.queries.row(i), hd.keys.row(j), dims) == best;
  return count;
}

// What EmptyPolicy::Nearest reads: the nearest admissible keys of query i among hd's, which finalize() finds with
// nearest_keys() and marks in `chosen` (J bytes of scratch, marked on return), writing how many to *found when
// given; or, where the caller knows them already (the end keys of a 1-D grid's sample), their value sums
// (`known_sums`, width entries) and count. `weights`: the row is the J weights of weights(), 1/n on each nearest key,
// rather than the mean of their values.
struct NearestKeys {
  const Head* hd = nullptr;
  int64_t i = 0;
  uint8_t* chosen = nullptr;
  int64_t* found = nullptr;
  bool weights = false;
  const double* known_sums = nullptr;
  double known_count = 0;
};

// A weighted mean a / z as float32: every mean the core writes, exact or binned, attention or local fit, goes
// through it. The mean of finite float32 values lies within float32 range, but a carries the float32 tile sums'
// rounding (~2^-24 relative), and a local-linear fit extrapolates, so a mean can come out beyond it: such a value is
// clamped to ±FLT_MAX instead of rounding to ±inf. Infinite and NaN quotients (from infinite or NaN values) pass
// through.
inline float mean_to_float(double mean) {
  constexpr double kMax = std::numeric_limits<float>::max();
  return float(std::isfinite(mean) ? std::clamp(mean, -kMax, kMax) : mean);
}

// The row of a query with no admissible key (width outputs), by `policy`: NaN, zeros, the mean of the values of the
// nearest admissible keys (zeros when the masks allow none; `nearest` says where they are), or Error, which the
// caller turns into Status::EmptyRow. This is the one place the empty-row policy is decided: every method ends such
// a row here (a method with no state for the row calls it directly, the others through finalize()). A row of width 0
// only asks for the outcome (and, under Nearest, for the keys' marks and count).
inline RowOutcome finalize_empty_row(int64_t width, float* out, EmptyPolicy policy, const NearestKeys& nearest = {}) {
  switch (policy) {
    case EmptyPolicy::NaN:
      std::fill(out, out + width, std::numeric_limits<float>::quiet_NaN());
      return RowOutcome::Done;
    case EmptyPolicy::Zero: std::fill(out, out + width, 0.0f); return RowOutcome::Done;
    case EmptyPolicy::Error: return RowOutcome::Error;
    case EmptyPolicy::Nearest: break;
  }
  if (nearest.known_sums) {
    for (int64_t d = 0; d < width; ++d) out[d] = float(nearest.known_sums[d] / nearest.known_count);
    return RowOutcome::Done;
  }
  if (!nearest.hd) {  // no keys to look at: a caller of finalize_states, which refuses Nearest, or a row of width 0
    std::fill(out, out + width, 0.0f);
    return RowOutcome::Done;
  }
  const Head& hd = *nearest.hd;
  const int64_t n = nearest_keys(hd, nearest.i, nearest.chosen);
  if (nearest.found) *nearest.found = n;
  if (nearest.weights) {
    for (int64_t j = 0; j < width; ++j) out[j] = nearest.chosen[j] ? float(1.0 / double(n)) : 0.0f;
    return RowOutcome::Done;
  }
  for (int64_t d = 0; d < width; ++d) {
    double a = 0;
    for (int64_t j = 0; j < hd.keys.rows; ++j)
      if (nearest.chosen[j]) a += hd.values.row(j)[d];
    out[d] = n ? float(a / double(n)) : 0.0f;
  }
  return RowOutcome::Done;
}

// Writes the row's result a / z into out (st.width floats); an empty row (z = 0) by finalize_empty_row.
template <class T>
RowOutcome finalize(const SoftmaxState<T>& st, float* out, EmptyPolicy policy, const NearestKeys& nearest = {}) {
  if (st.empty()) return finalize_empty_row(st.width, out, policy, nearest);
  for (int64_t d = 0; d < st.width; ++d) out[d] = mean_to_float(double(st.acc[d]) / double(st.sum));
  return RowOutcome::Done;
}

}  // namespace ka
