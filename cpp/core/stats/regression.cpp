#include "stats/regression.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "methods/grid/grid.h"
#include "methods/plan.h"
#include "base/scratch.h"
#include "engine/local_solve.h"
#include "engine/online_softmax.h"

namespace ka {

KA_COLD Result summarize_fit(const Fit& f, FitSummary* out, double* column_sigma2, double grid_tolerance,
                             bool in_double) {
  const Problem& p = f.problem;
  const int64_t n = p.queries.rows, width = p.values.cols;
  if (p.keys.rows != n || p.keys.cols != p.queries.cols) return {Status::BadShape};
  Scratch<float> mean(n * width);
  Scratch<double> sum_sq(n), self(n);
  Scratch<uint8_t> guarded(n);
  if (!mean.ok() || !sum_sq.ok() || !self.ok() || !guarded.ok()) return {Status::OutOfMemory};
  std::fill(guarded.get(), guarded.get() + n, uint8_t(0));
  Fit g = f;
  g.problem.masks = {};
  g.problem.empty = EmptyPolicy::NaN;
  FitOut fit{Matrix{mean.get(), n, width, width}, sum_sq.get(), self.get()};
  fit.guarded = guarded.get();
  const int64_t nodes = plan_grid_nodes(p.keys, p.kernel.kind, p.kernel.bandwidth, grid_tolerance);
  Scratch<double> mean64(in_double && nodes == 0 ? n * width : 0);
  if (!mean64.ok()) return {Status::OutOfMemory};
  if (in_double && nodes == 0) fit.mean_double = mean64.get();
  const auto fitted = [&](int64_t i, int64_t c) {
    return fit.mean_double ? fit.mean_double[i * width + c] : double(mean.get()[i * width + c]);
  };
  const Result r = nodes > 0 ? grid_local_fit(g, nodes, fit) : local_fit(g, fit);
  if (r.status != Status::Ok) return r;
  FitSummary s;
  // Guarded observations: the textbook fit and self weight replace the guard's (see regression.h), and the change
  // is measured against the range of each column of y.
  const int64_t np = design_columns(f.estimator, p.queries.cols);
  Scratch<double> solve(np * np + np * width + np + width), y_lo(width), y_hi(width);
  if (!solve.ok() || !y_lo.ok() || !y_hi.ok()) return {Status::OutOfMemory};
  const ExactRowScratch rows{solve.get(), solve.get() + np * np, solve.get() + np * np + np * width};
  double* exact = solve.get() + np * np + np * width + np;
  bool any_guarded = false;
  for (int64_t i = 0; i < n && !any_guarded; ++i) any_guarded = guarded.get()[i] != 0;
  if (any_guarded) {
    std::fill(y_lo.get(), y_lo.get() + width, std::numeric_limits<double>::infinity());
    std::fill(y_hi.get(), y_hi.get() + width, -std::numeric_limits<double>::infinity());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < width; ++c) {
        y_lo.get()[c] = std::min(y_lo.get()[c], double(p.values.row(i)[c]));
        y_hi.get()[c] = std::max(y_hi.get()[c], double(p.values.row(i)[c]));
      }
    for (int64_t i = 0; i < n; ++i) {
      if (!guarded.get()[i]) continue;
      double own = 0;
      if (!exact_local_row(g.problem, degree_of(f.estimator), f.observation_weights, i, rows, exact, &own)) {
        ++s.guard_changed;
        ++s.singular;
        continue;
      }
      bool moved = false;
      for (int64_t c = 0; c < width; ++c) {
        moved |= !(std::fabs(exact[c] - fitted(i, c)) <= kGuardChange * (y_hi.get()[c] - y_lo.get()[c]));
        mean.get()[i * width + c] = mean_to_float(exact[c]);
        if (fit.mean_double) fit.mean_double[i * width + c] = exact[c];
      }
      s.guard_changed += moved;
      self.get()[i] = own;
    }
  }
  if (column_sigma2) std::fill(column_sigma2, column_sigma2 + width, 0.0);
  double weight_total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double omega = f.observation_weights ? f.observation_weights[i] : 1.0;
    weight_total += omega;
    s.observations += omega > 0;
  }
  const double norm = weight_total > 0 ? double(s.observations) / weight_total : 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double omega = f.observation_weights ? f.observation_weights[i] : 1.0;
    if (!(omega > 0)) continue;  // not an observation
    if (std::isnan(sum_sq.get()[i])) {
      ++s.empty_rows;
      continue;
    }
    for (int64_t c = 0; c < width; ++c) {
      const double e = double(p.values.row(i)[c]) - fitted(i, c);
      s.rss += omega * norm * e * e;
      if (column_sigma2) column_sigma2[c] += omega * norm * e * e;
    }
    s.trace += self.get()[i];
    s.trace_sq += sum_sq.get()[i];
  }
  const double dof = std::max(1.0, double(s.observations) - 2 * s.trace + s.trace_sq);
  s.sigma2 = s.rss / (double(width) * dof);
  if (column_sigma2)
    for (int64_t c = 0; c < width; ++c) column_sigma2[c] /= dof;
  *out = s;
  return {};
}

double aicc(const FitSummary& s, int64_t width) {
  const double nu = s.trace, m = double(s.observations);
  if (!(nu + 2 < m) || std::isnan(s.rss)) return std::numeric_limits<double>::infinity();
  return std::log(s.rss / (m * double(width))) + (1 + nu / m) / (1 - (nu + 2) / m);
}

}  // namespace ka
