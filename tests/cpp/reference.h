// The independent oracle: float64 naive loops straight from the formulas, two passes (global max, then weights).
// No SIMD, no tiling, no online softmax, and kernels written here from their definitions, not taken from the core.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "engine/local_fit.h"
#include "engine/problem.h"

namespace ka::reference {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The intercept of a 2-D local-linear fit, gᵀt with g = A⁻¹e₁, A = Σ w·z·zᵀ and t = Σ w·z·y for z = (1, u₁, u₂), by
// Cholesky with the engine's guard written out: each later pivot at least 1 % of its diagonal.
inline double guarded_planar_intercept(const double (&A)[3][3], const double (&t)[3]) {
  double L[3][3] = {};
  for (int c = 0; c < 3; ++c) {
    double pivot = A[c][c];
    for (int k = 0; k < c; ++k) pivot -= L[c][k] * L[c][k];
    if (c > 0) pivot = std::max(pivot, 1e-2 * A[c][c]);
    L[c][c] = std::sqrt(pivot);
    for (int r = c + 1; r < 3; ++r) {
      double v = A[r][c];
      for (int k = 0; k < c; ++k) v -= L[r][k] * L[c][k];
      L[r][c] = v / L[c][c];
    }
  }
  double g[3];
  for (int r = 0; r < 3; ++r) {  // L y = e₁, then Lᵀ g = y
    double v = r == 0 ? 1.0 : 0.0;
    for (int k = 0; k < r; ++k) v -= L[r][k] * g[k];
    g[r] = v / L[r][r];
  }
  for (int r = 2; r >= 0; --r) {
    double v = g[r];
    for (int k = r + 1; k < 3; ++k) v -= L[k][r] * g[k];
    g[r] = v / L[r][r];
  }
  return g[0] * t[0] + g[1] * t[1] + g[2] * t[2];
}

// Returns log w for exponential-family kernels, and log of the product weight (−inf outside the support) otherwise.
inline double log_weight(const Problem& p, int64_t head, int64_t i, int64_t j) {
  const int64_t m = p.queries.cols / p.heads, c0 = head * m;
  const float* q = p.queries.row(i) + c0;
  const float* k = p.keys.row(j) + c0;
  const float* h = p.kernel.bandwidth ? p.kernel.bandwidth + c0 : nullptr;
  double dot = 0, sq = 0, l1 = 0, prod = 1;
  for (int64_t d = 0; d < m; ++d) {
    dot += double(q[d]) * double(k[d]);
    if (!h) continue;
    const double u = (double(q[d]) - double(k[d])) / double(h[d]);
    sq += u * u;
    l1 += std::fabs(u);
    switch (p.kernel.kind) {
      case KernelKind::Epanechnikov: prod *= std::fabs(u) < 1 ? 1 - u * u : 0; break;
      case KernelKind::Tricube: prod *= std::fabs(u) < 1 ? std::pow(1 - std::pow(std::fabs(u), 3), 3) : 0; break;
      case KernelKind::Uniform: prod *= std::fabs(u) <= 1 ? 1 : 0; break;
      default: break;
    }
  }
  switch (p.kernel.kind) {
    case KernelKind::Softmax: return p.kernel.scale * dot;
    case KernelKind::Gaussian: return -0.5 * sq;
    case KernelKind::Laplacian: return -l1;
    case KernelKind::Cauchy: return -std::log(1 + sq);
    default: return prod > 0 ? std::log(prod) : -kInf;
  }
}

// Normalised weights of query i (head h) over all J keys; an empty vector when no key is admissible.
inline std::vector<double> row_weights(const Problem& p, int64_t head, int64_t i) {
  const int64_t J = p.keys.rows;
  std::vector<double> w(size_t(J), -kInf);
  double max = -kInf;
  for (int64_t j = 0; j < J; ++j) {
    if (!p.masks.allows(i, j, J)) continue;
    w[size_t(j)] = log_weight(p, head, i, j);
    max = std::max(max, w[size_t(j)]);
  }
  if (max == -kInf) return {};
  double sum = 0;
  for (auto& x : w) sum += x = std::exp(x - max);
  for (auto& x : w) x /= sum;
  return w;
}

// The attention output I × D, with empty rows as NaN (EmptyPolicy::NaN).
inline std::vector<double> attention(const Problem& p) {
  const int64_t I = p.queries.rows, J = p.keys.rows, D = p.values.cols, dh = D / p.heads;
  std::vector<double> out(size_t(I * D), std::numeric_limits<double>::quiet_NaN());
  for (int64_t h = 0; h < p.heads; ++h)
    for (int64_t i = 0; i < I; ++i) {
      const auto w = row_weights(p, h, i);
      if (w.empty()) continue;
      for (int64_t d = h * dh; d < (h + 1) * dh; ++d) {
        double a = 0;
        for (int64_t j = 0; j < J; ++j) a += w[size_t(j)] * double(p.values.row(j)[d]);
        out[size_t(i * D + d)] = a;
      }
    }
  return out;
}

// Local polynomial regression at query i, from the weighted least-squares definition: the normal equations
// XᵀWX β = XᵀW y with X = [1, x_j − q_i] (unscaled, degree 1), [1, x_j − q_i, (x_ja − q_ia)(x_jb − q_ib) for a <= b]
// (degree 2) or [1] (degree 0), with the documented guard of local_fit.h (elimination pivots after the intercept's
// raised to kPivotFloor times their diagonal; a column without spread dropped), solved by Gauss–Jordan elimination
// without row exchanges. `ell` is the equivalent kernel ℓ_j(q_i)
// (f(q_i) = Σ_j ℓ_j y_j), empty when no key has positive weight; `conditioning` is the smallest ratio of a pivot
// to its diagonal entry before the guard (near 0 for a nearly singular local design). `omega` may be empty.
struct LocalWeights {
  std::vector<double> ell;
  double conditioning = 1;
};

inline LocalWeights local_weights(const Problem& p, int64_t i, int degree, const std::vector<float>& omega) {
  const int64_t J = p.keys.rows, M = p.queries.cols;
  const auto weight_of = [&](int64_t j) { return omega.empty() ? 1.0 : double(omega[size_t(j)]); };
  std::vector<double> w(static_cast<size_t>(J), 0.0);
  double max = -kInf;
  for (int64_t j = 0; j < J; ++j)
    if (p.masks.allows(i, j, J) && weight_of(j) > 0) max = std::max(max, log_weight(p, 0, i, j));
  LocalWeights out;
  if (max == -kInf) return out;
  double total = 0;
  for (int64_t j = 0; j < J; ++j)
    if (p.masks.allows(i, j, J) && weight_of(j) > 0)
      total += w[size_t(j)] = std::exp(log_weight(p, 0, i, j) - max) * weight_of(j);
  if (!(total > 0)) return out;
  const auto offset = [&](int64_t j, int64_t d) { return double(p.keys.row(j)[d]) - double(p.queries.row(i)[d]); };
  std::vector<std::pair<int64_t, int64_t>> products;  // degree 2's columns after the slopes: (a, b), a <= b
  if (degree == 2)
    for (int64_t a = 0; a < M; ++a)
      for (int64_t b = a; b < M; ++b) products.emplace_back(a, b);
  const auto x = [&](int64_t j, int64_t a) {
    if (a == 0) return 1.0;
    if (a <= M) return offset(j, a - 1);
    const auto [u, v] = products[size_t(a - 1 - M)];
    return offset(j, u) * offset(j, v);
  };
  const int64_t P = degree == 0 ? 1 : 1 + M + int64_t(products.size()), N = P + 1;  // augmented with e₁
  std::vector<double> A(static_cast<size_t>(P * N), 0.0), diagonal(static_cast<size_t>(P));
  for (int64_t a = 0; a < P; ++a) {
    for (int64_t b = 0; b < P; ++b)
      for (int64_t j = 0; j < J; ++j) A[size_t(a * N + b)] += w[size_t(j)] * x(j, a) * x(j, b);
    A[size_t(a * N + P)] = a == 0 ? 1.0 : 0.0;
    diagonal[size_t(a)] = A[size_t(a * N + a)];
  }
  std::vector<bool> dropped(static_cast<size_t>(P), false);
  for (int64_t c = 0; c < P; ++c) {
    double& pivot = A[size_t(c * N + c)];
    if (c > 0) {
      out.conditioning = std::min(out.conditioning, diagonal[size_t(c)] > 0 ? pivot / diagonal[size_t(c)] : 0.0);
      if (!(diagonal[size_t(c)] > 0)) {
        dropped[size_t(c)] = true;
        continue;
      }
      pivot = std::max(pivot, kPivotFloor * diagonal[size_t(c)]);
    }
    for (int64_t r = 0; r < P; ++r) {
      if (r == c || dropped[size_t(r)]) continue;
      const double f = A[size_t(r * N + c)] / pivot;
      for (int64_t k = c; k <= P; ++k) A[size_t(r * N + k)] -= f * A[size_t(c * N + k)];
    }
  }
  out.ell.assign(static_cast<size_t>(J), 0.0);
  for (int64_t j = 0; j < J; ++j) {
    double v = 0;
    for (int64_t a = 0; a < P; ++a)
      if (!dropped[size_t(a)]) v += x(j, a) * A[size_t(a * N + P)] / A[size_t(a * N + a)];
    out.ell[size_t(j)] = w[size_t(j)] * v;
  }
  return out;
}
}  // namespace ka::reference
