// Local polynomial regression as a linear smoother: f(q) = Σ_j ℓ_j(q) y_j, with what its uncertainty needs, in one
// streaming pass over the keys (never I×J). Degree 0 is Nadaraya–Watson; degree 1 (local-linear) is the intercept
// of the weighted least-squares fit of y on [1, (x − q)/h] around each query (Fan & Gijbels 1996, §3.1).
#pragma once
#include <cstdint>

#include "base/rare.h"
#include "engine/problem.h"

namespace ka {

enum class Estimator : int32_t { NadarayaWatson, LocalLinear };

// The regression of p.values (y, J × D) on p.keys (x, J × M), evaluated at p.queries (I × M), with a distance
// kernel (not Softmax) and p.heads == 1. Every mask applies (leave-one-out gives the CV fit); p.empty decides
// empty rows. The weight of key j at query i is w_ij = ω_j K((q_i − x_j)/h), ω the optional observation weights.
struct Fit {
  Problem problem;
  Estimator estimator = Estimator::LocalLinear;
  const float* observation_weights = nullptr;  // J entries, finite and >= 0; null for all ones
  // I entries: query i's bandwidth is kernel.bandwidth times query_scale[i] (nearest-neighbour spans, neighbours.h);
  // null for the fixed bandwidth. Such fits run in double, query by query (local_rows.h).
  const double* query_scale = nullptr;
  // I entries: query i's own observation is key query_keys[i] (FitOut::self_weight), for fits at a subset of the
  // sample's points in another order (a mixed regression's groups, stats/mixed.h); null: key i (needs I == J).
  const int64_t* query_keys = nullptr;
};

// Per query i; every pointer but mean.data may be null (not computed). Empty rows (no key with w_ij > 0) get the
// policy's mean, NaN sum_sq_weights and self_weight, 0 effective keys and −inf log_denominator.
struct FitOut {
  Matrix mean;                        // I × D: f(q_i)
  double* sum_sq_weights = nullptr;   // Σ_j ℓ_j(q_i)²: Var f(q_i) = σ² times this, for homoscedastic noise
  double* self_weight = nullptr;      // ℓ_i(q_i), the smoother's diagonal (own key: i, or Fit::query_keys[i])
  double* effective_keys = nullptr;   // (Σ_j w_ij)² / Σ_j w_ij², Kish's effective sample size of the row
  double* log_denominator = nullptr;  // ln Σ_j w_ij: where it is very negative, the fit is extrapolating
  uint8_t* guarded = nullptr;         // 1 where the guard below (kPivotFloor) changed the solve, else 0
  // I × D: f(q_i) in double. When given, local_fit runs query by query in double (local_rows.h), with weights and
  // moments in double too: for criteria (CV, AICc) whose curve is flatter than the float32 pass's rounding.
  double* mean_double = nullptr;
};

// Local-linear's guard against a singular local design (one key in reach, keys on a line, queries far outside the
// data): the moment matrix Σ w z zᵀ is factorised by a modified Cholesky (Gill & Murray 1974) in which each pivot
// of the slope block is raised to at least kPivotFloor times its diagonal entry. A well-spread design is untouched;
// as the spread along a direction vanishes, the slope along it is pulled continuously to 0, i.e. the estimate
// toward Nadaraya–Watson; and float32 rounding of the moments is amplified at most 1/kPivotFloor times. A direction
// with no spread at all (zero diagonal) is dropped from the fit.
constexpr double kPivotFloor = 1e-2;
// Where the guard acts, gᵀ B g (Σℓ²) is a difference of large float32-rounded terms and can come out zero or negative:
// it is then replaced by the Nadaraya–Watson value Σw² / (Σw)², the variance of the constant fit the guard pulls the
// estimate toward, so a standard error is never zero or NaN.

// Float32 SIMD scores and tile sums accumulated in double; rows whose float32 scores overflow or exceed
// kFloatScoreLimit are recomputed in double. p.threads splits the queries; outputs do not depend on it.
Result local_fit(const Fit& f, const FitOut& out);

}  // namespace ka
