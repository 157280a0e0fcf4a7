// The small dense solve shared by the exact and the binned local fits: the first column of the inverse of the
// local moment matrix, with the guard of local_fit.h (kPivotFloor); and the textbook float64 solve of one row without
// it, which leave-one-out CV and AICc use where the guard acted.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/scratch.h"
#include "engine/key_reach.h"
#include "engine/local_fit.h"
#include "kernel/kernels.h"

namespace ka {

// The modified Cholesky factor L (lower, p × p in `l`) of the symmetric p × p matrix whose upper triangle is in `a`,
// with the guard of local_fit.h (see kPivotFloor); a dropped direction c (no spread) becomes a row and column of the
// identity. Returns whether the guard acted: some pivot was raised to the floor or dropped.
inline bool guarded_factor(const double* a, int64_t p, double* l) {
  bool guarded = false;
  for (int64_t x = 0; x < p; ++x)
    for (int64_t y = 0; y < p; ++y) l[x * p + y] = x <= y ? a[x * p + y] : a[y * p + x];
  for (int64_t c = 0; c < p; ++c) {
    double pivot = l[c * p + c];
    for (int64_t k = 0; k < c; ++k) pivot -= l[c * p + k] * l[c * p + k];
    if (c > 0 && !(pivot >= kPivotFloor * a[c * p + c])) {
      guarded = true;
      pivot = std::max(pivot, kPivotFloor * a[c * p + c]);
    }
    if (c > 0 && !(pivot > 0)) {  // no spread along c: drop it (a row and column of the identity)
      guarded = true;             // a zero diagonal passes the floor test above, but the design is singular
      for (int64_t k = 0; k < p; ++k) l[c * p + k] = l[k * p + c] = 0;
      l[c * p + c] = 1;
      continue;
    }
    l[c * p + c] = std::sqrt(pivot);
    for (int64_t r = c + 1; r < p; ++r) {
      double v = l[r * p + c];
      for (int64_t k = 0; k < c; ++k) v -= l[r * p + k] * l[c * p + k];
      l[r * p + c] = v / l[c * p + c];
    }
  }
  return guarded;
}

// g = (L Lᵀ)⁻¹ e_column from guarded_factor's L. A dropped direction c gets g_c = 0 (for column ≠ c).
inline void solve_factored(const double* l, int64_t p, int64_t column, double* g) {
  // L y = e_column, then Lᵀ g = y.
  for (int64_t r = 0; r < p; ++r) {
    double v = r == column ? 1.0 : 0.0;
    for (int64_t k = 0; k < r; ++k) v -= l[r * p + k] * g[k];
    g[r] = v / l[r * p + r];
  }
  for (int64_t r = p - 1; r >= 0; --r) {
    double v = g[r];
    for (int64_t k = r + 1; k < p; ++k) v -= l[k * p + r] * g[k];
    g[r] = v / l[r * p + r];
  }
}

// g = A⁻¹ e₁ for the symmetric p × p matrix whose upper triangle is in `a`, by the modified Cholesky of
// local_fit.h (see kPivotFloor). `l` is scratch for the lower factor. A dropped direction c (no spread) gets g_c = 0.
// Returns whether the guard acted: some pivot was raised to the floor or dropped (the result is then not A⁻¹ e₁).
inline bool first_column_of_inverse(const double* a, int64_t p, double* l, double* g) {
  if (p == 1) {  // Nadaraya–Watson: 1/a, without the factor's square root (a hot path of grid CV: one per point)
    g[0] = 1 / a[0];
    return false;
  }
  const bool guarded = guarded_factor(a, p, l);
  solve_factored(l, p, 0, g);
  return guarded;
}

// 1-D local-linear's g = A⁻¹e₁, A = [[S₀, S₁], [S₁, S₂]]: first_column_of_inverse in closed form, two divisions where
// the Cholesky takes two square roots and four (the per-query cost of a 1-D grid fit's summary at its sample), the
// same to rounding. False, nothing written, where its guard would act (the slope pivot below kPivotFloor of its
// diagonal, or not positive): the caller solves by first_column_of_inverse.
inline bool linear_first_column(const double* S, double* g) {
  const double i0 = 1 / S[0], q = S[1] * i0, pivot = S[2] - q * S[1];
  if (!(pivot >= kPivotFloor * S[2]) || !(pivot > 0)) return false;
  g[1] = -q / pivot;
  g[0] = i0 - q * g[1];
  return true;
}

// 2-D local-linear's value e₁ᵀA⁻¹t at its query, A = [[S₀, S₁, S₂], [S₁, S₃, S₄], [S₂, S₄, S₅]] (the moments
// Σw·u₁ᵃu₂ᵇ in the grid's power order: 1, u₁, u₂, u₁², u₁u₂, u₂²) and t = (Σw·y, Σw·y·u₁, Σw·y·u₂): the elimination of
// first_column_of_inverse in closed form, three divisions where the Cholesky takes three square roots and nine (the
// per-point cost of a 2-D grid's CV score), the same to rounding. False, nothing written, where its guard would act
// (a slope pivot below kPivotFloor of its diagonal, or not positive): the caller solves by first_column_of_inverse.
inline bool planar_linear_value(const double* S, const double* t, double* value) {
  const double i0 = 1 / S[0], q1 = S[1] * i0, q2 = S[2] * i0;
  const double p11 = S[3] - q1 * S[1], p12 = S[4] - q1 * S[2], p22 = S[5] - q2 * S[2];
  if (!(p11 >= kPivotFloor * S[3]) || !(p11 > 0)) return false;
  const double r = p12 / p11, pivot = p22 - r * p12;
  if (!(pivot >= kPivotFloor * S[5]) || !(pivot > 0)) return false;
  const double t1 = t[1] - q1 * t[0], t2 = t[2] - q2 * t[0];
  const double b2 = (t2 - r * t1) / pivot, b1 = (t1 - p12 * b2) / p11;
  *value = (t[0] - S[1] * b1 - S[2] * b2) * i0;
  return true;
}

// A local fit's value at its query for one value column: gᵀ t, with g = A⁻¹ e₁ (first_column_of_inverse) and t
// that column's Σw·z·y, entry x at t[x·stride]. As float32 it is written by mean_to_float (online_softmax.h), as every
// mean is.
inline double fitted_value(const double* g, const double* t, int64_t p, int64_t stride) {
  double v = 0;
  for (int64_t x = 0; x < p; ++x) v += g[x] * t[x * stride];
  return v;
}

// Below this relative slope pivot (the Schur complement over its diagonal, in bandwidth units: the squared sine of
// the angle between a slope column and the others, weighted) a local design counts as singular even in float64:
// the textbook solve there has lost more than 10 of its 16 digits and is an extrapolation from a degenerate
// neighbourhood, not a fit. Measured on co2 (monthly, with gaps), local-linear CV: where the smallest pivot ratio is
// 1e-16 to 1e-10 (h under 0.0213, a quarter of the spacing) the float64 criterion jumps between 0.2119 and 35 from
// one h to the next 0.6 % away; from 1e-10 on it is smooth (0.2133380 on a plateau from h = 0.023 to 0.026).
constexpr double kSingularDesign = 1e-10;

// Scratch for exact_local_row: p = design_columns (local_fit.h), D = p.values.cols.
struct ExactRowScratch {
  double* a;  // p × p
  double* t;  // p × D
  double* z;  // p
};

// ExactRowScratch and room for a row's D means, in one allocation (ok() false without memory).
struct ExactRowWork {
  Scratch<double> room;
  ExactRowScratch rows{};
  double* mean = nullptr;
  ExactRowWork(int64_t p, int64_t width) : room(p * p + p * width + p + width) {
    if (!room.ok()) return;
    double* at = room.get();
    rows = {at, at + p * p, at + p * p + p * width};
    mean = at + p * p + p * width + p;
  }
  bool ok() const { return room.ok(); }
};

// The textbook solve of exact_local_row from its moments: s.a (p × p, upper triangle: Σ w·z zᵀ) and s.t (p × D: Σ w·z
// yᵀ) by Cholesky without the pivot floor, the D means into `mean` and g = A⁻¹e₁ into s.z (s.a overwritten). False,
// nothing written, where a pivot after the intercept's is at most kSingularDesign times its diagonal.
inline bool textbook_solve(int64_t np, int64_t width, ExactRowScratch s, double* mean) {
  // In-place Cholesky of the upper triangle (A = UᵀU), refusing a pivot at or below kSingularDesign of its diagonal.
  for (int64_t c = 0; c < np; ++c) {
    const double diagonal = s.a[c * np + c];
    double pivot = diagonal;
    for (int64_t k = 0; k < c; ++k) pivot -= s.a[k * np + c] * s.a[k * np + c];
    if (!(pivot > (c ? kSingularDesign * diagonal : 0.0))) return false;
    const double root = std::sqrt(pivot);
    s.a[c * np + c] = root;
    for (int64_t r = c + 1; r < np; ++r) {
      double v = s.a[c * np + r];
      for (int64_t k = 0; k < c; ++k) v -= s.a[k * np + c] * s.a[k * np + r];
      s.a[c * np + r] = v / root;
    }
  }
  // g = A⁻¹ e₁: Uᵀ v = e₁, then U g = v (g in s.z); each mean is gᵀ T.
  for (int64_t r = 0; r < np; ++r) {
    double v = r == 0 ? 1.0 : 0.0;
    for (int64_t k = 0; k < r; ++k) v -= s.a[k * np + r] * s.z[k];
    s.z[r] = v / s.a[r * np + r];
  }
  for (int64_t r = np - 1; r >= 0; --r) {
    double v = s.z[r];
    for (int64_t k = r + 1; k < np; ++k) v -= s.a[r * np + k] * s.z[k];
    s.z[r] = v / s.a[r * np + r];
  }
  for (int64_t c = 0; c < width; ++c) {
    double v = 0;
    for (int64_t x = 0; x < np; ++x) v += s.z[x] * s.t[x * width + c];
    mean[c] = v;
  }
  return true;
}

// The fit of `degree` (0, 1 or 2: degree_of, local_fit.h) at query i of p (a distance kernel, every mask of p applied,
// ω the optional observation weights) as a float64 textbook loop computes it: weights exp(log K − max log K) in double,
// the moment matrix solved by Cholesky without the pivot floor. Writes D means and returns true; returns false (nothing
// written) where the design is singular: no admissible key of positive weight, or a pivot after the intercept's at most
// kSingularDesign times its diagonal (e.g. a held-out point whose only neighbour is one key, or two under
// local-quadratic in 1-D, or whose neighbours all lie on one line in 2-D). `self_weight`, when given, receives
// ℓ_i(q_i), the weight of key `own` (query i's own observation; −1: key i) in the fit. O(J · dims) per call: for the
// few rows the guard touched, not for whole fits (compiled for size); with `sorted` (p.keys sorted by their first
// coordinate, none NaN: keys_in_reach), only the keys whose weight is not exactly 0 in double, the same result.
KA_COLD inline bool exact_local_row(const Problem& p, int degree, const float* omega, int64_t i, ExactRowScratch s,
                                    double* mean, double* self_weight = nullptr, bool sorted = false,
                                    int64_t own = -1) {
  const int64_t J = p.keys.rows, dims = p.keys.cols, width = p.values.cols, np = design_columns_of_degree(degree, dims);
  const float* q = p.queries.row(i);
  double top = -std::numeric_limits<double>::infinity();
  const auto admissible = [&](int64_t j) { return p.masks.allows(i, j, J) && (!omega || omega[j] > 0); };
  // Without ω in the reach's score: ω only lowers a key's weight, so the range stays a superset of the keys that
  // weigh anything (and top is the largest log K, as the loop takes it).
  const KeyRange range = keys_in_reach(
      p.keys, p.kernel, q, sorted,
      [&](int64_t j) {
        if (admissible(j)) top = std::max(top, log_score<double>(p.kernel, q, p.keys.row(j), dims));
      },
      [&] { return top; });
  if (!(top > -std::numeric_limits<double>::infinity()) || !std::isfinite(top)) return false;
  std::fill(s.a, s.a + np * np, 0.0);
  std::fill(s.t, s.t + np * width, 0.0);
  for (int64_t j = range.first; j < range.last; ++j) {
    if (!admissible(j)) continue;
    const float* k = p.keys.row(j);
    const double w = std::exp(log_score<double>(p.kernel, q, k, dims) - top) * (omega ? double(omega[j]) : 1.0);
    if (!(w > 0)) continue;
    if (degree > 0) offsets(q, k, p.kernel.bandwidth, dims, s.z + 1);
    design_row(degree, s.z + 1, dims, s.z);
    for (int64_t x = 0; x < np; ++x) {
      for (int64_t y = x; y < np; ++y) s.a[x * np + y] += w * s.z[x] * s.z[y];
      for (int64_t c = 0; c < width; ++c) s.t[x * width + c] += w * s.z[x] * double(p.values.row(j)[c]);
    }
  }
  if (!textbook_solve(np, width, s, mean)) return false;
  if (self_weight) {  // w_ii gᵀ z_i, z_i the design row of key i
    double v = 0;
    if (own < 0) own = i;
    if (admissible(own)) {
      const float* k = p.keys.row(own);
      const double w = std::exp(log_score<double>(p.kernel, q, k, dims) - top) * (omega ? double(omega[own]) : 1.0);
      double* zi = s.a;  // the factor's block (p × p >= p entries) is free once g is solved
      if (degree > 0) offsets(q, k, p.kernel.bandwidth, dims, zi + 1);
      design_row(degree, zi + 1, dims, zi);
      for (int64_t x = 0; x < np; ++x) v += s.z[x] * zi[x];
      v *= w;
    }
    *self_weight = v;
  }
  return true;
}

}  // namespace ka
