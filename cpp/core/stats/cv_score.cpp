// Leave-one-out cross-validation and AICc of one bandwidth (Härdle 1990 §5.1).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>

#include "methods/plan.h"
#include "engine/neighbours.h"
#include "engine/local_solve.h"
#include "engine/taylor_rows.h"
#include "stats/regression.h"
#include "base/scratch.h"
#include "stats/bandwidth_detail.h"
#include "stats/cv_planar.h"
#include "stats/cv_window.h"

namespace ka {
namespace bandwidth_detail {

// The sample in the order of its first coordinate: key tiles are then compact in space, so local_fit skips the
// tiles far from each query. The scores are sums over points: the order changes only their rounding. With
// `sort` false, the sample as it is (the grid needs no order).
struct SortedSample {
  Scratch<int64_t> order;
  Scratch<double> first;  // the first coordinate, in the sample's order, to sort by
  Scratch<float> x, y, weights;
  Problem problem;
  Criterion criterion;
  bool ordered = false;  // sorted, and every first coordinate a number: rows can find their keys by bisection

  KA_COLD SortedSample(const Problem& p, const Criterion& c, bool sort)
      : order(sort ? p.keys.rows : 0),
        first(sort ? p.keys.rows : 0),
        x(sort ? p.keys.rows * p.keys.cols : 0),
        y(sort ? p.values.rows * p.values.cols : 0),
        weights(sort && c.observation_weights ? p.keys.rows : 0),
        problem(p),
        criterion(c) {
    if (!sort || !ok()) return;
    const int64_t n = p.keys.rows, dims = p.keys.cols, width = p.values.cols;
    int64_t* idx = order.get();
    for (int64_t i = 0; i < n; ++i) first.get()[i] = double(p.keys.row(i)[0]);  // exact: the floats' order
    order_by(first.get(), idx, n);
    ordered = std::none_of(first.get(), first.get() + n, [](double v) { return std::isnan(v); });
    for (int64_t i = 0; i < n; ++i) {
      std::copy(p.keys.row(idx[i]), p.keys.row(idx[i]) + dims, x.get() + i * dims);
      std::copy(p.values.row(idx[i]), p.values.row(idx[i]) + width, y.get() + i * width);
      if (c.observation_weights) weights.get()[i] = c.observation_weights[idx[i]];
    }
    problem.queries = problem.keys = {x.get(), n, dims, dims};
    problem.values = {y.get(), n, width, width};
    if (c.observation_weights) criterion.observation_weights = weights.get();
  }
  bool ok() const { return order.ok() && first.ok() && x.ok() && y.ok() && weights.ok(); }
};

}  // namespace bandwidth_detail

namespace {

using bandwidth_detail::kInf;
using bandwidth_detail::SortedSample;
using bandwidth_detail::window_cv;

// Blocked CV's band (bandwidth.h, Criterion::exclude) on a sample sorted by its first coordinate: for held-out
// point i, the keys j with |x_j1 − x_i1| <= r are the contiguous index range [first_i, last_i] (i among them).
struct ExcludedBand {
  Scratch<double> column;
  Scratch<int64_t> first, last;
  KA_COLD ExcludedBand(ConstMatrix x, double r)
      : column(r > 0 ? x.rows : 0), first(r > 0 ? x.rows : 0), last(r > 0 ? x.rows : 0) {
    if (!(r > 0) || !ok()) return;
    const int64_t n = x.rows;
    double* c = column.get();
    for (int64_t i = 0; i < n; ++i) c[i] = double(x.row(i)[0]);
    for (int64_t i = 0; i < n; ++i) {
      if (std::isnan(c[i])) {  // no order to search: the point alone (its NaN reaches the score anyway)
        first.get()[i] = last.get()[i] = i;
        continue;
      }
      first.get()[i] = std::lower_bound(c, c + n, c[i] - r) - c;
      last.get()[i] = std::upper_bound(c, c + n, c[i] + r) - c - 1;
    }
  }
  bool ok() const { return column.ok() && first.ok() && last.ok(); }
};

}  // namespace

namespace bandwidth_detail {

SearchSample::SearchSample() = default;
SearchSample::~SearchSample() = default;

KA_COLD const SortedSample* SearchSample::sorted(const Problem& p, const Criterion& c) {
  if (!sorted_) {
    sorted_.reset(new (std::nothrow) SortedSample(p, c, true));
    if (sorted_ && !sorted_->ok()) sorted_.reset();
  }
  return sorted_.get();
}

const float* SearchSample::ordered_first(const Problem& p, const Criterion& c) {
  const SortedSample* s = sorted(p, c);
  return s && s->ordered && p.keys.cols == 1 ? s->x.get() : nullptr;
}

KA_COLD const PlanarSample* SearchSample::planar(const Problem& p, const Criterion& c) {
  if (!planar_) {
    const SortedSample* s = sorted(p, c);
    if (!s) return nullptr;
    planar_.reset(new (std::nothrow) PlanarSample(s->problem, s->criterion.observation_weights));
    if (planar_ && !planar_->ok()) planar_.reset();
  }
  return planar_.get();
}

const SampleExtent& SearchSample::extent(const Problem& p) {
  if (!extent_made_) extent_ = SampleExtent(p.keys);
  extent_made_ = true;
  return extent_;
}

KA_COLD const Problem* SearchSample::sorted_problem(const Problem& p, const Criterion& c) {
  const SortedSample* s = sorted(p, c);
  return s ? &s->problem : nullptr;
}

bool float_bandwidth(double h, float* hf) {
  if (!(h > 0) || !(h <= double(std::numeric_limits<float>::max())) || !(float(h) > 0)) return false;
  *hf = float(h);
  return true;
}

KA_COLD GridCv search_grid(const Problem& p, const Criterion& criterion) {
  const bool aicc = criterion.score == Score::AICc;
  return GridCv(Fit{p, criterion.estimator, criterion.observation_weights},
                p.queries.cols == 1 ? criterion.grid_tolerance : 0.0, criterion.exclude, aicc);
}

}  // namespace bandwidth_detail

namespace {

using bandwidth_detail::float_bandwidth;

// grid_local_fit(loo, nodes, into) of the sample `loo` (leave-one-out, no other mask) fitted in the cells' order of
// `planar` (made from loo's sample), written back in loo's order (mean and guarded).
KA_COLD Result grid_fit_in_cells(const Fit& loo, const PlanarSample& planar, int64_t nodes, const FitOut& into) {
  const int64_t n = loo.problem.queries.rows, width = loo.problem.values.cols;
  Scratch<float> fit(n * width);
  Scratch<uint8_t> guarded(into.guarded ? n : 0);
  if (!fit.ok() || !guarded.ok()) return {Status::OutOfMemory};
  if (into.guarded) std::fill(guarded.get(), guarded.get() + n, uint8_t(0));
  const Problem cells = planar.cells(loo.problem);
  FitOut out{Matrix{fit.get(), n, width, width}};
  out.guarded = into.guarded ? guarded.get() : nullptr;
  // loo asks NaN of an empty row (cv_score_direct): no EmptyRow naming a cell row.
  if (const Result r = grid_local_fit(Fit{cells, loo.estimator, planar.cell_weights()}, nodes, out);
      r.status != Status::Ok)
    return r;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = planar.cell_of(i);
    std::copy(fit.get() + c * width, fit.get() + (c + 1) * width, into.mean.row(i));
    if (into.guarded) into.guarded[i] = guarded.get()[c];
  }
  return {};
}

// cv_score without GridCv: exactly, or (2-D, or a sample GridCv does not suit) by grid_local_fit per evaluation.
// `sample`, when given, supplies the sorted sample (a search's, sorted once). `planned`: a GridCv that suits the
// sample has already declined h (its plan found the exact score cheaper, or no grid within the tolerance), so it runs
// exactly.
KA_COLD Result cv_score_direct(const Problem& p, const double* h, double* score, const Criterion& criterion,
                               bandwidth_detail::SearchSample* sample, bool planned) {
  const int64_t n = p.queries.rows, dims = p.queries.cols, width = p.values.cols;
  if (p.heads != 1 || p.keys.rows != n || p.keys.cols != dims) return {Status::BadShape};
  Scratch<float> hf(dims), fit(n * width);
  if (!hf.ok() || !fit.ok()) return {Status::OutOfMemory};
  for (int64_t d = 0; d < dims; ++d)
    if (!float_bandwidth(h[d], hf.get() + d)) {
      *score = kInf;
      return {};
    }
  // Leave-one-out CV in 1-D or 2-D may run on a grid, which needs no sorting and takes no mask but its own
  // leave-one-out; everything else (blocked CV too) runs exactly, on the sample sorted by its first coordinate.
  const int64_t nodes = criterion.score == Score::LeaveOneOut && !p.masks.any() && !(criterion.exclude > 0) && !planned
                            ? plan_grid_cv_nodes(sample ? sample->extent(p) : SampleExtent(p.keys), p.kernel.kind,
                                                 criterion.estimator, hf.get(), criterion.grid_tolerance)
                            : 0;
  // A 2-D search's grid score fits the sample in cells (cv_planar.h), made once for the search: each point then reads
  // the moments of the nodes near the last one's, where in the sample's order each read nodes anywhere in the grid
  // (natively at 10⁶ points, h = 0.016: 0.45 s a score in the sample's order, 0.27 in cells). The bins then sum the
  // points in the cells' order, the score in the sorted sample's: the same to rounding.
  const bool grid_cells = nodes > 0 && dims == 2 && sample;
  const SortedSample* kept = (nodes == 0 || grid_cells) && sample ? sample->sorted(p, criterion) : nullptr;
  if ((nodes == 0 || grid_cells) && sample && !kept) return {Status::OutOfMemory};
  const SortedSample own(p, criterion, nodes == 0 && !kept);
  if (!own.ok()) return {Status::OutOfMemory};
  const SortedSample& sorted = kept ? *kept : own;
  Problem q = sorted.problem;
  q.kernel.bandwidth = hf.get();
  q.empty = EmptyPolicy::NaN;
  const Fit f{q, criterion.estimator, sorted.criterion.observation_weights};
  if (criterion.score == Score::AICc) {
    // 2-D (and 1-D where GridCv does not suit the sample) on the fit's grid where one serves h and costs less than
    // the exact fit (summarize_fit's plan: its ℓ_ii from the grid's moments, serve.cpp); exactly elsewhere.
    FitSummary s;
    const Result r = summarize_fit(f, &s, nullptr, planned ? 0.0 : criterion.grid_tolerance,
                                   n <= bandwidth_detail::kDoubleCriterionRows, true);
    if (r.status != Status::Ok) return r;
    // A design singular even in float64 at an observation is never rewarded (bandwidth.h).
    *score = s.empty_rows || s.singular ? kInf : aicc(s, width);
    return {};
  }
  q.masks.leave_one_out = true;
  const ExcludedBand band(q.keys, criterion.exclude);
  if (!band.ok()) return {Status::OutOfMemory};
  if (criterion.exclude > 0) {
    q.masks.band_first = band.first.get();
    q.masks.band_last = band.last.get();
  }
  // 1-D on sorted keys above the float64 criterion's size: the windowed criterion (cv_window.h) where few keys are in
  // reach of each row.
  if (nodes == 0 && dims == 1 && sorted.ordered && !p.masks.any() && n > bandwidth_detail::kDoubleCriterionRows &&
      window_cv(q, f.estimator, f.observation_weights, score))
    return {};
  const Fit loo{q, f.estimator, f.observation_weights};
  const bool linear = f.estimator != Estimator::NadarayaWatson;  // the guard acts on degrees 1 and 2
  Scratch<uint8_t> guarded(linear ? n : 0);
  if (!guarded.ok()) return {Status::OutOfMemory};
  std::fill(guarded.get(), guarded.get() + (linear ? n : 0), uint8_t(0));
  FitOut into{Matrix{fit.get(), n, width, width}};
  into.guarded = linear ? guarded.get() : nullptr;
  const bool in_double = nodes == 0 && n <= bandwidth_detail::kDoubleCriterionRows;
  Scratch<double> fit64(in_double ? n * width : 0);
  if (!fit64.ok()) return {Status::OutOfMemory};
  if (in_double) into.mean_double = fit64.get();
  // 2-D: the float32 pass block by block on the sample in cells (cv_planar.h), whose blocks visit the keys in reach
  // in both coordinates, not a strip along x₁; on the sample sorted by x₁ where the cells cannot be made (a
  // coordinate not finite, no memory).
  const bool cells = (nodes == 0 || grid_cells) && dims == 2 && !in_double && sorted.ordered &&
                     !(criterion.exclude > 0) && !p.masks.any();
  const PlanarSample* planar = cells && sample ? sample->planar(p, criterion) : nullptr;
  std::unique_ptr<PlanarSample> own_planar;
  if (cells && !sample) {
    own_planar.reset(new (std::nothrow) PlanarSample(q, f.observation_weights));
    if (own_planar && own_planar->ok()) planar = own_planar.get();
  }
  // 3-D and more, exactly: a few textbook rows first (spread_singular), which below the sample's spacing prove the
  // score +inf for the cost of a row each (at 10⁴ points in 3-D each such scan point's pass had taken 0.33 s in
  // WebAssembly: every row's shift lies beyond float32's range and is redone in double). 1-D and 2-D scans probe their
  // points by their neighbours (SingularProbe), and a small 1-D search's many cheap scores would pay for the rows.
  if (dims >= 3 && nodes == 0 && linear) {
    const int singular = bandwidth_detail::spread_singular(loo, sorted.ordered);
    if (singular < 0) return {Status::OutOfMemory};
    if (singular) {
      *score = kInf;
      return {};
    }
  }
  const Result r = nodes > 0 && planar                                    ? grid_fit_in_cells(loo, *planar, nodes, into)
                   : nodes > 0                                            ? grid_local_fit(loo, nodes, into)
                   : planar && PlanarSample::sweep_suits(loo, into, true) ? planar->sweep_fit(loo, into, true)
                   : planar                                               ? planar->fit(loo, into, true)
                                                                          : local_fit(loo, into);
  if (r.status != Status::Ok) return r;
  // The textbook criterion: where the guard changed a held-out point's solve, its fit comes from the float64
  // solve without the guard, and a design singular even there scores +inf, as a point with no neighbour does
  // (bandwidth.h).
  const int64_t np = design_columns(f.estimator, dims);
  ExactRowWork work(np, width);
  if (!work.ok()) return {Status::OutOfMemory};
  const ExactRowScratch& rows = work.rows;
  double* exact = work.mean;
  double sum = 0, total = 0;
  std::unique_ptr<PlanarSample::RowWork> row_work;  // made at the first guarded row
  // Many guarded rows of a wide 2-D Gaussian fit (each O(n) in double): from one expansion of the weights, where it
  // costs less (taylor_rows.h).
  int64_t textbook_rows = 0;
  for (int64_t i = 0; i < n && into.guarded; ++i)
    textbook_rows += guarded.get()[i] && !(f.observation_weights && !(f.observation_weights[i] > 0));
  const std::unique_ptr<TaylorRows> taylor =
      taylor_rows_for(q, f.observation_weights, degree_of(f.estimator), textbook_rows);
  for (int64_t i = 0; i < n; ++i) {
    const double omega = f.observation_weights ? f.observation_weights[i] : 1.0;
    total += omega;
    const bool textbook = into.guarded && guarded.get()[i] && omega > 0;
    int solved = textbook && taylor ? taylor->row(i, rows, exact) : -1;  // −1: not by the expansion
    if (textbook && solved < 0 && planar && !row_work) {
      row_work.reset(new (std::nothrow) PlanarSample::RowWork(n, width, f.observation_weights != nullptr));
      if (!row_work) return {Status::OutOfMemory};
    }
    if (solved < 0)
      solved = !textbook ? 1
               : planar  ? planar->textbook_row(loo, i, rows, exact, *row_work)
                        : int(exact_local_row(q, degree_of(f.estimator), f.observation_weights, i, rows, exact, nullptr,
                                              sorted.ordered));
    if (solved < 0) return {Status::OutOfMemory};
    if (solved == 0) {
      *score = kInf;
      return {};
    }
    for (int64_t c = 0; c < width; ++c) {
      const double held = into.mean_double ? into.mean_double[i * width + c] : double(fit.get()[i * width + c]);
      const double e = double(q.values.row(i)[c]) - (textbook ? exact[c] : held);
      if (omega > 0) sum += omega * e * e;  // a zero-weight point does not count, even when its fit is empty
    }
  }
  *score = std::isnan(sum) || !(total > 0) ? kInf : sum / total;
  return {};
}

}  // namespace

namespace bandwidth_detail {

KA_COLD int spread_singular(const Fit& loo, bool sorted) {
  const Problem& q = loo.problem;
  const int64_t n = q.queries.rows, width = q.values.cols, np = design_columns(loo.estimator, q.keys.cols);
  const int64_t probes = std::min(kSpreadProbes, n);
  // Weights the fit refuses (negative, NaN, infinite): no claim, so that the pass reports them.
  if (check_observation_weights(loo) != Status::Ok) return 0;
  ExactRowWork work(np, width);
  if (!work.ok()) return -1;
  for (int64_t k = 0; k < probes; ++k) {
    const int64_t i = (2 * k + 1) * n / (2 * probes);
    if (loo.observation_weights && !(loo.observation_weights[i] > 0)) continue;
    if (!exact_local_row(q, degree_of(loo.estimator), loo.observation_weights, i, work.rows, work.mean, nullptr,
                         sorted))
      return 1;
  }
  return 0;
}

KA_COLD Result cv_score_with(GridCv& grid, const Problem& p, const double* h, double* score, const Criterion& criterion,
                             SearchSample* sample) {
  float hf;
  if (grid.suits() && float_bandwidth(h[0], &hf)) {
    bool served = false;
    const Result r = grid.score(hf, score, &served);
    if (served || r.status != Status::Ok) return r;
  }
  return cv_score_direct(p, h, score, criterion, sample, grid.suits());
}

}  // namespace bandwidth_detail

using bandwidth_detail::cv_score_with;
using bandwidth_detail::search_grid;

KA_COLD Result cv_score(const Problem& p, const double* h, double* score, const Criterion& criterion) {
  if (!bandwidth_detail::exclude_ok(criterion)) return {Status::BadArgument};
  GridCv grid = search_grid(p, criterion);
  return cv_score_with(grid, p, h, score, criterion);
}

}  // namespace ka
