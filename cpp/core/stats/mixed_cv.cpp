// The criterion of a mixed regression's bandwidths (h, λ): leave-one-out CV per group of held-out points, or AICc
// from the mixed summary (mixed.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

#include "base/rare.h"
#include "engine/key_reach.h"
#include "engine/local_solve.h"
#include "engine/neighbours.h"
#include "methods/grid/cv_mixed.h"
#include "stats/bandwidth_detail.h"
#include "stats/mixed.h"
#include "stats/mixed_detail.h"

namespace ka {
namespace mixed_detail {

using bandwidth_detail::float_bandwidth;
using bandwidth_detail::kInf;

// The sample sorted by its first continuous coordinate, with its levels and weights in the same order: key tiles are
// then compact in space, so local_fit skips the tiles far from each query. Scores are sums over points: the order
// changes only their rounding.
struct MixedCriterion::Sorted {
  Scratch<int64_t> order;
  Scratch<double> first;
  Scratch<float> x, y, weights, h;
  Scratch<int32_t> codes;
  Scratch<double> lambda;
  Problem problem;
  Categories categories;
  Criterion criterion;
  // Leave-one-out's groups, made by the first evaluation and kept: the grouping depends on the levels alone, and the
  // group fits read h and λ through the pointers above.
  std::unique_ptr<GroupedFit> groups;
  // Leave-one-out with one continuous column and a grid tolerance (the plan's choice): the grids, made by the first
  // evaluation, which score the bandwidths they serve (cv_mixed.h); the others run exactly.
  std::unique_ptr<MixedGridCv> grid;

  KA_COLD Sorted(const Problem& p, const Categories& c, const Criterion& crit)
      : order(p.keys.rows),
        first(p.keys.rows),
        x(p.keys.rows * p.keys.cols),
        y(p.values.rows * p.values.cols),
        weights(crit.observation_weights ? p.keys.rows : 0),
        h(p.keys.cols),
        codes(p.keys.rows * c.count),
        lambda(c.count),
        problem(p),
        categories(c),
        criterion(crit) {
    if (!ok()) return;
    const int64_t n = p.keys.rows, dims = p.keys.cols, width = p.values.cols;
    int64_t* idx = order.get();
    for (int64_t i = 0; i < n; ++i) first.get()[i] = double(p.keys.row(i)[0]);
    order_by(first.get(), idx, n);
    for (int64_t i = 0; i < n; ++i) {
      std::copy(p.keys.row(idx[i]), p.keys.row(idx[i]) + dims, x.get() + i * dims);
      std::copy(p.values.row(idx[i]), p.values.row(idx[i]) + width, y.get() + i * width);
      std::copy(c.keys + idx[i] * c.count, c.keys + (idx[i] + 1) * c.count, codes.get() + i * c.count);
      if (crit.observation_weights) weights.get()[i] = crit.observation_weights[idx[i]];
    }
    problem.queries = problem.keys = {x.get(), n, dims, dims};
    problem.values = {y.get(), n, width, width};
    problem.kernel.bandwidth = h.get();
    problem.masks = {};
    problem.empty = EmptyPolicy::NaN;
    categories.keys = categories.queries = codes.get();
    categories.lambda = lambda.get();
    if (crit.observation_weights) criterion.observation_weights = weights.get();
  }
  bool ok() const {
    return order.ok() && first.ok() && x.ok() && y.ok() && weights.ok() && h.ok() && codes.ok() && lambda.ok();
  }
};

KA_COLD MixedCriterion::MixedCriterion(const Problem& p, const Categories& c, const Criterion& criterion) {
  const int64_t n = p.queries.rows;
  if (p.heads != 1 || p.keys.rows != n || p.keys.cols != p.queries.cols || c.count < 1 || criterion.exclude != 0 ||
      check_categories(c, n, n, false) != Status::Ok) {
    status_ = Status::BadArgument;
    return;
  }
  sorted_.reset(new (std::nothrow) Sorted(p, c, criterion));
  if (!sorted_ || !sorted_->ok()) status_ = Status::OutOfMemory;
}

MixedCriterion::~MixedCriterion() = default;

namespace {

// Leave-one-out CV of the sorted sample at its current bandwidths and λ (mixed.h), over its groups (made with the
// leave-one-out mask).
KA_COLD Result leave_one_out(const Problem& q, GroupedFit& groups, const Criterion& criterion, double* score) {
  const int64_t n = q.queries.rows, dims = q.queries.cols, width = q.values.cols;
  if (groups.status() != Status::Ok) return {groups.status()};
  const bool linear = criterion.estimator != Estimator::NadarayaWatson;  // the guard acts on degrees 1 and 2
  const bool in_double = n <= bandwidth_detail::kDoubleCriterionRows;
  const int64_t most = groups.largest(), np = design_columns(criterion.estimator, dims);
  Scratch<float> fit(most * width);
  Scratch<double> fit64(in_double ? most * width : 0);
  ExactRowWork work(np, width);
  Scratch<uint8_t> guarded(linear ? most : 0);
  if (!fit.ok() || !fit64.ok() || !work.ok() || !guarded.ok()) return {Status::OutOfMemory};
  const ExactRowScratch& rows = work.rows;
  double* exact = work.mean;
  // The sample is sorted by its first coordinate (Sorted): a guarded row's solve reads only the keys in its reach.
  const bool sorted = sorted_by_first_coordinate(q.keys);
  double sum = 0, total = 0;
  for (int64_t g = 0; g < groups.count(); ++g) {
    const Fit& sub = groups.prepare(g);
    const int64_t size = groups.size(g);
    FitOut into{Matrix{fit.get(), size, width, width}};
    into.guarded = linear ? guarded.get() : nullptr;
    if (in_double) into.mean_double = fit64.get();
    if (const Result r = local_fit(sub, into); r.status != Status::Ok) return r;
    const int64_t* members = groups.members(g);
    for (int64_t r = 0; r < size; ++r) {
      const int64_t i = members[r];
      const double omega = criterion.observation_weights ? criterion.observation_weights[i] : 1.0;
      total += omega;
      // The textbook criterion where the guard acted (cv_score's rule, bandwidth.h): the float64 solve on the
      // group's problem, +inf where that design is singular.
      const bool textbook = linear && guarded.get()[r] && omega > 0;
      if (textbook && !exact_local_row(sub.problem, degree_of(criterion.estimator), sub.observation_weights, r, rows,
                                       exact, nullptr, sorted)) {
        *score = kInf;
        return {};
      }
      for (int64_t col = 0; col < width; ++col) {
        const double held = in_double ? fit64.get()[r * width + col] : double(fit.get()[r * width + col]);
        const double e = double(q.values.row(i)[col]) - (textbook ? exact[col] : held);
        if (omega > 0) sum += omega * e * e;  // a zero-weight point does not count, even when its fit is empty
      }
    }
  }
  *score = std::isnan(sum) || !(total > 0) ? kInf : sum / total;
  return {};
}

}  // namespace

KA_COLD Result MixedCriterion::score(const double* bw, double* out) {
  if (status_ != Status::Ok) return {status_};
  Sorted& s = *sorted_;
  const int64_t dims = s.problem.queries.cols;
  for (int64_t d = 0; d < dims; ++d)
    if (!float_bandwidth(bw[d], s.h.get() + d)) {
      *out = kInf;
      return {};
    }
  for (int32_t d = 0; d < s.categories.count; ++d) {
    const double lambda = bw[dims + d];
    if (!(lambda >= 0 && lambda <= lambda_max(s.categories.kernels[d], s.categories.levels[d]))) {
      *out = kInf;
      return {};
    }
    s.lambda.get()[d] = lambda;
  }
  if (s.criterion.score == Score::LeaveOneOut && s.criterion.grid_tolerance > 0 && dims == 1) {
    if (!s.grid) {
      s.grid.reset(new (std::nothrow)
                       MixedGridCv(Fit{s.problem, s.criterion.estimator, s.criterion.observation_weights}, s.categories,
                                   s.criterion.grid_tolerance));
      if (!s.grid) return {Status::OutOfMemory};
    }
    bool served = false;
    if (const Result r = s.grid->score(s.h.get()[0], s.lambda.get(), out, &served); r.status != Status::Ok || served)
      return r;
  }
  if (s.criterion.score == Score::LeaveOneOut) {
    if (!s.groups) {
      Fit f{s.problem, s.criterion.estimator, s.criterion.observation_weights};
      f.problem.masks.leave_one_out = true;
      s.groups.reset(new (std::nothrow) GroupedFit(f, s.categories));
      if (!s.groups) return {Status::OutOfMemory};
    }
    return leave_one_out(s.problem, *s.groups, s.criterion, out);
  }
  FitSummary summary;
  const Fit f{s.problem, s.criterion.estimator, s.criterion.observation_weights};
  const int64_t n = s.problem.queries.rows;
  const Result r = mixed_summary(f, s.categories, &summary, nullptr, n <= bandwidth_detail::kDoubleCriterionRows);
  if (r.status != Status::Ok) return r;
  // A design singular even in float64 at an observation is never rewarded (bandwidth.h).
  *out = summary.empty_rows || summary.singular ? kInf : aicc(summary, s.problem.values.cols);
  return {};
}

}  // namespace mixed_detail

KA_COLD Result mixed_cv_score(const Problem& p, const Categories& c, const double* bw, double* score,
                              const Criterion& criterion) {
  mixed_detail::MixedCriterion cv(p, c, criterion);
  return cv.score(bw, score);
}

}  // namespace ka
