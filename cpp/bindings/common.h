// What every binding file shares (embind.cpp says what the bindings are): the options structs that cross from JS
// as embind value objects (registered once, in embind.cpp), heap offsets as pointers, and the core's Problem and Fit
// rebuilt from them.
#pragma once
#include <cstdint>

#include "engine/local_fit.h"
#include "engine/problem.h"
#include "stats/categories.h"

namespace ka::bindings {

// Options as plain numbers; pointers are byte offsets into the wasm heap, 0 for "absent".
struct CallOptions {
  KernelKind kernel = KernelKind::Softmax;
  double scale = 1.0;
  uintptr_t bandwidth = 0;  // float32 × M
  int32_t heads = 1;
  bool causal = false;
  bool leaveOneOut = false;
  uintptr_t keyPadding = 0;   // uint8 × J
  uintptr_t generalMask = 0;  // uint8 × I·J
  uintptr_t queryGroups = 0;  // int32 × I
  uintptr_t keyGroups = 0;    // int32 × J
  EmptyPolicy empty = EmptyPolicy::NaN;
};

struct CallResult {
  Status status = Status::Ok;
  double row = -1;
  int32_t head = -1;
};

template <class T>
T* ptr(uintptr_t p) {
  return reinterpret_cast<T*>(p);
}

inline Problem make_problem(uintptr_t q, uintptr_t k, uintptr_t v, int32_t I, int32_t J, int32_t M, int32_t D,
                            const CallOptions& o) {
  Problem p;
  p.queries = {ptr<const float>(q), I, M, M};
  p.keys = {ptr<const float>(k), J, M, M};
  p.values = {ptr<const float>(v), J, D, D};
  p.kernel = {o.kernel, o.scale, ptr<const float>(o.bandwidth)};
  p.heads = o.heads;
  p.masks = {o.causal,
             o.leaveOneOut,
             ptr<const uint8_t>(o.keyPadding),
             ptr<const uint8_t>(o.generalMask),
             ptr<const int32_t>(o.queryGroups),
             ptr<const int32_t>(o.keyGroups)};
  p.empty = o.empty;
  return p;
}

inline CallResult to_js(Result r) { return {r.status, double(r.row), r.head}; }

// Regression options as plain numbers (pointers are heap byte offsets, 0 for "absent").
struct FitOptions {
  KernelKind kernel = KernelKind::Gaussian;
  Estimator estimator = Estimator::LocalLinear;
  uintptr_t bandwidth = 0;  // float32 × dims (selection ignores it)
  uintptr_t weights = 0;    // float32 × n observation weights
  EmptyPolicy empty = EmptyPolicy::NaN;
  int32_t threads = 1;
  double tolerance = 0;      // > 0: selection's leave-one-out CV may run on a grid (1-D, 2-D)
  double exclude = 0;        // selection's blocked CV radius (Criterion::exclude)
  uintptr_t queryScale = 0;  // float64 × queries: per-query bandwidth factors (span bandwidths), 0 for none
  // Discrete columns (stats/categories.h), none when discreteColumns is 0: the sample's levels (int32 × n ·
  // discreteColumns), the queries' (int32 × I · discreteColumns; 0: the sample's), each column's levels (int32),
  // kernel (int32, DiscreteKernel) and λ (float64; a search ignores it).
  int32_t discreteColumns = 0;
  uintptr_t categories = 0;
  uintptr_t queryCategories = 0;
  uintptr_t levels = 0;
  uintptr_t discreteKernels = 0;
  uintptr_t lambda = 0;
};

// The regression of y (n × width) on x (n × dims), evaluated at q (I × dims).
inline Fit make_fit(uintptr_t x, uintptr_t y, uintptr_t q, int32_t n, int32_t I, int32_t dims, int32_t width,
                    const FitOptions& o) {
  CallOptions c;
  c.kernel = o.kernel;
  c.bandwidth = o.bandwidth;
  c.empty = o.empty;
  Fit f{make_problem(q, x, y, I, n, dims, width, c), o.estimator, ptr<const float>(o.weights)};
  f.problem.threads = o.threads;
  f.query_scale = ptr<const double>(o.queryScale);
  return f;
}

// The discrete columns of o (count 0: none).
inline Categories make_categories(const FitOptions& o) {
  return Categories{ptr<const int32_t>(o.categories),
                    ptr<const int32_t>(o.queryCategories ? o.queryCategories : o.categories),
                    o.discreteColumns,
                    ptr<const int32_t>(o.levels),
                    ptr<const DiscreteKernel>(o.discreteKernels),
                    ptr<const double>(o.lambda)};
}

}  // namespace ka::bindings
