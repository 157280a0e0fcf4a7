// R's loess() fit and predict.loess() (loess.h): the iterations of simpleLoess, its statistics and residual scale,
// and predictions with standard errors (predLoess).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "base/scratch.h"
#include "stats/loess/direct.h"
#include "stats/loess/loess.h"
#include "stats/loess/robustness.h"
#include "stats/loess/standard_error.h"
#include "stats/loess/statistics.h"
#include "stats/loess/surface.h"

namespace ka {
namespace loess {

struct ModelState {
  LoessOptions options;
  Sample sample;
  FitSpec spec;
  KdTree tree;
  std::vector<double> values;                       // interpolate: the last fit's vertex values and slopes
  std::vector<VertexOperator> prior_ops;            // interpolate: the vertex operators with the prior weights
  std::vector<double> robust, fitted, fit_weights;  // working order; fit_weights = prior · robust of the last fit
  LoessSummary summary{};
  LoessProblem problem = LoessProblem::None;
  bool pseudo_inverse = false;
  std::unique_ptr<InterpolatedVariance> variance;
};

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool valid(const LoessOptions& o) {
  return o.degree >= 0 && o.degree <= 2 && o.span > 0 && std::isfinite(o.span) && o.cell > 0 && std::isfinite(o.cell) &&
         o.iterations >= 1 && int32_t(o.family) >= 0 && int32_t(o.family) <= 1 && int32_t(o.surface) >= 0 &&
         int32_t(o.surface) <= 1 && int32_t(o.statistics) >= 0 && int32_t(o.statistics) <= 2 &&
         int32_t(o.trace_hat) >= 0 && int32_t(o.trace_hat) <= 1 && o.threads >= 1;
}

// One fit of the surface to y with weights rw: the values at the data (working order). With `first`, also keeps
// the vertex operators (interpolate) and computes the statistics' trace and deltas into the summary.
Status fit_surface(ModelState& m, const double* y, const double* rw, bool first, double* fitted) {
  const Sample& s = m.sample;
  const LoessOptions& o = m.options;
  const bool exact = first && o.statistics == LoessStatistics::Exact;
  const bool approximate = first && o.statistics == LoessStatistics::Approximate;
  Scratch<double> L(exact ? s.n * s.n : 0);
  if (!L.ok()) return Status::OutOfMemory;
  LoessSummary& sum = m.summary;
  if (o.surface == LoessSurface::Interpolate) {
    std::vector<double>& values = m.values;
    values.assign(size_t(m.tree.vertex_count()) * size_t(s.dims + 1), 0.0);
    Status st =
        fit_vertices(s, m.tree, m.spec, y, rw, values.data(), first ? &m.prior_ops : nullptr, &m.pseudo_inverse);
    if (st != Status::Ok) return st;
    surface_at_data(s, m.tree, values.data(), m.spec.threads, fitted);
    if (approximate)
      sum.trace_hat = o.trace_hat == LoessTraceHat::Exact
                          ? interpolated_trace(s, m.tree, m.prior_ops, m.spec.degree, rw)
                          : approximate_trace(design_columns(s.dims, std::max(1, m.spec.degree)), s.dims, m.spec.span);
    if (exact && (st = interpolated_operator(s, m.tree, m.prior_ops, m.spec.degree, rw, L.get())) != Status::Ok)
      return st;
  } else {
    std::vector<double> diagonal(approximate ? size_t(s.n) : 0);
    DirectOutputs out;
    out.fit = fitted;
    out.diagonal = approximate ? diagonal.data() : nullptr;
    out.rows = exact ? L.get() : nullptr;
    const Status st = direct_fit(s, m.spec, y, rw, s.x.data(), s.n, &out);
    m.pseudo_inverse |= out.pseudo_inverse;
    if (st != Status::Ok) return st;
    if (approximate) {
      sum.trace_hat = 0;
      for (const double v : diagonal) sum.trace_hat += v;
    }
  }
  // R's tau: the columns of a degree-2 fit, d + 1 for degrees 0 and 1.
  const int32_t tau = design_columns(s.dims, std::max(1, m.spec.degree));
  if (approximate) approximate_deltas(sum.trace_hat, s.n, s.dims, tau, &sum.one_delta, &sum.two_delta);
  if (exact) return exact_statistics(L.get(), s.n, &sum.trace_hat, &sum.one_delta, &sum.two_delta);
  return Status::Ok;
}

Status run(ModelState& m) {
  const Sample& s = m.sample;
  const LoessOptions& o = m.options;
  const int64_t n = s.n;
  const int32_t iterations = o.family == LoessFamily::Gaussian ? 1 : o.iterations;
  if (o.surface == LoessSurface::Interpolate) {
    // R's fc: ⌊n·(span·cell)⌋ points at most per leaf.
    const Status st = build_kd_tree(s, int64_t(std::floor(double(n) * (o.span * o.cell))), &m.tree);
    if (st != Status::Ok) return st;
  }
  m.summary = {kNaN, kNaN, kNaN, kNaN, kNaN};
  m.robust.assign(size_t(n), 1.0);
  m.fitted.assign(size_t(n), 0.0);
  m.fit_weights = s.prior;
  std::vector<double> residuals(static_cast<size_t>(n));
  for (int32_t it = 0; it < iterations; ++it) {
    for (int64_t i = 0; i < n; ++i) m.fit_weights[size_t(i)] = s.prior[size_t(i)] * m.robust[size_t(i)];
    const Status st = fit_surface(m, s.y.data(), m.fit_weights.data(), it == 0, m.fitted.data());
    if (st != Status::Ok) return st;
    for (int64_t i = 0; i < n; ++i) residuals[size_t(i)] = s.y[size_t(i)] - m.fitted[size_t(i)];
    // The last fit's robustness weights stay those it used (R updates them before every fit but the first).
    if (it + 1 < iterations) robustness_weights(residuals.data(), n, m.robust.data());
  }
  if (o.statistics == LoessStatistics::None) return Status::Ok;
  double ss = 0;
  if (iterations > 1) {
    // R's residual scale for the symmetric family: the residuals of a gaussian fit to the pseudovalues.
    std::vector<double> pseudo(static_cast<size_t>(n)), refit(static_cast<size_t>(n));
    pseudovalues(s.y.data(), m.fitted.data(), s.prior.data(), m.robust.data(), n, pseudo.data());
    const std::vector<double> values = m.values;  // the model keeps the last fit's vertex values
    const Status st = fit_surface(m, pseudo.data(), s.prior.data(), false, refit.data());
    m.values = values;
    if (st != Status::Ok) return st;
    for (int64_t i = 0; i < n; ++i)
      ss += s.prior[size_t(i)] * (pseudo[size_t(i)] - refit[size_t(i)]) * (pseudo[size_t(i)] - refit[size_t(i)]);
  } else {
    for (int64_t i = 0; i < n; ++i) ss += s.prior[size_t(i)] * residuals[size_t(i)] * residuals[size_t(i)];
  }
  LoessSummary& sum = m.summary;
  sum.enp = sum.one_delta + 2 * sum.trace_hat - double(n);
  sum.residual_scale = std::sqrt(ss / sum.one_delta);
  return Status::Ok;
}

}  // namespace
}  // namespace loess

using loess::ModelState;

LoessModel::LoessModel() : state_(new ModelState) {}
LoessModel::~LoessModel() = default;

Status LoessModel::fit(const double* x, const double* y, const double* weights, int64_t n,
                       const LoessOptions& options) {
  state_.reset(new ModelState);
  ModelState& m = *state_;
  m.options = options;
  if (!loess::valid(options)) return Status::BadArgument;
  Status st = loess::make_sample(x, y, weights, n, options.dims, options.normalize, &m.sample);
  if (st != Status::Ok) return st;
  m.spec.span = options.span;
  m.spec.degree = options.degree;
  m.spec.threads = options.threads;
  m.spec.q = std::min<int64_t>(n, int64_t(std::floor(double(n) * options.span)));
  if (m.spec.q < 1 || loess::design_columns(options.dims, options.degree) > m.spec.q - 1) {
    m.problem = LoessProblem::SpanTooSmall;
    return Status::BadArgument;
  }
  st = loess::run(m);
  if (st == Status::BadArgument) m.problem = LoessProblem::ZeroWidth;
  return st;
}

LoessProblem LoessModel::problem() const { return state_->problem; }
int64_t LoessModel::size() const { return state_->sample.n; }
int32_t LoessModel::dims() const { return state_->sample.dims; }
const LoessSummary& LoessModel::summary() const { return state_->summary; }
bool LoessModel::pseudo_inverse() const { return state_->pseudo_inverse; }

void LoessModel::fitted(double* out) const {
  const ModelState& m = *state_;
  for (int64_t i = 0; i < m.sample.n; ++i) out[m.sample.input[size_t(i)]] = m.fitted[size_t(i)];
}

void LoessModel::residuals(double* out) const {
  const ModelState& m = *state_;
  for (int64_t i = 0; i < m.sample.n; ++i) out[m.sample.input[size_t(i)]] = m.sample.y[size_t(i)] - m.fitted[size_t(i)];
}

void LoessModel::robustness_weights(double* out) const {
  const ModelState& m = *state_;
  for (int64_t i = 0; i < m.sample.n; ++i) out[m.sample.input[size_t(i)]] = m.robust[size_t(i)];
}

Status LoessModel::predict(const double* q, int64_t m_count, double* fit, double* se) {
  ModelState& m = *state_;
  const loess::Sample& s = m.sample;
  const int32_t d = s.dims;
  if (se && m.options.statistics == LoessStatistics::None) return Status::BadArgument;
  std::vector<double> z(size_t(m_count) * size_t(d));
  for (int64_t i = 0; i < m_count; ++i)
    for (int32_t j = 0; j < d; ++j) {
      if (!std::isfinite(q[i * d + j])) return Status::BadArgument;
      z[size_t(i * d + j)] = q[i * d + j] / s.divisor[size_t(j)];
    }
  const double scale = m.summary.residual_scale;
  if (m.options.surface == LoessSurface::Direct) {
    std::vector<double> variance(se ? size_t(m_count) : 0);
    loess::DirectOutputs out;
    out.fit = fit;
    out.variance = se ? variance.data() : nullptr;
    out.prior = s.prior.data();
    const Status st = loess::direct_fit(s, m.spec, s.y.data(), m.fit_weights.data(), z.data(), m_count, &out);
    if (st != Status::Ok) return st;
    if (se)
      for (int64_t i = 0; i < m_count; ++i) se[i] = scale * std::sqrt(variance[size_t(i)]);
    return Status::Ok;
  }
  if (se && !m.variance) m.variance.reset(new loess::InterpolatedVariance(s, m.tree, m.prior_ops, m.spec.degree));
  loess::BlendTerm terms[loess::kMaxBlendTerms];
  for (int64_t i = 0; i < m_count; ++i) {
    const double* zi = z.data() + i * d;
    bool inside = true;
    for (int32_t j = 0; j < d; ++j) inside &= zi[j] >= s.lower[size_t(j)] && zi[j] <= s.upper[size_t(j)];
    if (!inside) {
      fit[i] = loess::kNaN;
      if (se) se[i] = loess::kNaN;
      continue;
    }
    const int count = loess::blend_terms(m.tree, zi, terms);
    fit[i] = loess::blend_value(terms, count, m.values.data(), d);
    if (se) se[i] = scale * std::sqrt(m.variance->at(terms, count));
  }
  return Status::Ok;
}

}  // namespace ka
