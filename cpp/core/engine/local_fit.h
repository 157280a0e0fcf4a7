// Local polynomial regression as a linear smoother: f(q) = Σ_j ℓ_j(q) y_j, with what its uncertainty needs, in one
// streaming pass over the keys (never I×J). Degree 0 is Nadaraya–Watson; degree 1 (local-linear) is the intercept
// of the weighted least-squares fit of y on [1, (x − q)/h] around each query (Fan & Gijbels 1996, §3.1); degree 2
// (local-quadratic, R's loess default) adds the squares and products of the offsets to the design.
#pragma once
#include <cstdint>

#include "base/rare.h"
#include "engine/problem.h"

namespace ka {

// The local polynomial's degree, as R's loess and locpoly count it: 0, 1, 2.
enum class Estimator : int32_t { NadarayaWatson, LocalLinear, LocalQuadratic };

inline bool known_estimator(Estimator e) {
  return e == Estimator::NadarayaWatson || e == Estimator::LocalLinear || e == Estimator::LocalQuadratic;
}
inline int degree_of(Estimator e) { return e == Estimator::LocalQuadratic ? 2 : e == Estimator::LocalLinear ? 1 : 0; }

// The number p of columns of the local design z of a polynomial of `degree`, the size of its moments (MomentLayout,
// shifted_sums.h): 1 for degree 0 (z = [1]), 1 + dims for degree 1 (z = [1, u], u = (x − q)/h), and 1 + dims +
// dims(dims + 1)/2 for degree 2 (z = [1, u, u_a·u_b for a <= b]: 3 in 1-D, 6 in 2-D).
inline int64_t design_columns_of_degree(int degree, int64_t dims) {
  return degree == 0 ? 1 : degree == 1 ? 1 + dims : 1 + dims + dims * (dims + 1) / 2;
}
inline int64_t design_columns(Estimator e, int64_t dims) { return design_columns_of_degree(degree_of(e), dims); }

// u_d = (k_d − q_d)/h_d in double, the offsets of key k from query q in bandwidths (design_row's input).
template <class H>
inline void offsets(const float* q, const float* k, const H* h, int64_t dims, double* u) {
  for (int64_t d = 0; d < dims; ++d) u[d] = (double(k[d]) - double(q[d])) / double(h[d]);
}

// The degree whose design has p columns in `dims` dimensions (design_columns is one-to-one for dims >= 1).
inline int design_degree(int64_t p, int64_t dims) { return p == 1 ? 0 : p == 1 + dims ? 1 : 2; }

// z of one key from its offsets u_d = (x_d − q_d)/h_d (dims of them), for a polynomial of `degree`: z₀ = 1, then
// u₁ … u_M, then (degree 2) u_a·u_b for a <= b in row order (in 2-D: u₁², u₁u₂, u₂²). The one place the order of
// the design's columns is decided; the slopes are always z₁ … z_M. u may be z + 1 (the products read only u).
template <class T>
inline void design_row(int degree, const T* u, int64_t dims, T* z) {
  z[0] = T(1);
  if (degree == 0) return;
  for (int64_t d = 0; d < dims; ++d) z[1 + d] = u[d];
  if (degree == 1) return;
  int64_t k = 1 + dims;
  for (int64_t a = 0; a < dims; ++a)
    for (int64_t b = a; b < dims; ++b) z[k++] = u[a] * u[b];
}

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

// The guard of local-linear and local-quadratic against a singular local design (too few distinct keys in reach:
// one for local-linear, two for local-quadratic in 1-D; keys on a line in 2-D; queries far outside the data): the
// moment matrix Σ w z zᵀ is factorised by a modified Cholesky (Gill & Murray 1974) in which each pivot after the
// intercept's (slopes, then squares and products, in design_row's order) is raised to at least kPivotFloor times its
// diagonal entry. A well-spread design is untouched; as the spread along a column vanishes, its coefficient is pulled
// continuously to 0, i.e. the estimate toward the polynomial without that column (local-quadratic toward
// local-linear, local-linear toward Nadaraya–Watson); and float32 rounding of the moments is amplified at most
// 1/kPivotFloor times. A column with no spread at all (zero diagonal) is dropped from the fit.
constexpr double kPivotFloor = 1e-2;
// Where the guard acts, gᵀ B g (Σℓ²) is a difference of large float32-rounded terms and can come out zero or negative:
// it is then replaced by the Nadaraya–Watson value Σw² / (Σw)², the variance of the constant fit the guard pulls the
// estimate toward, so a standard error is never zero or NaN.

// Float32 SIMD scores and tile sums accumulated in double; rows whose float32 scores overflow or exceed
// kFloatScoreLimit are recomputed in double. p.threads splits the queries; outputs do not depend on it.
Result local_fit(const Fit& f, const FitOut& out);

// Every observation weight finite and >= 0 (none: Ok), as local_fit requires; else BadArgument.
Status check_observation_weights(const Fit& f);

}  // namespace ka
