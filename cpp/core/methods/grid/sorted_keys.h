// A grid model's sample sorted by its first coordinate (GridModel keeps it, made by the first call that needs it): the
// rows its grid does not serve read their keys from it in O(log n + k) for the k keys in their reach, instead of
// passing over the sample at every call.
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_fit.h"
#include "methods/grid/key_bands.h"

namespace ka {

class SortedKeys {
 public:
  // Sorts f's keys, values and observation weights by the first coordinate (ties in sample order) once; later calls
  // return at once. BadArgument when a first coordinate is NaN (the caller then runs exactly, as it does for such
  // samples anyway).
  Status prepare(const Fit& f);
  bool ready() const { return ready_; }

  // f (the same sample) with its keys, values and weights in sorted order; its queries and the rest are f's.
  Fit sorted(const Fit& f) const;
  int64_t rows() const { return n_; }
  const float* x() const { return x_.get(); }  // rows × dims
  const float* y() const { return y_.get(); }  // rows × width
  const float* w() const { return w_.get(); }  // rows, or null without observation weights
  double y_lo() const { return y_lo_; }        // the smallest and largest value over every column
  double y_hi() const { return y_hi_; }
  const KeyBands& bands() const { return bands_; }
  double omega_max() const {
    return omega_max_;
  }  // the largest observation weight (1 without)  // 2-D: the keys in bands of x₂ (key_bands.h)

  // The keys [first, last) that can weigh in the exact fit of query q (f's kernel and bandwidths): every key whose
  // first coordinate lies within R of q's, R where that coordinate's term alone falls below the score of a key near q
  // (the nearer neighbour in sorted order) by 25 + log₂ n in log2 units (local_fit's skip, so the keys left out weigh
  // together less than 2^−25 of the largest weight); and, where the empty policy asks for the nearest key, the keys
  // next to q's place. Nearest in 2-D: every key. Adds last − first to keys_read.
  void window(const Fit& f, const float* q, int64_t* first, int64_t* last);

  // The exact fit (local_fit) of each of `count` rows of f's queries over the keys in its window, written in its own
  // place in `out` (as exact_rows, grid/exact_rows.h): the full exact fit to float32 rounding, at O(log n + k) a row.
  // In 2-D the keys come from bands of x₂ (key_bands.h): those within the row's reach along both axes.
  // f must have no mask.
  Result exact_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& out);

  // The same exact fits of a few rows spread through a call (a grid's error probes) in one local_fit over the whole
  // sorted sample, the rows in x₁ order, so that the engine's tiles score several rows per key they read and each
  // tile reads the keys in its reach by bisection: one row at a time pays about a tile's work per key (16 ns natively),
  // which at a wide bandwidth over 10⁶ points made 64 probes cost 0.1-0.8 s. 1-D, f without a mask; keys_read counts
  // each row's window as exact_rows does.
  Result exact_rows_together(const Fit& f, const int64_t* rows, int64_t count, const FitOut& out);

  // Keys read by rows through this object (windows and the far rows' end keys), for tests and benchmarks; and how
  // many times the sample was sorted (at most 1).
  int64_t keys_read = 0;
  int64_t sorts = 0;

 private:
  // The log-weight below a key near q from which keys are left out (local_fit's skip: 25 + log₂ n, in natural log).
  double skip() const;
  // Row i's exact fit over the keys of its window, written in its place in out.
  Result window_row(const Fit& f, int64_t i, const FitOut& out);
  // Whether f's exact rows read their keys from the bands of x₂ (2-D product kernels; not the Nearest policy, whose
  // rows read every key, nor Error, whose first empty row in the rows' order is reported): banded_rows, in
  // banded_rows.cpp.
  bool banded(const Fit& f) const;
  Result banded_rows(const Fit& f, const int64_t* rows, int64_t count, const FitOut& out);

  bool ready_ = false;
  int64_t n_ = 0, dims_ = 0, width_ = 0;
  Scratch<float> x_, y_, w_;
  double y_lo_ = 0, y_hi_ = 0, omega_max_ = 1;
  KeyBands bands_;               // 2-D only
  Scratch<float> gx_, gy_, gw_;  // a group of banded rows' keys, values and weights, room for held_ keys
  int64_t held_ = 0;
};

}  // namespace ka
