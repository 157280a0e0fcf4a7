// Bindings: R's loess (stats/loess/loess.h), a model the JS side holds by handle (embind.cpp says how bindings are
// written). Arrays are heap offsets of doubles; the model keeps its own copy of the sample.
#include <emscripten/bind.h>

#include <new>

#include "common.h"
#include "stats/loess/loess.h"
#include "stats/loess/statistics.h"

namespace {

using namespace ka;
using namespace ka::bindings;

struct LoessCallOptions {
  int32_t dims = 1;
  double span = 0.75;
  int32_t degree = 2;
  LoessFamily family = LoessFamily::Gaussian;
  LoessSurface surface = LoessSurface::Interpolate;
  bool normalize = true;
  int32_t iterations = 4;
  double cell = 0.2;
  LoessStatistics statistics = LoessStatistics::Approximate;
  LoessTraceHat traceHat = LoessTraceHat::Exact;
};

struct LoessFitResult {
  Status status = Status::Ok;
  LoessProblem problem = LoessProblem::None;
};

struct LoessSummaryJs {
  double enp, residualScale, oneDelta, twoDelta, traceHat;
  bool pseudoInverse;
};

// Models alive: the tests' check that dispose() gives the model's memory back.
int32_t live_models = 0;

LoessModel* model_of(uintptr_t m) { return reinterpret_cast<LoessModel*>(m); }

// A new, empty model (0 when it cannot be allocated), for loessFit; freed by loessFree.
uintptr_t loess_create() {
  LoessModel* m = new (std::nothrow) LoessModel;
  if (m) ++live_models;
  return reinterpret_cast<uintptr_t>(m);
}

void loess_free(uintptr_t m) {
  if (m) --live_models;
  delete model_of(m);
}

// x: n × dims doubles, y: n doubles, weights: n doubles or 0; threads: the model's fits and predictions.
LoessFitResult loess_fit_js(uintptr_t m, uintptr_t x, uintptr_t y, uintptr_t weights, int32_t n, LoessCallOptions o,
                            int32_t threads) {
  LoessOptions options;
  options.dims = o.dims;
  options.span = o.span;
  options.degree = o.degree;
  options.family = o.family;
  options.surface = o.surface;
  options.normalize = o.normalize;
  options.iterations = o.iterations;
  options.cell = o.cell;
  options.statistics = o.statistics;
  options.trace_hat = o.traceHat;
  options.threads = threads;
  const Status s = model_of(m)->fit(ptr<const double>(x), ptr<const double>(y), ptr<const double>(weights), n, options);
  return {s, model_of(m)->problem()};
}

LoessSummaryJs loess_summary(uintptr_t m) {
  const LoessSummary& s = model_of(m)->summary();
  return {s.enp, s.residual_scale, s.one_delta, s.two_delta, s.trace_hat, model_of(m)->pseudo_inverse()};
}

// out: n doubles each, in the input's row order.
void loess_fitted(uintptr_t m, uintptr_t out) { model_of(m)->fitted(ptr<double>(out)); }
void loess_residuals(uintptr_t m, uintptr_t out) { model_of(m)->residuals(ptr<double>(out)); }
void loess_robustness_weights(uintptr_t m, uintptr_t out) { model_of(m)->robustness_weights(ptr<double>(out)); }

// q: count × dims doubles; fit: count doubles; se: count doubles or 0.
Status loess_predict_js(uintptr_t m, uintptr_t q, int32_t count, uintptr_t fit, uintptr_t se) {
  return model_of(m)->predict(ptr<const double>(q), count, ptr<double>(fit), se ? ptr<double>(se) : nullptr);
}

int32_t loess_live_models() { return live_models; }

}  // namespace

EMSCRIPTEN_BINDINGS(kernel_attention_loess) {
  using namespace emscripten;
  enum_<LoessFamily>("LoessFamily").value("gaussian", LoessFamily::Gaussian).value("symmetric", LoessFamily::Symmetric);
  enum_<LoessSurface>("LoessSurface")
      .value("interpolate", LoessSurface::Interpolate)
      .value("direct", LoessSurface::Direct);
  enum_<LoessStatistics>("LoessStatistics")
      .value("approximate", LoessStatistics::Approximate)
      .value("exact", LoessStatistics::Exact)
      .value("none", LoessStatistics::None);
  enum_<LoessTraceHat>("LoessTraceHat")
      .value("exact", LoessTraceHat::Exact)
      .value("approximate", LoessTraceHat::Approximate);
  enum_<LoessProblem>("LoessProblem")
      .value("none", LoessProblem::None)
      .value("spanTooSmall", LoessProblem::SpanTooSmall)
      .value("zeroWidth", LoessProblem::ZeroWidth);
  value_object<LoessCallOptions>("LoessCallOptions")
      .field("dims", &LoessCallOptions::dims)
      .field("span", &LoessCallOptions::span)
      .field("degree", &LoessCallOptions::degree)
      .field("family", &LoessCallOptions::family)
      .field("surface", &LoessCallOptions::surface)
      .field("normalize", &LoessCallOptions::normalize)
      .field("iterations", &LoessCallOptions::iterations)
      .field("cell", &LoessCallOptions::cell)
      .field("statistics", &LoessCallOptions::statistics)
      .field("traceHat", &LoessCallOptions::traceHat);
  value_object<LoessFitResult>("LoessFitResult")
      .field("status", &LoessFitResult::status)
      .field("problem", &LoessFitResult::problem);
  value_object<LoessSummaryJs>("LoessSummary")
      .field("enp", &LoessSummaryJs::enp)
      .field("residualScale", &LoessSummaryJs::residualScale)
      .field("oneDelta", &LoessSummaryJs::oneDelta)
      .field("twoDelta", &LoessSummaryJs::twoDelta)
      .field("traceHat", &LoessSummaryJs::traceHat)
      .field("pseudoInverse", &LoessSummaryJs::pseudoInverse);
  function("_loessCreate", &loess_create);
  function("_loessFree", &loess_free);
  function("_loessFit", &loess_fit_js);
  function("_loessSummary", &loess_summary);
  function("_loessFitted", &loess_fitted);
  function("_loessResiduals", &loess_residuals);
  function("_loessRobustnessWeights", &loess_robustness_weights);
  function("_loessPredict", &loess_predict_js);
  function("_loessLiveModels", &loess_live_models);
  function("_studentTQuantile", &loess::student_t_quantile);
}
