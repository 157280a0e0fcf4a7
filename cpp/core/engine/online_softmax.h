// The online-softmax state of one query (Milakov & Gimelshein 2018; KeOps' Max_SumShiftExpWeight reduction).
//
// Over a set of keys with scores s_j and values v_j the state is (m, z, a):
//   m = max_j s_j,   z = sum_j exp(s_j - m),   a = sum_j exp(s_j - m) v_j,   and the result is a / z.
// These are the shifted sums of shifted_sums.h for the local design z = [1]: the moments of Nadaraya–Watson (p = 1 in
// MomentLayout), so two states over disjoint key sets merge exactly by the max-shift identity, and z >= 1 whenever
// any key is admissible: no 0/0.
//
// This file is also the one place that turns a state into its output row, finalize(), and so the one place that
// decides what an empty row (no admissible key, z = 0) returns.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "engine/head.h"
#include "engine/shifted_sums.h"

namespace ka {

// The state's sums sit in a block of 1 + width entries (2 + width with `squares`), owned by the caller: z = Σw
// (MomentSums' a), the value sums a (its t), then Σw² (its b) when asked for. Log2: the shift is in log2 units (the
// narrow scan's running state); every state the engine hands on is in natural units.
template <class T, bool Log2 = false>
struct SoftmaxState : MomentSums<T, Log2> {
  using MomentSums<T, Log2>::max;
  int64_t width = 0;

  SoftmaxState() = default;
  // A state over `block`, whose contents are left as they are (reset() clears them).
  SoftmaxState(T* block, int64_t width_, bool squares = false)
      : MomentSums<T, Log2>(block, MomentLayout{1, width_, squares}), width(width_) {}

  // Through the layout, whose p (= 1) is read at run time: the compiler then cannot prove z and the value sums
  // adjacent, and does not pair a flush's additions into a two-lane double vector (with sums + 1, the sparse
  // method's short runs made bench/ab-size.mjs's 2-D Gaussian case 1.07–1.10× as slow in WebAssembly; now 1.01×).
  T& sum() const { return this->a()[0]; }
  T* acc() const { return this->t(); }
  T& sum_sq() const { return this->b()[0]; }  // with squares only
  bool squares() const { return this->layout.squares; }

  void reset() { this->clear(); }

  // Adds one key, its score in natural logs. A score of -inf (outside the support) contributes nothing.
  void add(T score, const float* value) {
    static_assert(!Log2, "add() takes natural-log scores");
    if (score == -std::numeric_limits<T>::infinity()) return;
    if (score > max) this->rescale_to(score);
    const T w = std::exp(score - max);
    sum() += w;
    T* a = acc();
    for (int64_t d = 0; d < width; ++d) a[d] += w * T(value[d]);
    if (squares()) sum_sq() += w * w;
  }

  // The flush of a SIMD pass: a block of keys whose weights were taken under this state's shift (a fixed shift, or
  // one rescale_to() moved the state to first), z += block_sum, a_d += block_acc(d) for d < width. `block_acc` is a
  // function of d, so that SIMD lane sums can be reduced straight into the state. Width > 0 says that width is that
  // constant: the loop then unrolls, and a caller's registers indexed by d stay registers (a run-time index would
  // put them in memory for the whole of the caller's hot loop).
  template <int64_t Width = 0, class F>
  void add_block(T block_sum, F&& block_acc) {
    sum() += block_sum;
    const int64_t n = Width > 0 ? Width : width;
    T* a = acc();
    for (int64_t d = 0; d < n; ++d) a[d] += T(block_acc(d));
  }

  // Adds another state over other keys (states without squares).
  void merge(const SoftmaxState& other) {
    if (other.sum() == 0) return;
    if (other.max > max) this->rescale_to(other.max);
    // exp, not shift_factor: merge_states takes states from JS, which may pair max = −inf with a nonzero sum, and
    // such a merge keeps the result it has always had.
    const T f = std::exp(other.max - max);
    sum() += other.sum() * f;
    for (int64_t d = 0; d < width; ++d) acc()[d] += other.acc()[d] * f;
  }

  bool empty() const { return !(sum() > 0); }

  // The state as the engine hands it on: an empty state's max (a fixed shift, or the last rescale) means nothing,
  // and is given as −inf.
  SoftmaxState settled() const {
    SoftmaxState s = *this;
    if (empty()) s.max = -std::numeric_limits<T>::infinity();
    return s;
  }
};

// The batch form for a row whose scores are all known (the explicit weights), into a state of width 0: the shift is
// their maximum, so no rescale is needed; each score is replaced by its weight e^(s − max) (2^(s − max) when Log2:
// float32 log2 scores) and the state holds the shift and the sum. No admissible score (all −inf, or none): the empty
// state, and the scores are left as they are.
template <class T, bool Log2>
void exponentiate_row(T* scores, int64_t n, SoftmaxState<T, Log2>& st) {
  st.reset();
  for (int64_t j = 0; j < n; ++j) st.max = std::max(st.max, scores[j]);
  if (!(st.max > -std::numeric_limits<T>::infinity())) return;
  for (int64_t j = 0; j < n; ++j)
    st.sum() += scores[j] = Log2 ? std::exp2(scores[j] - st.max) : std::exp(scores[j] - st.max);
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

  // Row i, head h as a state over `scratch` (1 + width() doubles).
  SoftmaxState<double> load(int64_t i, int32_t h, double* scratch) const {
    const int64_t w = width(), at = i * heads + h;
    SoftmaxState<double> st(scratch, w);
    st.max = double(max[at]);
    st.sum() = double(sum[at]);
    const float* a = acc.row(i) + h * w;
    for (int64_t d = 0; d < w; ++d) st.acc()[d] = a[d];
    return st;
  }

  void save(int64_t i, int32_t h, const SoftmaxState<double>& st) const {
    const int64_t at = i * heads + h;
    max[at] = S(st.max);
    sum[at] = S(st.sum());
    float* a = acc.row(i) + h * st.width;
    for (int64_t d = 0; d < st.width; ++d) a[d] = float(st.acc()[d]);
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

// A weighted mean a / z as float32: every mean the core writes, exact, binned or approximated, attention or
// local fit, goes through it. The mean of finite float32 values lies within float32 range, but a carries the float32
// tile sums' rounding (~2^-24 relative), and a local-linear fit extrapolates, so a mean can come out beyond it: such a
// value is clamped to ±FLT_MAX instead of rounding to ±inf. Infinite and NaN quotients (from infinite or NaN values)
// pass through.
inline float mean_to_float(double mean) {
  constexpr double kMax = std::numeric_limits<float>::max();
  return float(std::isfinite(mean) ? std::clamp(mean, -kMax, kMax) : mean);
}

// The row of a query with no admissible key (width outputs), by `policy`: NaN, zeros, the mean of the values of the
// nearest admissible keys (zeros when the masks allow none; `nearest` says where they are), or Error, which the
// caller turns into Status::EmptyRow. This is the one place the empty-row policy is decided: every method ends such
// a row here (a method with no state for the row calls it directly, the others through finalize()). A row of width 0
// only asks for the outcome (and, under Nearest, for the keys' marks and count). Out of line: empty rows are rare,
// and one copy serves every caller.
[[gnu::noinline]] inline RowOutcome finalize_empty_row(int64_t width, float* out, EmptyPolicy policy,
                                                       const NearestKeys& nearest = {}) {
  switch (policy) {
    case EmptyPolicy::NaN:
      std::fill(out, out + width, std::numeric_limits<float>::quiet_NaN());
      return RowOutcome::Done;
    case EmptyPolicy::Zero: std::fill(out, out + width, 0.0f); return RowOutcome::Done;
    case EmptyPolicy::Error: return RowOutcome::Error;
    case EmptyPolicy::Nearest: break;
  }
  if (nearest.known_sums) {
    for (int64_t d = 0; d < width; ++d) out[d] = mean_to_float(nearest.known_sums[d] / nearest.known_count);
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
    out[d] = n ? mean_to_float(a / double(n)) : 0.0f;
  }
  return RowOutcome::Done;
}

// Writes the row's result a / z into out (st.width floats); an empty row (z = 0) by finalize_empty_row.
template <class T>
RowOutcome finalize(const SoftmaxState<T>& st, float* out, EmptyPolicy policy, const NearestKeys& nearest = {}) {
  if (st.empty()) return finalize_empty_row(st.width, out, policy, nearest);
  for (int64_t d = 0; d < st.width; ++d) out[d] = mean_to_float(double(st.acc()[d]) / double(st.sum()));
  return RowOutcome::Done;
}

}  // namespace ka
