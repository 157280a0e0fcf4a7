// Batch forms of the log-scores in kernels.h, for lanes of keys: init, one step per dimension, finish.
// They return log2 of the weight (the float paths exponentiate with exp2): log2(e) is folded into the bandwidth
// factors and the softmax scale, so base 2 costs nothing. tests/cpp/kernels_test.cpp checks them against
// log_score<double> / ln 2.
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernel/kernels.h"
#include "base/simd.h"

namespace ka {

constexpr double kLog2e = 1.4426950408889634;
// log₂ e / 2: the Gaussian's exponent u²/2 in log₂ units (its weight is exp2_neg(u²·kHalfLog2e)), for loops that
// square their own offsets (the 1-D band, the 2-D sweep).
constexpr float kHalfLog2e = float(kLog2e / 2);

template <KernelKind K>
struct BatchScore {
  using B = simd::Batch;
  // -0, the exact identity of addition, so the compiler drops the first step's add (it may not drop one of +0).
  static B init() { return B(-0.0f); }

  // Compact kernels read h_d itself (see compact_step); the others multiply by a factor that also carries log2(e):
  // the Gaussian's score is then -Σ t², the Laplacian's -Σ |t|, with no constant in the hot loop.
  static constexpr bool kCompact = is_compact(K);
  static float dimension_factor(float h) {
    if constexpr (kCompact) return h;
    if constexpr (K == KernelKind::Gaussian) return float(std::sqrt(kLog2e / 2) / double(h));
    if constexpr (K == KernelKind::Laplacian) return float(kLog2e / double(h));
    return 1.0f / h;
  }
  // The softmax scale in log2 units.
  static float scale_factor(double scale) { return float(scale * kLog2e); }

  // q: the query's coordinate broadcast; k: this dimension of `kLanes` keys; f: dimension_factor(h_d) broadcast.
  static B step(B acc, B q, B k, B f) {
    if constexpr (K == KernelKind::Softmax) return xsimd::fma(q, k, acc);
    if constexpr (kCompact) return compact_step(acc, q, k, f);
    if constexpr (!kCompact && K != KernelKind::Softmax) {
      const B t = (q - k) * f;
      if constexpr (K == KernelKind::Laplacian) return acc + xsimd::abs(t);
      return xsimd::fma(t, t, acc);  // Gaussian, Cauchy
    }
  }

  // Near the edge of the support a compact kernel's log-weight is steep in |u|, so 1 - |u| must keep full relative
  // accuracy: q - k is taken exactly as s + e (Knuth's TwoSum), and h - |q - k| = (h - |s|) - sign(s)·e, where
  // h - |s| is exact near the edge (Sterbenz). One rounding remains, in the division by h.
  static B compact_step(B acc, B q, B k, B h) {
    const B s = q - k;
    const B qv = s + k;
    const B e = (q - qv) + (qv - s - k);
    const B gap = (h - xsimd::abs(s)) - xsimd::select(s < B(0.0f), -e, e);  // h - |q - k|
    const B minus_inf(-std::numeric_limits<float>::infinity());
    if constexpr (K == KernelKind::Uniform) return xsimd::select(gap >= B(0.0f), acc, minus_inf);
    const B one_minus_a = gap / h;
    const B a = xsimd::abs(s) / h;
    // Weights (1 - a)(1 + a) and ((1 - a)(1 + a + a²))³; log2(0) = -inf marks "outside the support".
    if constexpr (K == KernelKind::Epanechnikov)
      return xsimd::select(gap > B(0.0f), acc + simd::log2(one_minus_a * (B(1.0f) + a)), minus_inf);
    return xsimd::select(gap > B(0.0f),
                         xsimd::fma(B(3.0f), simd::log2(one_minus_a * xsimd::fma(a, a + B(1.0f), B(1.0f))), acc),
                         minus_inf);
  }

  // scale · dot, but NaN where the float32 dot overflowed (±inf): a tiny or zero scale would otherwise turn it into
  // a false -inf (weight 0) or a finite score, where the true score scale · q·k is finite. NaN makes the row be
  // redone in double (overflowed() in key_tile.h). acc - acc is 0 for a finite dot, so the product is unchanged.
  static B overflow_to_nan(B dot, B scale) { return xsimd::fma(dot, scale, dot - dot); }

  static B finish(B acc, B scale) {
    if constexpr (K == KernelKind::Softmax) return overflow_to_nan(acc, scale);
    if constexpr (kCompact) return acc;
    if constexpr (kHasCost) return -cost(acc);
  }

  // The kernels that are neither softmax nor compact also have a cost form, -finish(acc) = -log2 w >= 0, which
  // simd::exp2_neg takes without a negation on the dependency chain.
  static constexpr bool kHasCost = !kCompact && K != KernelKind::Softmax;
  static B cost(B acc) {
    if constexpr (K == KernelKind::Cauchy) return simd::log2(acc + B(1.0f));
    return acc;  // Gaussian, Laplacian
  }
};

// Calls fn(std::integral_constant<KernelKind, K>{}) for the runtime kind, so each kernel gets its own hot loop.
template <class Fn>
auto with_kernel(KernelKind kind, Fn&& fn) {
  using K = KernelKind;
  switch (kind) {
    case K::Gaussian: return fn(std::integral_constant<K, K::Gaussian>{});
    case K::Laplacian: return fn(std::integral_constant<K, K::Laplacian>{});
    case K::Cauchy: return fn(std::integral_constant<K, K::Cauchy>{});
    case K::Epanechnikov: return fn(std::integral_constant<K, K::Epanechnikov>{});
    case K::Tricube: return fn(std::integral_constant<K, K::Tricube>{});
    case K::Uniform: return fn(std::integral_constant<K, K::Uniform>{});
    case K::Softmax: break;
  }
  return fn(std::integral_constant<K, K::Softmax>{});
}

}  // namespace ka
