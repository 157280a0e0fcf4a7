// Kernel descriptions as log-scores: w(q, k) = exp(score(q, k)). Plain scalar code; the readable reference for the
// SIMD forms in kernels_simd.h. A score of -inf means "outside the kernel's support" (weight exactly zero).
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

namespace ka {

enum class KernelKind : int32_t { Softmax, Gaussian, Laplacian, Cauchy, Epanechnikov, Tricube, Uniform };

constexpr bool is_compact(KernelKind k) {
  return k == KernelKind::Epanechnikov || k == KernelKind::Tricube || k == KernelKind::Uniform;
}

// Softmax reads `scale`; every other kernel reads one bandwidth per dimension (u_d = (q_d - k_d) / h_d).
struct KernelSpec {
  KernelKind kind = KernelKind::Softmax;
  double scale = 1.0;
  const float* bandwidth = nullptr;  // `dims` entries, all > 0 and finite
};

// A compact kernel's log-weight along one dimension (−inf outside its support), with the support decided exactly as
// the SIMD path decides it (compact_step in kernels_simd.h): gap = h − |q − k| with q − k taken exactly as s + e
// (TwoSum), so a key at the edge is inside or outside whichever path computes it (u = (q − k)/h rounds: 1e30 + 4
// over 1e30 is 1). The uniform kernel's support is closed, the others' open.
template <class T>
T compact_log_factor(KernelKind kind, T q, T k, T h) {
  const T s = q - k, qv = s + k;
  const T e = (q - qv) + (qv - s - k);
  const T gap = (h - std::abs(s)) - (s < 0 ? -e : e);
  if (kind == KernelKind::Uniform ? !(gap >= 0) : !(gap > 0)) return -std::numeric_limits<T>::infinity();
  const T one_minus_a = gap / h, a = std::abs(s) / h;
  if (kind == KernelKind::Epanechnikov) return std::log(one_minus_a * (1 + a));
  if (kind == KernelKind::Tricube) return 3 * std::log(one_minus_a * (1 + a + a * a));
  return 0;
}

// log w(q, k) over `dims` dimensions, evaluated in T (double for the reference and rescue paths).
// Product kernels across dimensions become sums of logs, so no product can underflow to a false zero.
template <class T>
T log_score(const KernelSpec& kern, const float* q, const float* k, int64_t dims) {
  const T inf = std::numeric_limits<T>::infinity();
  if (kern.kind == KernelKind::Softmax) {
    T dot = 0;
    for (int64_t d = 0; d < dims; ++d) dot += T(q[d]) * T(k[d]);
    return T(kern.scale) * dot;
  }
  T acc = 0;
  for (int64_t d = 0; d < dims; ++d) {
    if (is_compact(kern.kind)) {
      const T f = compact_log_factor<T>(kern.kind, T(q[d]), T(k[d]), T(kern.bandwidth[d]));
      if (f == -inf) return -inf;
      acc += f;
      continue;
    }
    const T u = (T(q[d]) - T(k[d])) / T(kern.bandwidth[d]);
    switch (kern.kind) {
      case KernelKind::Gaussian:
      case KernelKind::Cauchy: acc += u * u; break;
      case KernelKind::Laplacian: acc += std::abs(u); break;
      default: break;
    }
  }
  switch (kern.kind) {
    case KernelKind::Gaussian: return -acc / 2;
    case KernelKind::Laplacian: return -acc;
    case KernelKind::Cauchy: return -std::log1p(acc);
    default: return acc;
  }
}

// The score whose arg-max is the "nearest" key: the kernel's own ordering without its support limit
// (squared u-distance for every distance kernel, scale * q.k for softmax). Used by EmptyPolicy::Nearest.
template <class T>
T nearest_score(const KernelSpec& kern, const float* q, const float* k, int64_t dims) {
  if (kern.kind == KernelKind::Softmax) return log_score<T>(kern, q, k, dims);
  T acc = 0;
  for (int64_t d = 0; d < dims; ++d) {
    const T u = (T(q[d]) - T(k[d])) / T(kern.bandwidth[d]);
    acc += u * u;
  }
  return -acc;
}

}  // namespace ka
