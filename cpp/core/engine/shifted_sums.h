// Sums of weights under a common running shift: the accumulator of every streaming pass of the core (KeOps'
// Max_SumShiftExpWeight reduction; Milakov & Gimelshein 2018's online normaliser), as one type.
//
// Over keys j with log-weights s_j, the sums are kept in units of e^m for a shift m >= max_j s_j (2^m where the
// scores are log2, as the float32 paths keep them):
//   sums of weights           Σ_j e^(s_j − m) x_j       (Σw, Σw·z·zᵀ, Σw·z·yᵀ),
//   sums of squared weights   Σ_j e^(2(s_j − m)) x_j    (Σw², Σw²·z·zᵀ: standard errors and effective keys).
// Max-shift identity: for any c >= m, e^(s − c) = e^(s − m)·e^(m − c), so moving the shift to c multiplies the first
// kind by f = e^(m − c) and the second by f², and sums under different shifts combine exactly. Every weight is <= 1
// under the shift, so nothing overflows, and the key of the largest score weighs 1, so Σw >= 1 once a key counted.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace ka {

// The max-shift identity's factor e^(from − to), which moves sums taken under the shift `from` to a shift
// to >= from; 0 when nothing was summed yet (from = −inf). shift_factor2 is the same in base 2, for log2 scores.
template <class T>
T shift_factor(T from, T to) {
  return from == -std::numeric_limits<T>::infinity() ? T(0) : T(std::exp(from - to));
}
template <class T>
T shift_factor2(T from, T to) {
  return from == -std::numeric_limits<T>::infinity() ? T(0) : T(std::exp2(from - to));
}

// n sums that a rescale multiplies together: of weights, or (Squared) of squared weights. S, the sums' type, may be
// other than the shift's: the wide scan keeps Σw in double and its value sums in float32, in the output row.
template <class S, bool Squared = false>
struct SumRun {
  static constexpr bool kSquared = Squared;
  S* data;
  int64_t n;
};

// The one rescale of the core: moves the sums of `runs`, taken under the shift `max`, to the shift c >= max (the
// identity above), and max to c; returns the factor f. Log2: max and c are log2 units. Each run is scaled in its own
// precision, by f (f² for squared weights) computed in T. ShiftedSums::rescale_to is this over its one block; the
// wide scan, whose state is split by precision, calls it with its runs.
template <bool Log2, class T, class... Runs>
T rescale_to(T& max, T c, const Runs&... runs) {
  const T f = Log2 ? shift_factor2(max, c) : shift_factor(max, c);
  const auto scale = [f](const auto& run) {
    const T by = std::decay_t<decltype(run)>::kSquared ? f * f : f;
    for (int64_t k = 0; k < run.n; ++k) run.data[k] *= by;
  };
  (scale(runs), ...);
  max = c;
  return f;
}

// The sums of one query (or of one set of features) under their running shift: `linear` sums of weights, then
// `squared` sums of squared weights, in a block the caller owns. Log2: the shift is in log2 units.
template <class T, bool Log2 = false>
struct ShiftedSums {
  T max = -std::numeric_limits<T>::infinity();
  T* sums = nullptr;
  int64_t linear = 0, squared = 0;

  ShiftedSums() = default;
  ShiftedSums(T* sums_, int64_t linear_, int64_t squared_ = 0) : sums(sums_), linear(linear_), squared(squared_) {}

  // No key yet: shift −inf, every sum 0.
  void clear() {
    max = -std::numeric_limits<T>::infinity();
    std::fill(sums, sums + linear + squared, T(0));
  }

  // Moves every sum to the shift c >= max. Out of line: it runs only when the maximum rises, and one copy per type
  // keeps it out of every loop that may call it (bench/ab-size.mjs: no case slower; the .wasm smaller).
  [[gnu::noinline]] void rescale_to(T c) {
    ka::rescale_to<Log2>(max, c, SumRun<T>{sums, linear}, SumRun<T, true>{sums + linear, squared});
  }
};

// Where the moments of a local fit with p design columns z (z₀ = 1) and `width` value columns sit in a block of
// ShiftedSums: the sums of weights a = Σw·z·zᵀ (p × p) and t = Σw·z·yᵀ (p × width, row x for z_x), then `extra` more
// (the derivatives' sums); then, when `squares`, the sums of squared weights b = Σw²·z·zᵀ (p × p), then
// `extra_squared` more. So a₀₀ = Σw, t's first row is Σw·y and b₀₀ = Σw². p = 1 is Nadaraya–Watson and the
// online-softmax state; local-linear has p = 1 + dims (design_columns, local_fit.h); degree 2 adds the squares and
// products of the offsets to z, and nothing here changes but p.
struct MomentLayout {
  int64_t p = 1, width = 0;
  bool squares = false;
  int64_t extra = 0, extra_squared = 0;

  int64_t t() const { return p * p; }
  int64_t extra_at() const { return p * p + p * width; }
  int64_t linear() const { return extra_at() + extra; }
  int64_t b() const { return linear(); }
  int64_t extra_squared_at() const { return b() + (squares ? p * p : 0); }
  int64_t squared() const { return (squares ? p * p : 0) + extra_squared; }
  int64_t size() const { return linear() + squared(); }
};

// One query's moments under their running shift: ShiftedSums laid out by a MomentLayout.
template <class T, bool Log2 = false>
struct MomentSums : ShiftedSums<T, Log2> {
  MomentLayout layout;

  MomentSums() = default;
  MomentSums(T* block, const MomentLayout& m) : ShiftedSums<T, Log2>(block, m.linear(), m.squared()), layout(m) {}

  T* a() const { return this->sums; }
  T* t() const { return this->sums + layout.t(); }
  T* extra() const { return this->sums + layout.extra_at(); }
  T* b() const { return this->sums + layout.b(); }
  T* extra_squared() const { return this->sums + layout.extra_squared_at(); }
};

}  // namespace ka
