// The softmax backward pass in float32 SIMD, FlashAttention-2 style (Dao 2023, Algorithm 2), for the rows whose
// float32 scores are accurate enough; backward.cpp picks those rows and runs every other row in double
// (backward_double.h).
#pragma once
#include <cmath>
#include <cstdint>

#include "engine/head.h"
#include "kernel/kernels_simd.h"
#include "base/status.h"
#include "base/views.h"

namespace ka {

// A row takes the float32 path when its log-sum-exp L_i is finite and |L_i| <= this, in log2 units. Every weight
// that matters has a score within ~30 of L_i (below, 2^(s − L) < 1e-9), so |s| stays below ~2^6 and its float32
// rounding (half an ulp: 2e-6 at 32) moves a weight by ~1.5e-6 relative, under the 1e-5 the gradients must meet.
// Larger logits (rare: attention logits are O(1–10)) go to the double path, as scores beyond kFloatScoreLimit do in
// the forward. Measured: scale 300 on the tests' data (logits of several hundred) needs it.
constexpr double kBackwardScoreLimit = 32.0;

inline bool backward_row_in_float(double lse) { return std::fabs(lse * kLog2e) <= kBackwardScoreLimit; }

// Per-query inputs of one head, I entries each.
struct WideRows {
  const uint8_t* on;   // 1: this path computes the row; 0: it contributes nothing here (backward_double.cpp does it)
  const float* lse2;   // log2 Σ_j w_ij
  const float* delta;  // D_i = dO_i·O_i, from the forward's float32 output
};

enum class WideOutcome { Done, Fallback, OutOfMemory };

// The scale gradient of the float32 rows, and the variance of its rounding error (a random walk over the rows'
// error bounds, calibrated on the test suite: the measured error stayed below 0.3 of its square root).
struct ScaleGradient {
  double value = 0;
  double variance = 0;
  double error() const { return std::sqrt(variance); }
};

// dθ is a sum over all I·J pairs that can cancel far below its terms (per row a covariance, and rows add with
// either sign), so the caller compares dtheta.error() with dθ and, above kScaleGradientTolerance of it, sums dθ
// in double instead (backward_double.cpp).
constexpr double kScaleGradientTolerance = 3e-5;

// Adds (+=) the rows' gradients into the per-head double accumulators of backward.cpp: dq (I × m), dk (J × m),
// dv (J × width), row-major, and dtheta (dL/d scale). dout: I × width, this head's columns.
// Fallback: a float32 score or dO·v of an admissible pair overflowed, a sum came out non-finite, the scale is too
// small for scores to carry dots, or the error of D_i (from the output's rounding) could reach 1e-5 of dQ or dK;
// the accumulators then hold partial sums and the caller redoes the head in double.
// Single-threaded; memory O(kKeyTile·(m + width) + I) floats.
WideOutcome backward_wide(const Head& hd, ConstMatrix dout, const WideRows& rows, double* dq, double* dk, double* dv,
                          ScaleGradient& dtheta);

}  // namespace ka
