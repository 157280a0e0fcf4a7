// Leave-one-out (and blocked) CV of a 1-D sample sorted by its coordinate, in double, over each row's window of keys
// in reach: O(log n + keys in reach) a row, where the tiled local fit pays at least a tile of keys a row.
#pragma once
#include <cstdint>

#include "engine/local_fit.h"
#include "engine/problem.h"

namespace ka {
namespace bandwidth_detail {

// Mean keys in reach a row at most this many: the window runs; above, the tiled fit (local_fit), whose float32 SIMD
// tiles cost less a key than this loop's double exponentials (measured: docs/benchmarks.md, "CV at small h").
constexpr double kWindowKeys = 48;

// The CV score of `sorted` (1-D keys = queries, sorted by x with no NaN, one head, leave-one-out and optionally the
// band masks of blocked CV, kernel bandwidth set) for `estimator` with observation weights `omega` (may be null):
// Σ ω_i (y_i − f_{−i}(x_i))² / Σ ω_i, each held-out fit the float64 textbook solve (exact_local_row) over the keys
// within float32's precision of the row's largest weight (2^-(25 + log2 n), as local_fit skips tiles), +inf where a
// held-out design is singular or empty. For the samples whose criterion runs in float32 (above
// kDoubleCriterionRows): the float64 criterion of smaller ones reads every weight a double holds. Returns false,
// computing nothing, when the mean window (64 rows spread through the sample) exceeds kWindowKeys, or the kernel
// has no finite reach.
bool window_cv(const Problem& sorted, Estimator estimator, const float* omega, double* score);

}  // namespace bandwidth_detail
}  // namespace ka
