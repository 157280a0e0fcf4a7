#include "stats/regression.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "methods/grid/grid.h"
#include "methods/plan.h"
#include "base/scratch.h"

namespace ka {

Result summarize_fit(const Fit& f, FitSummary* out, double* column_sigma2, double grid_tolerance) {
  const Problem& p = f.problem;
  const int64_t n = p.queries.rows, width = p.values.cols;
  if (p.keys.rows != n || p.keys.cols != p.queries.cols) return {Status::BadShape};
  Scratch<float> mean(n * width);
  Scratch<double> sum_sq(n), self(n);
  if (!mean.ok() || !sum_sq.ok() || !self.ok()) return {Status::OutOfMemory};
  Fit g = f;
  g.problem.masks = {};
  g.problem.empty = EmptyPolicy::NaN;
  const FitOut fit{Matrix{mean.get(), n, width, width}, sum_sq.get(), self.get()};
  const int64_t nodes = plan_grid_nodes(p.keys, p.kernel.kind, p.kernel.bandwidth, grid_tolerance);
  const Result r = nodes > 0 ? grid_local_fit(g, nodes, fit) : local_fit(g, fit);
  if (r.status != Status::Ok) return r;
  FitSummary s;
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
      const double e = double(p.values.row(i)[c]) - double(mean.get()[i * width + c]);
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
