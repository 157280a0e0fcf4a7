// Bindings: kernel regression, fits, grid fits, summaries, bandwidth rules and searches, LOWESS (embind.cpp says how
// bindings are written).
#include <emscripten/bind.h>

#include <limits>
#include <new>
#include <string>

#include "common.h"
#include "engine/local_fit.h"
#include "engine/local_rows.h"
#include "engine/neighbours.h"
#include "methods/grid/grid.h"
#include "methods/grid/model.h"
#include "methods/plan.h"
#include "stats/bandwidth.h"
#include "stats/lowess.h"
#include "stats/mixed.h"
#include "stats/plugin.h"
#include "stats/regression.h"

namespace {

using namespace ka;
using namespace ka::bindings;

Status rule_of_thumb_js(uintptr_t x, int32_t n, int32_t dims, Rule rule, uintptr_t h) {
  return rule_of_thumb(ConstMatrix{ptr<const float>(x), n, dims, dims}, rule, ptr<double>(h));
}

// x: n values `stride` doubles apart (a column of a row-major sample); out: 1 double.
Status median_spacing_js(uintptr_t x, int32_t n, int32_t stride, uintptr_t out) {
  return median_spacing(ptr<const double>(x), n, stride, ptr<double>(out));
}

// mean: I × width floats; sum_sq, self, eff, logden: I doubles each, or 0 to skip (self needs q = x).
CallResult local_fit_js(uintptr_t x, uintptr_t y, uintptr_t q, int32_t n, int32_t I, int32_t dims, int32_t width,
                        FitOptions o, uintptr_t mean, uintptr_t sum_sq, uintptr_t self, uintptr_t eff,
                        uintptr_t logden) {
  const FitOut out{Matrix{ptr<float>(mean), I, width, width}, ptr<double>(sum_sq), ptr<double>(self), ptr<double>(eff),
                   ptr<double>(logden)};
  const Fit f = make_fit(x, y, q, n, I, dims, width, o);
  return to_js(o.discreteColumns ? mixed_fit(f, make_categories(o), out, o.tolerance) : local_fit(f, out));
}

// ∂f/∂q (local_rows.h): gradient I × dims × width doubles; sum_sq I × dims doubles and mean I × width doubles, or 0.
CallResult local_gradient_js(uintptr_t x, uintptr_t y, uintptr_t q, int32_t n, int32_t I, int32_t dims, int32_t width,
                             FitOptions o, uintptr_t gradient, uintptr_t sum_sq, uintptr_t mean) {
  const Fit f = make_fit(x, y, q, n, I, dims, width, o);
  const GradientOut out{ptr<double>(gradient), ptr<double>(sum_sq), ptr<double>(mean)};
  return to_js(o.discreteColumns ? mixed_gradient(f, make_categories(o), out) : local_gradient(f, out));
}

// Span bandwidths (neighbours.h): out[i], I doubles, the distance from query i to its k-th nearest of the n keys x,
// each dimension divided by scale (dims floats).
Status kth_neighbour_distances_js(uintptr_t x, int32_t n, uintptr_t q, int32_t I, int32_t dims, uintptr_t scale,
                                  int32_t k, int32_t threads, uintptr_t out) {
  return kth_neighbour_distances(ConstMatrix{ptr<const float>(x), n, dims, dims},
                                 ConstMatrix{ptr<const float>(q), I, dims, dims}, ptr<const float>(scale), k, threads,
                                 ptr<double>(out));
}

// A model's grid (model.h) over its resident sample x, y (n × dims, n × width floats) and weights (n floats or 0):
// a handle for gridModelFit, freed by gridModelFree; 0 when it cannot be allocated.
uintptr_t grid_model_create(uintptr_t x, uintptr_t y, int32_t n, int32_t dims, int32_t width, uintptr_t weights) {
  FitOptions o{};
  o.weights = weights;
  return reinterpret_cast<uintptr_t>(new (std::nothrow) GridModel(make_fit(x, y, x, n, n, dims, width, o)));
}

// The fit on a model's grid (GridModel::fit; 1-D or 2-D) of `nodes` nodes per axis: x, y and o.weights must be the
// model's; mean I × width floats, sum_sq, eff, logden I doubles (or 0), error 1 double, the measured error estimate
// (or 0).
CallResult grid_model_fit_js(uintptr_t model, uintptr_t x, uintptr_t y, uintptr_t q, int32_t n, int32_t I, int32_t dims,
                             int32_t width, FitOptions o, int32_t nodes, uintptr_t mean, uintptr_t sum_sq,
                             uintptr_t eff, uintptr_t logden, uintptr_t error) {
  const FitOut out{Matrix{ptr<float>(mean), I, width, width}, ptr<double>(sum_sq), nullptr, ptr<double>(eff),
                   ptr<double>(logden)};
  return to_js(reinterpret_cast<GridModel*>(model)->fit(make_fit(x, y, q, n, I, dims, width, o), nodes, out,
                                                        ptr<double>(error)));
}

// ∂f/∂q on a model's sample (GridModel::gradient: from the grid of `nodes` nodes per axis where it serves the row, the
// others exactly over its sample sorted once, the keys in reach of each query); outputs as local_gradient_js's.
CallResult grid_model_gradient_js(uintptr_t model, uintptr_t x, uintptr_t y, uintptr_t q, int32_t n, int32_t I,
                                  int32_t dims, int32_t width, FitOptions o, int32_t nodes, uintptr_t gradient,
                                  uintptr_t sum_sq, uintptr_t mean) {
  return to_js(reinterpret_cast<GridModel*>(model)->gradient(
      make_fit(x, y, q, n, I, dims, width, o), nodes,
      GradientOut{ptr<double>(gradient), ptr<double>(sum_sq), ptr<double>(mean)}));
}

void grid_model_free(uintptr_t model) { delete reinterpret_cast<GridModel*>(model); }

// How many times a model binned its sample, convolved its moments and sorted its sample, and how many keys the rows
// its grid does not serve read (tests, benchmarks).
struct GridModelCounts {
  double binnings, convolutions, sorts, keysRead;
};
GridModelCounts grid_model_counts(uintptr_t model) {
  const GridModel* m = reinterpret_cast<const GridModel*>(model);
  return {double(m->binnings()), double(m->convolutions()), double(m->sorts()), double(m->keys_read())};
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

struct SummaryResult {
  Status status = Status::Ok;
  double rss = 0, trace = 0, traceSq = 0, sigma2 = 0, emptyRows = 0, guardChanged = 0;
};

SummaryResult summary_result(const Result& r, const FitSummary& s) {
  return {r.status, s.rss, s.trace, s.trace_sq, s.sigma2, double(s.empty_rows), double(s.guard_changed)};
}

// column_sigma2: width doubles.
SummaryResult fit_summary_js(uintptr_t x, uintptr_t y, int32_t n, int32_t dims, int32_t width, FitOptions o,
                             uintptr_t column_sigma2) {
  FitSummary s;
  const Fit f = make_fit(x, y, x, n, n, dims, width, o);
  const Result r = o.discreteColumns
                       ? mixed_summary(f, make_categories(o), &s, ptr<double>(column_sigma2), false, o.tolerance)
                       : summarize_fit(f, &s, ptr<double>(column_sigma2), o.tolerance);
  return summary_result(r, s);
}

// fit_summary_js on a model's sample (its keys, values and weights: GridModel::sorted_sample), in the order of the
// first coordinate: its exact fit at every sample point then reads only the key tiles in reach. Exact (o's tolerance
// is not read); for a model whose grid does not serve o's bandwidths.
SummaryResult grid_model_summary_js(uintptr_t model, uintptr_t x, uintptr_t y, int32_t n, int32_t dims, int32_t width,
                                    FitOptions o, uintptr_t column_sigma2) {
  Fit f;
  if (const Status st = reinterpret_cast<GridModel*>(model)->sorted_sample(make_fit(x, y, x, n, n, dims, width, o), &f);
      st != Status::Ok)
    return {st};
  f.problem.queries = f.problem.keys;
  FitSummary s;
  return summary_result(summarize_fit(f, &s, ptr<double>(column_sigma2)), s);
}

struct SelectResult {
  Status status = Status::Ok;
  int32_t count = 0;       // criterion evaluations on the curve
  int32_t iterations = 0;  // select_cv_gradient_js: accepted L-BFGS steps
};

// h: dims doubles (with discrete columns, dims + discreteColumns: h then λ), in: the start, out: the choice; score: 1
// double;
// curve: capacity × dims and capacity doubles, whose first `recorded` entries are replayed (CvCurve: resuming).
// stop_at > 0: the search stops (Cancelled) once it has made stop_at evaluations, so that JS can yield to its event
// loop and resume it; 0: it runs to the end.
bool stop_at_count(void* stop_at, int32_t evaluations) { return evaluations < *static_cast<int32_t*>(stop_at); }

// search: a handle of cvSearchCreate kept across the calls of one search resumed in steps (its sorted and binned
// sample), or 0.
SelectResult select_cv_js(uintptr_t x, uintptr_t y, int32_t n, int32_t dims, int32_t width, FitOptions o,
                          Score score_kind, bool per_dimension, uintptr_t h, uintptr_t score, uintptr_t curve_h,
                          uintptr_t curve_score, int32_t capacity, int32_t recorded, int32_t stop_at,
                          uintptr_t search) {
  const Fit f = make_fit(x, y, x, n, n, dims, width, o);
  CvCurve curve{ptr<double>(curve_h), ptr<double>(curve_score), capacity, recorded};
  const Criterion c{f.estimator, score_kind, f.observation_weights, o.tolerance, o.exclude};
  const SearchProgress progress{stop_at > 0 ? &stop_at_count : nullptr, &stop_at};
  const Result r = o.discreteColumns
                       ? select_mixed(f.problem, make_categories(o), per_dimension, ptr<double>(h), ptr<double>(score),
                                      &curve, c, progress, reinterpret_cast<CvSearchState*>(search))
                       : select_cv(f.problem, per_dimension, ptr<double>(h), ptr<double>(score), &curve, c, progress,
                                   reinterpret_cast<CvSearchState*>(search));
  return {r.status, curve.count};
}

// What one search keeps between its steps (CvSearchState, bandwidth.h): a handle for selectCv, freed by
// cvSearchFree; 0 when it cannot be allocated.
uintptr_t cv_search_create() { return reinterpret_cast<uintptr_t>(new (std::nothrow) CvSearchState()); }
void cv_search_free(uintptr_t search) { delete reinterpret_cast<CvSearchState*>(search); }

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
  if (o.discreteColumns)
    return mixed_cv_score(f.problem, make_categories(o), ptr<double>(h), ptr<double>(score), c).status;
  return cv_score(f.problem, ptr<double>(h), ptr<double>(score), c).status;
}

// LOWESS (lowess.h): x, y, fitted, weights are n doubles each.
Status lowess_js(uintptr_t x, uintptr_t y, int32_t n, double frac, int32_t iterations, double delta, int32_t threads,
                 uintptr_t fitted, uintptr_t weights) {
  const LowessOptions o{frac, iterations, delta, threads};
  return lowess(ptr<const double>(x), ptr<const double>(y), n, o, ptr<double>(fitted), ptr<double>(weights));
}

// The plug-in bandwidth (plugin.h) with dpill's defaults: x, y are n doubles each. h and the detail are NaN where
// the status is not Ok; issue says why for BadArgument on usable arguments.
struct PluginResult {
  Status status = Status::Ok;
  PluginIssue issue = PluginIssue::None;
  double h = 0, n = 0;
  int32_t blocks = 0, blocksMax = 0;
  double sigma2 = 0, theta22 = 0, sigma2Quartic = 0, theta24Quartic = 0, gamma = 0, lambda = 0;
};

PluginResult plugin_bandwidth_js(uintptr_t x, uintptr_t y, int32_t n) {
  PluginDetail d;
  PluginResult r;
  r.h = std::numeric_limits<double>::quiet_NaN();
  r.status = plugin_bandwidth(ptr<const double>(x), ptr<const double>(y), n, PluginOptions{}, &r.h, &d);
  r.issue = d.issue;
  r.n = double(d.n);
  r.blocks = d.blocks;
  r.blocksMax = d.blocks_max;
  r.sigma2 = d.sigma2;
  r.theta22 = d.theta22;
  r.sigma2Quartic = d.sigma2_quartic;
  r.theta24Quartic = d.theta24_quartic;
  r.gamma = d.gamma;
  r.lambda = d.lambda;
  return r;
}

}  // namespace

EMSCRIPTEN_BINDINGS(regression) {
  using namespace emscripten;
  value_object<GridPlanJs>("GridPlan").field("nodes", &GridPlanJs::nodes).field("reason", &GridPlanJs::reason);
  value_object<GridModelCounts>("GridModelCounts")
      .field("binnings", &GridModelCounts::binnings)
      .field("convolutions", &GridModelCounts::convolutions)
      .field("sorts", &GridModelCounts::sorts)
      .field("keysRead", &GridModelCounts::keysRead);
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
  function("_ruleOfThumb", &rule_of_thumb_js);
  function("_medianSpacing", &median_spacing_js);
  function("_selectCv", &select_cv_js);
  function("_cvSearchCreate", &cv_search_create);
  function("_cvSearchFree", &cv_search_free);
  function("_selectCvGradient", &select_cv_gradient_js);
  function("_cvScore", &cv_score_js);
  function("_localFit", &local_fit_js);
  function("_localGradient", &local_gradient_js);
  function("_kthNeighbourDistances", &kth_neighbour_distances_js);
  function("_fitSummary", &fit_summary_js);
  function("_gridNodes", &grid_nodes_js);
  function("_gridModelCreate", &grid_model_create);
  function("_gridModelFit", &grid_model_fit_js);
  function("_gridModelFree", &grid_model_free);
  function("_gridModelGradient", &grid_model_gradient_js);
  function("_gridModelCounts", &grid_model_counts);
  function("_gridModelSummary", &grid_model_summary_js);
  function("_lowess", &lowess_js);
  enum_<PluginIssue>("PluginIssue")
      .value("none", PluginIssue::None)
      .value("too-few-points", PluginIssue::TooFewPoints)
      .value("too-few-distinct", PluginIssue::TooFewDistinct)
      .value("exact-quartic", PluginIssue::ExactQuartic)
      .value("flat-quartic", PluginIssue::FlatQuartic)
      .value("sparse-pilot", PluginIssue::SparsePilot)
      .value("no-curvature", PluginIssue::NoCurvature)
      .value("no-variance", PluginIssue::NoVariance);
  value_object<PluginResult>("PluginResult")
      .field("status", &PluginResult::status)
      .field("issue", &PluginResult::issue)
      .field("h", &PluginResult::h)
      .field("n", &PluginResult::n)
      .field("blocks", &PluginResult::blocks)
      .field("blocksMax", &PluginResult::blocksMax)
      .field("sigma2", &PluginResult::sigma2)
      .field("theta22", &PluginResult::theta22)
      .field("sigma2Quartic", &PluginResult::sigma2Quartic)
      .field("theta24Quartic", &PluginResult::theta24Quartic)
      .field("gamma", &PluginResult::gamma)
      .field("lambda", &PluginResult::lambda);
  function("_pluginBandwidth", &plugin_bandwidth_js);
  function("_pluginKernelFactor", &plugin_kernel_factor);
}
