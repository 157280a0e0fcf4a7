// What each kernel supports, in one table: the bindings hand it to JS (web/src/engine.js), which validates options
// against it instead of keeping its own lists. A new kernel adds one row here.
#pragma once
#include <cmath>
#include <cstdint>

#include "kernel/kernels.h"

namespace ka {

struct KernelTraits {
  KernelKind kind;
  const char* name;      // the JS name (options.kernel)
  bool distance;         // reads one bandwidth per dimension (every kernel but softmax, which reads a scale)
  bool compact;          // weight exactly zero beyond |u_d| = 1 (is_compact)
  bool heavy_tail;       // weight decays polynomially: no finite reach for a grid's taps, and a sparse certificate
                         // at a practical tolerance visits nearly every key
  bool gradient;         // differentiable in queries, keys and bandwidth (attention_gradients, select_cv_gradient)
  bool grid;             // binned convolution (grid.h): a distance kernel with a finite reach
  bool random_features;  // random_features.h: softmax, gaussian, and the Fourier maps of laplacian and cauchy
  bool nystrom;          // nystrom.h: the same four
  bool sparse;           // certified sparsity (sparse.h): every distance kernel
};

inline constexpr KernelTraits kKernelTraits[] = {
    // kind                   name            dist   compact heavy  grad   grid   rf     nys    sparse
    {KernelKind::Softmax, "softmax", false, false, false, true, false, true, true, false},
    {KernelKind::Gaussian, "gaussian", true, false, false, true, true, true, true, true},
    {KernelKind::Laplacian, "laplacian", true, false, false, true, true, true, true, true},
    {KernelKind::Cauchy, "cauchy", true, false, true, true, false, true, true, true},
    {KernelKind::Epanechnikov, "epanechnikov", true, true, false, true, true, false, false, true},
    {KernelKind::Tricube, "tricube", true, true, false, true, true, false, false, true},
    {KernelKind::Uniform, "uniform", true, true, false, false, true, false, false, true},
};
inline constexpr int32_t kKernelCount = int32_t(sizeof(kKernelTraits) / sizeof(kKernelTraits[0]));

constexpr const KernelTraits& kernel_traits(KernelKind k) { return kKernelTraits[int32_t(k)]; }

// The table is indexed by KernelKind and agrees with is_compact.
constexpr bool traits_in_order() {
  for (int32_t i = 0; i < kKernelCount; ++i) {
    const KernelTraits& t = kKernelTraits[i];
    if (int32_t(t.kind) != i || t.compact != is_compact(t.kind)) return false;
  }
  return true;
}
static_assert(traits_in_order(), "kKernelTraits must list every KernelKind in enum order");

// The distance, in bandwidths, at which a kernel's weight falls to `tolerance` (in (0, 1)) of its peak: the radius of
// the sparse method's cells before widening (sparse.cpp), and what method 'auto' estimates the share of keys in reach
// with. 1 for compact kernels; not meaningful for softmax.
inline double sparse_reach(KernelKind k, double tolerance) {
  switch (k) {
    case KernelKind::Gaussian: return std::sqrt(-2 * std::log(tolerance));
    case KernelKind::Laplacian: return -std::log(tolerance);
    case KernelKind::Cauchy: return std::sqrt(1 / tolerance - 1);
    default: return 1;
  }
}

}  // namespace ka
