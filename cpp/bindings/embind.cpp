// Embind registrations only: each function rebuilds core views from heap pointers and sizes, calls one core entry
// and returns its Result. The core's enums cross as embind enums named as JS names them (options.kernel 'gaussian' is
// KernelKind.gaussian), and what each kernel supports, with the core's limits, is read from here once
// (web/src/engine.js, the only caller). Validation with argument names, defaults and memory ownership live in web/src.
#include <emscripten/bind.h>

#include <cstdint>
#include <string>

#include "gradients/backward.h"
#include "stats/bandwidth.h"
#include "base/build_info.h"
#include "engine/exact.h"
#include "kernel/traits.h"
#include "methods/grid/grid.h"
#include "engine/local_fit.h"
#include "stats/lowess.h"
#include "methods/nystrom.h"
#include "methods/plan.h"
#include "methods/random_features.h"
#include "stats/regression.h"
#include "methods/sparse.h"
#include "engine/states.h"
#include "methods/top_k.h"
#include "engine/weights.h"

namespace {

using namespace ka;

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

Problem make_problem(uintptr_t q, uintptr_t k, uintptr_t v, int32_t I, int32_t J, int32_t M, int32_t D,
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

CallResult to_js(Result r) { return {r.status, double(r.row), r.head}; }

CallResult attention_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out, int32_t I, int32_t J, int32_t M,
                        int32_t D, CallOptions o, int32_t threads) {
  Problem p = make_problem(q, k, v, I, J, M, D, o);
  p.threads = threads;
  return to_js(attention(p, Matrix{ptr<float>(out), I, D, D}));
}

// The forward pass and the backward pass (backward.h): out I×D, dq I×M, dk J×M, dv J×D, dtheta 1 (softmax) or M.
CallResult attention_gradients_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t dout, uintptr_t out, uintptr_t dq,
                                  uintptr_t dk, uintptr_t dv, uintptr_t dtheta, int32_t I, int32_t J, int32_t M,
                                  int32_t D, CallOptions o, int32_t threads) {
  Problem p = make_problem(q, k, v, I, J, M, D, o);
  p.threads = threads;
  const Gradients g{Matrix{ptr<float>(dq), I, M, M}, Matrix{ptr<float>(dk), J, M, M}, Matrix{ptr<float>(dv), J, D, D},
                    ptr<float>(dtheta)};
  return to_js(
      attention_gradients(p, ConstMatrix{ptr<const float>(dout), I, D, D}, g, Matrix{ptr<float>(out), I, D, D}));
}

CallResult weights_js(uintptr_t q, uintptr_t k, uintptr_t out, int32_t I, int32_t J, int32_t M, CallOptions o) {
  return to_js(weights(make_problem(q, k, 0, I, J, M, 0, o), ptr<float>(out)));
}

States states_at(uintptr_t max, uintptr_t sum, uintptr_t acc, int32_t I, int32_t D, int32_t H) {
  return {ptr<float>(max), ptr<float>(sum), Matrix{ptr<float>(acc), I, D, D}, H};
}

CallResult attention_states_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t max, uintptr_t sum, uintptr_t acc,
                               int32_t I, int32_t J, int32_t M, int32_t D, CallOptions o, int32_t threads) {
  Problem p = make_problem(q, k, v, I, J, M, D, o);
  p.threads = threads;
  return to_js(attention_states(p, states_at(max, sum, acc, I, D, o.heads)));
}

CallResult merge_states_js(uintptr_t max, uintptr_t sum, uintptr_t acc, uintptr_t max2, uintptr_t sum2, uintptr_t acc2,
                           int32_t I, int32_t D, int32_t H) {
  return to_js(merge_states(states_at(max, sum, acc, I, D, H), states_at(max2, sum2, acc2, I, D, H)));
}

CallResult finalize_states_js(uintptr_t max, uintptr_t sum, uintptr_t acc, int32_t I, int32_t D, int32_t H,
                              EmptyPolicy empty, uintptr_t out) {
  return to_js(finalize_states(states_at(max, sum, acc, I, D, H), empty, Matrix{ptr<float>(out), I, D, D}));
}

Status rule_of_thumb_js(uintptr_t x, int32_t n, int32_t dims, Rule rule, uintptr_t h) {
  return rule_of_thumb(ConstMatrix{ptr<const float>(x), n, dims, dims}, rule, ptr<double>(h));
}

// Regression options as plain numbers (pointers are heap byte offsets, 0 for "absent").
struct FitOptions {
  KernelKind kernel = KernelKind::Gaussian;
  Estimator estimator = Estimator::LocalLinear;
  uintptr_t bandwidth = 0;  // float32 × dims (selection ignores it)
  uintptr_t weights = 0;    // float32 × n observation weights
  EmptyPolicy empty = EmptyPolicy::NaN;
  int32_t threads = 1;
  double tolerance = 0;  // > 0: selection's leave-one-out CV may run on a grid (1-D, 2-D)
  double exclude = 0;    // selection's blocked CV radius (Criterion::exclude)
};

// The regression of y (n × width) on x (n × dims), evaluated at q (I × dims).
Fit make_fit(uintptr_t x, uintptr_t y, uintptr_t q, int32_t n, int32_t I, int32_t dims, int32_t width,
             const FitOptions& o) {
  CallOptions c;
  c.kernel = o.kernel;
  c.bandwidth = o.bandwidth;
  c.empty = o.empty;
  Fit f{make_problem(q, x, y, I, n, dims, width, c), o.estimator, ptr<const float>(o.weights)};
  f.problem.threads = o.threads;
  return f;
}

// mean: I × width floats; sum_sq, self, eff, logden: I doubles each, or 0 to skip (self needs q = x).
CallResult local_fit_js(uintptr_t x, uintptr_t y, uintptr_t q, int32_t n, int32_t I, int32_t dims, int32_t width,
                        FitOptions o, uintptr_t mean, uintptr_t sum_sq, uintptr_t self, uintptr_t eff,
                        uintptr_t logden) {
  const FitOut out{Matrix{ptr<float>(mean), I, width, width}, ptr<double>(sum_sq), ptr<double>(self), ptr<double>(eff),
                   ptr<double>(logden)};
  return to_js(local_fit(make_fit(x, y, q, n, I, dims, width, o), out));
}

// The fit on a grid of `nodes` nodes per axis (1-D or 2-D); error: 1 double, the measured error estimate (0 to skip).
CallResult grid_fit_js(uintptr_t x, uintptr_t y, uintptr_t q, int32_t n, int32_t I, int32_t dims, int32_t width,
                       FitOptions o, int32_t nodes, uintptr_t mean, uintptr_t sum_sq, uintptr_t eff, uintptr_t logden,
                       uintptr_t error) {
  const FitOut out{Matrix{ptr<float>(mean), I, width, width}, ptr<double>(sum_sq), nullptr, ptr<double>(eff),
                   ptr<double>(logden)};
  return to_js(grid_local_fit(make_fit(x, y, q, n, I, dims, width, o), nodes, out, ptr<double>(error)));
}

// Grid nodes per axis for the sample x (n × dims) at o's kernel, bandwidths and tolerance (0: run exactly), and why.
struct GridPlanJs {
  double nodes;
  std::string reason;
};

GridPlanJs grid_nodes_js(uintptr_t x, int32_t n, int32_t dims, FitOptions o) {
  char why[kReasonSize];
  const int64_t nodes = plan_grid_nodes(ConstMatrix{ptr<const float>(x), n, dims, dims}, o.kernel,
                                        ptr<const float>(o.bandwidth), o.tolerance, why);
  return {double(nodes), why};
}

// plan() (plan.h): keyData (float32 × keys·dims) and bandwidth (float32 × dims) may be 0.
struct PlanCallJs {
  Task task = Task::Attention;
  KernelKind kernel = KernelKind::Softmax;
  int32_t queries = 0, keys = 0, dims = 1, heads = 1;
  bool generalMask = false, groups = false;
  uintptr_t keyData = 0, bandwidth = 0;
};

struct PlanJs {
  Method method;
  std::string reason;
  double tolerance;  // the one given, or the default when it was <= 0
};

PlanJs plan_js(PlanCallJs c, Method requested, double tolerance) {
  PlanCall call;
  call.task = c.task;
  call.kernel = c.kernel;
  call.queries = c.queries;
  call.keys = c.keys;
  call.dims = c.dims;
  call.heads = c.heads;
  call.general_mask = c.generalMask;
  call.groups = c.groups;
  call.key_data = {ptr<const float>(c.keyData), c.keyData ? c.keys : 0, c.dims, c.dims};
  call.bandwidth = ptr<const float>(c.bandwidth);
  const Plan p = plan(call, requested, tolerance);
  return {p.method, p.reason, p.tolerance};
}

struct SummaryResult {
  Status status = Status::Ok;
  double rss = 0, trace = 0, traceSq = 0, sigma2 = 0, emptyRows = 0, guardChanged = 0;
};

// column_sigma2: width doubles.
SummaryResult fit_summary_js(uintptr_t x, uintptr_t y, int32_t n, int32_t dims, int32_t width, FitOptions o,
                             uintptr_t column_sigma2) {
  FitSummary s;
  const Result r = summarize_fit(make_fit(x, y, x, n, n, dims, width, o), &s, ptr<double>(column_sigma2), o.tolerance);
  return {r.status, s.rss, s.trace, s.trace_sq, s.sigma2, double(s.empty_rows), double(s.guard_changed)};
}

struct SelectResult {
  Status status = Status::Ok;
  int32_t count = 0;       // criterion evaluations on the curve
  int32_t iterations = 0;  // select_cv_gradient_js: accepted L-BFGS steps
};

// h: dims doubles, in: the start, out: the choice; score: 1 double;
// curve: capacity × dims and capacity doubles, whose first `recorded` entries are replayed (CvCurve: resuming).
// stop_at > 0: the search stops (Cancelled) once it has made stop_at evaluations, so that JS can yield to its event
// loop and resume it; 0: it runs to the end.
bool stop_at_count(void* stop_at, int32_t evaluations) { return evaluations < *static_cast<int32_t*>(stop_at); }

SelectResult select_cv_js(uintptr_t x, uintptr_t y, int32_t n, int32_t dims, int32_t width, FitOptions o,
                          Score score_kind, bool per_dimension, uintptr_t h, uintptr_t score, uintptr_t curve_h,
                          uintptr_t curve_score, int32_t capacity, int32_t recorded, int32_t stop_at) {
  const Fit f = make_fit(x, y, x, n, n, dims, width, o);
  CvCurve curve{ptr<double>(curve_h), ptr<double>(curve_score), capacity, recorded};
  const Criterion c{f.estimator, score_kind, f.observation_weights, o.tolerance, o.exclude};
  const SearchProgress progress{stop_at > 0 ? &stop_at_count : nullptr, &stop_at};
  const Result r = select_cv(f.problem, per_dimension, ptr<double>(h), ptr<double>(score), &curve, c, progress);
  return {r.status, curve.count};
}

// The gradient search (select_cv_gradient): rank 0 diagonal, r > 0 a metric L written to transform (r × dims
// doubles); curve_grad: capacity × (dims or r·dims) doubles, replayed with the curve like select_cv_js's.
SelectResult select_cv_gradient_js(uintptr_t x, uintptr_t y, int32_t n, int32_t dims, int32_t width, FitOptions o,
                                   int32_t rank, uintptr_t transform, int32_t max_iterations, uintptr_t h,
                                   uintptr_t score, uintptr_t curve_h, uintptr_t curve_score, uintptr_t curve_grad,
                                   int32_t capacity, int32_t recorded, int32_t stop_at) {
  const Fit f = make_fit(x, y, x, n, n, dims, width, o);
  CvCurve curve{ptr<double>(curve_h), ptr<double>(curve_score), capacity, recorded, ptr<double>(curve_grad)};
  const Criterion c{f.estimator, Score::LeaveOneOut, f.observation_weights, 0};
  const SearchProgress progress{stop_at > 0 ? &stop_at_count : nullptr, &stop_at};
  GradientSearch search;
  search.rank = rank;
  search.transform = ptr<double>(transform);
  search.max_iterations = max_iterations;
  const Result r = select_cv_gradient(f.problem, ptr<double>(h), ptr<double>(score), &curve, c, progress, &search);
  return {r.status, curve.count, search.iterations};
}

Status cv_score_js(uintptr_t x, uintptr_t y, int32_t n, int32_t dims, int32_t width, FitOptions o, Score score_kind,
                   uintptr_t h, uintptr_t score) {
  const Fit f = make_fit(x, y, x, n, n, dims, width, o);
  const Criterion c{f.estimator, score_kind, f.observation_weights, o.tolerance, o.exclude};
  return cv_score(f.problem, ptr<double>(h), ptr<double>(score), c).status;
}

// Approximate attention (random_features.h, nystrom.h).
struct ApproxCall {
  double tolerance = 1e-2;
  double seed = 0;    // an integer in [0, 2^32)
  int32_t count = 0;  // features or landmarks; 0: from the tolerance
  LandmarkSampling sampling = LandmarkSampling::KMeansPlusPlus;
};

struct ApproxResult {
  Status status = Status::Ok;
  int32_t count = 0;
  double errorEstimate = 0;
  double exactRows = 0;
};

ApproxOptions approx_options(const ApproxCall& a) {
  ApproxOptions opts;
  opts.tolerance = a.tolerance;
  opts.seed = uint64_t(a.seed);
  opts.count = a.count;
  opts.sampling = a.sampling;
  return opts;
}

ApproxResult to_js(Result r, const ApproxReport& report) {
  return {r.status, report.count, report.error_estimate, double(report.exact_rows)};
}

ApproxResult random_features_attention_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out, int32_t I, int32_t J,
                                          int32_t M, int32_t D, CallOptions o, ApproxCall a) {
  ApproxReport report;
  const Result r = random_features_attention(make_problem(q, k, v, I, J, M, D, o), approx_options(a),
                                             Matrix{ptr<float>(out), I, D, D}, &report);
  return to_js(r, report);
}

ApproxResult nystrom_attention_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out, int32_t I, int32_t J, int32_t M,
                                  int32_t D, CallOptions o, ApproxCall a) {
  ApproxReport report;
  const Result r = nystrom_attention(make_problem(q, k, v, I, J, M, D, o), approx_options(a),
                                     Matrix{ptr<float>(out), I, D, D}, &report);
  return to_js(r, report);
}

// Certified sparse attention (sparse.h). dropped: I×H doubles; sum_sq, eff, logden: I doubles (heads 1); 0 to skip.
struct SparseResult {
  Status status = Status::Ok;
  double row = -1;
  int32_t head = -1;
  double errorEstimate = 0, maxDropped = 0, keptKeys = 0, skippedKeys = 0;
};

SparseResult sparse_attention_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out, int32_t I, int32_t J, int32_t M,
                                 int32_t D, CallOptions o, double tolerance, int32_t threads, uintptr_t dropped,
                                 uintptr_t sum_sq, uintptr_t eff, uintptr_t logden) {
  Problem p = make_problem(q, k, v, I, J, M, D, o);
  p.threads = threads;
  SparseOptions opts;
  opts.tolerance = tolerance;
  const SparseOut so{Matrix{ptr<float>(out), I, D, D}, ptr<double>(dropped), ptr<double>(sum_sq), ptr<double>(eff),
                     ptr<double>(logden)};
  SparseReport rep;
  const Result r = sparse_attention(p, opts, so, &rep);
  return {r.status,
          double(r.row),
          r.head,
          rep.error_estimate,
          rep.max_dropped,
          double(rep.kept_keys),
          double(rep.skipped_keys)};
}

SparseResult top_k_attention_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out, int32_t I, int32_t J, int32_t M,
                                int32_t D, CallOptions o, int32_t top_k, uintptr_t dropped) {
  SparseReport rep;
  const Result r = top_k_attention(make_problem(q, k, v, I, J, M, D, o), top_k,
                                   SparseOut{Matrix{ptr<float>(out), I, D, D}, ptr<double>(dropped)}, &rep);
  return {r.status,
          double(r.row),
          r.head,
          rep.error_estimate,
          rep.max_dropped,
          double(rep.kept_keys),
          double(rep.skipped_keys)};
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

// LOWESS (lowess.h): x, y, fitted, weights are n doubles each.
Status lowess_js(uintptr_t x, uintptr_t y, int32_t n, double frac, int32_t iterations, double delta, int32_t threads,
                 uintptr_t fitted, uintptr_t weights) {
  const LowessOptions o{frac, iterations, delta, threads};
  return lowess(ptr<const double>(x), ptr<const double>(y), n, o, ptr<double>(fitted), ptr<double>(weights));
}
std::string simd_name_js() { return simd_name(); }

}  // namespace

EMSCRIPTEN_BINDINGS(kernel_attention) {
  using namespace emscripten;
  enum_<Status>("Status")
      .value("Ok", Status::Ok)
      .value("BadArgument", Status::BadArgument)
      .value("BadShape", Status::BadShape)
      .value("EmptyRow", Status::EmptyRow)
      .value("OutOfMemory", Status::OutOfMemory)
      .value("Cancelled", Status::Cancelled);
  enum_<KernelKind>("KernelKind")
      .value("softmax", KernelKind::Softmax)
      .value("gaussian", KernelKind::Gaussian)
      .value("laplacian", KernelKind::Laplacian)
      .value("cauchy", KernelKind::Cauchy)
      .value("epanechnikov", KernelKind::Epanechnikov)
      .value("tricube", KernelKind::Tricube)
      .value("uniform", KernelKind::Uniform);
  enum_<EmptyPolicy>("EmptyPolicy")
      .value("nan", EmptyPolicy::NaN)
      .value("zero", EmptyPolicy::Zero)
      .value("nearest", EmptyPolicy::Nearest)
      .value("error", EmptyPolicy::Error);
  enum_<Estimator>("Estimator")
      .value("nadaraya-watson", Estimator::NadarayaWatson)
      .value("local-linear", Estimator::LocalLinear);
  enum_<Rule>("Rule").value("scott", Rule::Scott).value("silverman", Rule::Silverman);
  enum_<Score>("Score").value("cv", Score::LeaveOneOut).value("aicc", Score::AICc);
  enum_<LandmarkSampling>("LandmarkSampling")
      .value("kmeans++", LandmarkSampling::KMeansPlusPlus)
      .value("uniform", LandmarkSampling::Uniform);
  enum_<Method>("Method")
      .value("exact", Method::Exact)
      .value("grid", Method::Grid)
      .value("sparse", Method::Sparse)
      .value("top-k", Method::TopK)
      .value("random-features", Method::RandomFeatures)
      .value("nystrom", Method::Nystrom)
      .value("auto", Method::Auto);
  enum_<Task>("Task").value("attention", Task::Attention).value("regression", Task::Regression);
  value_object<PlanCallJs>("PlanCall")
      .field("task", &PlanCallJs::task)
      .field("kernel", &PlanCallJs::kernel)
      .field("queries", &PlanCallJs::queries)
      .field("keys", &PlanCallJs::keys)
      .field("dims", &PlanCallJs::dims)
      .field("heads", &PlanCallJs::heads)
      .field("generalMask", &PlanCallJs::generalMask)
      .field("groups", &PlanCallJs::groups)
      .field("keyData", &PlanCallJs::keyData)
      .field("bandwidth", &PlanCallJs::bandwidth);
  value_object<PlanJs>("Plan")
      .field("method", &PlanJs::method)
      .field("reason", &PlanJs::reason)
      .field("tolerance", &PlanJs::tolerance);
  value_object<GridPlanJs>("GridPlan").field("nodes", &GridPlanJs::nodes).field("reason", &GridPlanJs::reason);
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
  value_object<CallOptions>("CallOptions")
      .field("kernel", &CallOptions::kernel)
      .field("scale", &CallOptions::scale)
      .field("bandwidth", &CallOptions::bandwidth)
      .field("heads", &CallOptions::heads)
      .field("causal", &CallOptions::causal)
      .field("leaveOneOut", &CallOptions::leaveOneOut)
      .field("keyPadding", &CallOptions::keyPadding)
      .field("generalMask", &CallOptions::generalMask)
      .field("queryGroups", &CallOptions::queryGroups)
      .field("keyGroups", &CallOptions::keyGroups)
      .field("empty", &CallOptions::empty);
  value_object<CallResult>("CallResult")
      .field("status", &CallResult::status)
      .field("row", &CallResult::row)
      .field("head", &CallResult::head);
  value_object<FitOptions>("FitOptions")
      .field("kernel", &FitOptions::kernel)
      .field("estimator", &FitOptions::estimator)
      .field("bandwidth", &FitOptions::bandwidth)
      .field("weights", &FitOptions::weights)
      .field("empty", &FitOptions::empty)
      .field("threads", &FitOptions::threads)
      .field("tolerance", &FitOptions::tolerance)
      .field("exclude", &FitOptions::exclude);
  value_object<SummaryResult>("SummaryResult")
      .field("status", &SummaryResult::status)
      .field("rss", &SummaryResult::rss)
      .field("trace", &SummaryResult::trace)
      .field("traceSq", &SummaryResult::traceSq)
      .field("sigma2", &SummaryResult::sigma2)
      .field("emptyRows", &SummaryResult::emptyRows)
      .field("guardChanged", &SummaryResult::guardChanged);
  value_object<SelectResult>("SelectResult")
      .field("status", &SelectResult::status)
      .field("count", &SelectResult::count)
      .field("iterations", &SelectResult::iterations);
  value_object<ApproxCall>("ApproxCall")
      .field("tolerance", &ApproxCall::tolerance)
      .field("seed", &ApproxCall::seed)
      .field("count", &ApproxCall::count)
      .field("sampling", &ApproxCall::sampling);
  value_object<ApproxResult>("ApproxResult")
      .field("status", &ApproxResult::status)
      .field("count", &ApproxResult::count)
      .field("errorEstimate", &ApproxResult::errorEstimate)
      .field("exactRows", &ApproxResult::exactRows);
  function("_attention", &attention_js);
  function("_randomFeaturesAttention", &random_features_attention_js);
  function("_nystromAttention", &nystrom_attention_js);
  value_object<SparseResult>("SparseResult")
      .field("status", &SparseResult::status)
      .field("row", &SparseResult::row)
      .field("head", &SparseResult::head)
      .field("errorEstimate", &SparseResult::errorEstimate)
      .field("maxDropped", &SparseResult::maxDropped)
      .field("keptKeys", &SparseResult::keptKeys)
      .field("skippedKeys", &SparseResult::skippedKeys);
  function("_sparseAttention", &sparse_attention_js);
  function("_topKAttention", &top_k_attention_js);
  function("_ruleOfThumb", &rule_of_thumb_js);
  function("_selectCv", &select_cv_js);
  function("_selectCvGradient", &select_cv_gradient_js);
  function("_cvScore", &cv_score_js);
  function("_localFit", &local_fit_js);
  function("_fitSummary", &fit_summary_js);
  function("_gridFit", &grid_fit_js);
  function("_gridNodes", &grid_nodes_js);
  function("_weights", &weights_js);
  function("_attentionGradients", &attention_gradients_js);
  function("_attentionStates", &attention_states_js);
  function("_mergeStates", &merge_states_js);
  function("_finalizeStates", &finalize_states_js);
  function("_lowess", &lowess_js);
  function("_simdName", &simd_name_js);
}
