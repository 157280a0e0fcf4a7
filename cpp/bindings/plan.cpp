// Bindings: the method table (plan.h), what each kernel supports (traits.h) and the core's limits (embind.cpp says
// how bindings are written).
#include <emscripten/bind.h>

#include <string>

#include "common.h"
#include "engine/exact.h"
#include "engine/key_tile.h"
#include "kernel/traits.h"
#include "methods/grid/grid.h"
#include "methods/nystrom.h"
#include "methods/plan.h"
#include "methods/random_features.h"
#include "methods/sparse.h"

namespace {

using namespace ka;
using namespace ka::bindings;

// plan() (plan.h): keyData (float32 × keys·dims) and bandwidth (float32 × dims) may be 0.
struct PlanCallJs {
  Task task = Task::Attention;
  KernelKind kernel = KernelKind::Softmax;
  int32_t queries = 0, keys = 0, dims = 1, heads = 1;
  bool masked = false, generalMask = false, groups = false;
  Estimator estimator = Estimator::LocalLinear;
  PlanCriterion criterion = PlanCriterion::Fit;
  bool exclude = false, weights = false, span = false, discrete = false;
  uintptr_t keyData = 0, bandwidth = 0;
};

struct PlanJs {
  Method method;
  std::string reason;
  double tolerance;   // the one given, or the default when it was <= 0
  PlanField refused;  // the field that keeps the method asked for from the call (none: it runs)
};

PlanJs plan_js(PlanCallJs c, Method requested, double tolerance) {
  PlanCall call;
  call.task = c.task;
  call.kernel = c.kernel;
  call.queries = c.queries;
  call.keys = c.keys;
  call.dims = c.dims;
  call.heads = c.heads;
  call.masked = c.masked;
  call.general_mask = c.generalMask;
  call.groups = c.groups;
  call.estimator = c.estimator;
  call.criterion = c.criterion;
  call.exclude = c.exclude;
  call.weights = c.weights;
  call.span = c.span;
  call.discrete = c.discrete;
  call.key_data = {ptr<const float>(c.keyData), c.keyData ? c.keys : 0, c.dims, c.dims};
  call.bandwidth = ptr<const float>(c.bandwidth);
  const Plan p = plan(call, requested, tolerance);
  return {p.method, p.reason, p.tolerance, p.refused};
}

// kernel_traits (traits.h) as JS reads it.
struct KernelTraitsJs {
  std::string name;
  bool distance, compact, heavyTail, gradient, grid, randomFeatures, nystrom, sparse;
};

KernelTraitsJs kernel_traits_js(KernelKind k) {
  const KernelTraits& t = kernel_traits(k);
  return {t.name, t.distance, t.compact, t.heavy_tail, t.gradient, t.grid, t.random_features, t.nystrom, t.sparse};
}

}  // namespace

EMSCRIPTEN_BINDINGS(plan) {
  using namespace emscripten;
  value_object<PlanCallJs>("PlanCall")
      .field("task", &PlanCallJs::task)
      .field("kernel", &PlanCallJs::kernel)
      .field("queries", &PlanCallJs::queries)
      .field("keys", &PlanCallJs::keys)
      .field("dims", &PlanCallJs::dims)
      .field("heads", &PlanCallJs::heads)
      .field("masked", &PlanCallJs::masked)
      .field("generalMask", &PlanCallJs::generalMask)
      .field("groups", &PlanCallJs::groups)
      .field("estimator", &PlanCallJs::estimator)
      .field("criterion", &PlanCallJs::criterion)
      .field("exclude", &PlanCallJs::exclude)
      .field("weights", &PlanCallJs::weights)
      .field("span", &PlanCallJs::span)
      .field("discrete", &PlanCallJs::discrete)
      .field("keyData", &PlanCallJs::keyData)
      .field("bandwidth", &PlanCallJs::bandwidth);
  value_object<PlanJs>("Plan")
      .field("method", &PlanJs::method)
      .field("reason", &PlanJs::reason)
      .field("tolerance", &PlanJs::tolerance)
      .field("refused", &PlanJs::refused);
  function("_plan", &plan_js);
  value_object<KernelTraitsJs>("KernelTraits")
      .field("name", &KernelTraitsJs::name)
      .field("distance", &KernelTraitsJs::distance)
      .field("compact", &KernelTraitsJs::compact)
      .field("heavyTail", &KernelTraitsJs::heavyTail)
      .field("gradient", &KernelTraitsJs::gradient)
      .field("grid", &KernelTraitsJs::grid)
      .field("randomFeatures", &KernelTraitsJs::randomFeatures)
      .field("nystrom", &KernelTraitsJs::nystrom)
      .field("sparse", &KernelTraitsJs::sparse);
  function("_kernelTraits", &kernel_traits_js);
  function("_sparseReach", &sparse_reach);
  constant("kernelCount", kKernelCount);
  constant("maxFeatures", kMaxFeatures);
  constant("maxLandmarks", kMaxLandmarks);
  constant("sparseMaxDims", int32_t(kSparseMaxDims));
  constant("maxGridDims", int32_t(kMaxGridDims));
  constant("queryBlock", int32_t(kQueryBlock));
  constant("unshardedRows", int32_t(kShardBelowBlocks * kQueryBlock));
}
