// The independent oracle: float64 naive loops straight from the formulas, two passes (global max, then weights).
// No SIMD, no tiling, no online softmax, and kernels written here from their definitions, not taken from the core.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "problem.h"

namespace ka::reference {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

}  // namespace ka::reference
