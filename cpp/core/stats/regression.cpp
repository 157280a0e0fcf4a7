#include "stats/regression.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>

#include "methods/grid/grid.h"
#include "methods/plan.h"
#include "engine/online_softmax.h"
#include "engine/key_tile.h"
#include "stats/cv_planar.h"
#include "stats/summary_parts.h"

namespace ka {
namespace summary_parts {

KA_COLD SampleFit::SampleFit(int64_t n_, int64_t width_, bool in_double)
    : n(n_), width(width_), mean(n * width), mean64(in_double ? n * width : 0), sum_sq(n), self(n), guarded(n) {
  out = FitOut{Matrix{mean.get(), n, width, width}, sum_sq.get(), self.get()};
  out.guarded = guarded.get();
  if (in_double) out.mean_double = mean64.get();
  if (ok()) std::fill(guarded.get(), guarded.get() + n, uint8_t(0));
}

KA_COLD Resolver::Resolver(ConstMatrix y, int64_t np)
    : y_lo(y.cols), y_hi(y.cols), solve(np * np + np * y.cols + np + y.cols) {
  if (!ok()) return;
  rows = ExactRowScratch{solve.get(), solve.get() + np * np, solve.get() + np * np + np * y.cols};
  exact = solve.get() + np * np + np * y.cols + np;
  std::fill(y_lo.get(), y_lo.get() + y.cols, std::numeric_limits<double>::infinity());
  std::fill(y_hi.get(), y_hi.get() + y.cols, -std::numeric_limits<double>::infinity());
  for (int64_t i = 0; i < y.rows; ++i)
    for (int64_t c = 0; c < y.cols; ++c) {
      y_lo.get()[c] = std::min(y_lo.get()[c], double(y.row(i)[c]));
      y_hi.get()[c] = std::max(y_hi.get()[c], double(y.row(i)[c]));
    }
}

KA_COLD void resolve_guarded(const Problem& p, int degree, const float* omega, int64_t row, int64_t own, int64_t at,
                             bool sorted, Resolver& r, SampleFit& s, FitSummary& counts, const TaylorRows* taylor) {
  double self = 0;
  int solved = taylor ? taylor->row(row, r.rows, r.exact, &self) : -1;  // −1: not by the expansion
  if (solved < 0) solved = exact_local_row(p, degree, omega, row, r.rows, r.exact, &self, sorted, own);
  if (!solved) {
    ++counts.guard_changed;
    ++counts.singular;
    return;
  }
  bool moved = false;
  for (int64_t c = 0; c < s.width; ++c) {
    moved |= !(std::fabs(r.exact[c] - s.fitted(at, c)) <= kGuardChange * (r.y_hi.get()[c] - r.y_lo.get()[c]));
    s.mean.get()[at * s.width + c] = mean_to_float(r.exact[c]);
    if (s.out.mean_double) s.out.mean_double[at * s.width + c] = r.exact[c];
  }
  counts.guard_changed += moved;
  s.self.get()[at] = self;
}

KA_COLD FitSummary sum_up(ConstMatrix y, const float* omega, const SampleFit& f, FitSummary s, double* column_sigma2) {
  const int64_t n = f.n, width = f.width;
  if (column_sigma2) std::fill(column_sigma2, column_sigma2 + width, 0.0);
  double weight_total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double w = omega ? omega[i] : 1.0;
    weight_total += w;
    s.observations += w > 0;
  }
  const double norm = weight_total > 0 ? double(s.observations) / weight_total : 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double w = omega ? omega[i] : 1.0;
    if (!(w > 0)) continue;  // not an observation
    if (std::isnan(f.sum_sq.get()[i])) {
      ++s.empty_rows;
      continue;
    }
    for (int64_t c = 0; c < width; ++c) {
      const double e = double(y.row(i)[c]) - f.fitted(i, c);
      s.rss += w * norm * e * e;
      if (column_sigma2) column_sigma2[c] += w * norm * e * e;
    }
    s.trace += f.self.get()[i];
    s.trace_sq += f.sum_sq.get()[i];
  }
  const double dof = std::max(1.0, double(s.observations) - 2 * s.trace + s.trace_sq);
  s.sigma2 = s.rss / (double(width) * dof);
  if (column_sigma2)
    for (int64_t c = 0; c < width; ++c) column_sigma2[c] /= dof;
  return s;
}

}  // namespace summary_parts

KA_COLD Result summarize_fit(const Fit& f, FitSummary* out, double* column_sigma2, double grid_tolerance,
                             bool in_double, bool criterion_only) {
  using namespace summary_parts;
  const Problem& p = f.problem;
  const int64_t n = p.queries.rows, width = p.values.cols;
  if (p.keys.rows != n || p.keys.cols != p.queries.cols) return {Status::BadShape};
  const int64_t nodes = plan_grid_nodes(p.keys, p.kernel.kind, p.kernel.bandwidth, grid_tolerance);
  SampleFit fit(n, width, in_double && nodes == 0);
  if (!fit.ok()) return {Status::OutOfMemory};
  Fit g = f;
  g.problem.masks = {};
  g.problem.empty = EmptyPolicy::NaN;
  // 2-D exact fits in float32 run on the sample in cells (cv_planar.h): each block of 64 points visits the keys in
  // reach in both coordinates, not every key.
  std::unique_ptr<PlanarSample> cells;
  if (nodes == 0 && p.queries.cols == 2 && !fit.out.mean_double && !p.masks.any() && !f.query_scale && !f.query_keys &&
      n > 2 * kKeyTile) {
    cells.reset(new (std::nothrow) PlanarSample(g.problem, f.observation_weights));
    if (cells && !cells->ok()) cells.reset();
  }
  const Result r = nodes > 0                                               ? grid_local_fit(g, nodes, fit.out)
                   : cells && PlanarSample::sweep_suits(g, fit.out, false) ? cells->sweep_fit(g, fit.out, false)
                   : cells                                                 ? cells->fit(g, fit.out, false)
                                                                           : local_fit(g, fit.out);
  if (r.status != Status::Ok) return r;
  // Guarded observations: the textbook fit and self weight replace the guard's (see regression.h), and the change
  // is measured against the range of each column of y.
  Resolver resolver(p.values, design_columns(f.estimator, p.queries.cols));
  if (!resolver.ok()) return {Status::OutOfMemory};
  FitSummary counts;
  const int64_t guarded = std::count(fit.guarded.get(), fit.guarded.get() + n, uint8_t(1));
  const bool sorted = guarded > 0 && sorted_by_first_coordinate(p.keys);
  // Many guarded rows of a wide 2-D Gaussian fit: from one expansion of the weights, where it costs less (as
  // cv_score's leave-one-out rows).
  const std::unique_ptr<TaylorRows> taylor =
      f.query_scale || f.query_keys
          ? nullptr
          : taylor_rows_for(g.problem, f.observation_weights, degree_of(f.estimator), guarded);
  for (int64_t i = 0; i < n && !(criterion_only && counts.singular); ++i)
    if (fit.guarded.get()[i])
      resolve_guarded(g.problem, degree_of(f.estimator), f.observation_weights, i, i, i, sorted, resolver, fit, counts,
                      taylor.get());
  *out = sum_up(p.values, f.observation_weights, fit, counts, column_sigma2);
  return {};
}

double aicc(const FitSummary& s, int64_t width) {
  const double nu = s.trace, m = double(s.observations);
  if (!(nu + 2 < m) || std::isnan(s.rss)) return std::numeric_limits<double>::infinity();
  return std::log(s.rss / (m * double(width))) + (1 + nu / m) / (1 - (nu + 2) / m);
}

}  // namespace ka
