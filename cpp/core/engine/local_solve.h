// The small dense solve shared by the exact and the binned local fits: the first column of the inverse of the
// local moment matrix, with the guard of local_fit.h (kPivotFloor).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/local_fit.h"

namespace ka {

// g = A⁻¹ e₁ for the symmetric p × p matrix whose upper triangle is in `a`, by the modified Cholesky of
// local_fit.h (see kPivotFloor). `l` is scratch for the lower factor. A dropped direction c (no spread) gets g_c = 0.
inline void first_column_of_inverse(const double* a, int64_t p, double* l, double* g) {
  if (p == 1) {  // Nadaraya–Watson: 1/a, without the factor's square root (a hot path of grid CV: one per point)
    g[0] = 1 / a[0];
    return;
  }
  for (int64_t x = 0; x < p; ++x)
    for (int64_t y = 0; y < p; ++y) l[x * p + y] = x <= y ? a[x * p + y] : a[y * p + x];
  for (int64_t c = 0; c < p; ++c) {
    double pivot = l[c * p + c];
    for (int64_t k = 0; k < c; ++k) pivot -= l[c * p + k] * l[c * p + k];
    if (c > 0) pivot = std::max(pivot, kPivotFloor * a[c * p + c]);
    if (c > 0 && !(pivot > 0)) {  // no spread along c: drop it (a row and column of the identity)
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
  // L y = e₁, then Lᵀ g = y.
  for (int64_t r = 0; r < p; ++r) {
    double v = r == 0 ? 1.0 : 0.0;
    for (int64_t k = 0; k < r; ++k) v -= l[r * p + k] * g[k];
    g[r] = v / l[r * p + r];
  }
  for (int64_t r = p - 1; r >= 0; --r) {
    double v = g[r];
    for (int64_t k = r + 1; k < p; ++k) v -= l[k * p + r] * g[k];
    g[r] = v / l[r * p + r];
  }
}

}  // namespace ka
