// Rules of thumb and cross-validated bandwidths (Silverman 1986 §3.4.2; Scott 1992 §6.3; Härdle 1990 §5.1).
#include "stats/bandwidth.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gradients/backward.h"
#include "methods/grid/grid.h"
#include "methods/plan.h"
#include "engine/local_solve.h"
#include "stats/lbfgs.h"
#include "stats/regression.h"
#include "base/scratch.h"

namespace ka {
namespace {

// The q-quantile of values[0, n) with linear interpolation between order statistics (numpy's default, R's
// type 7), by selection; reorders `values`.
double quantile(double* values, int64_t n, double q) {
  const double at = q * double(n - 1);
  const int64_t lo = int64_t(std::floor(at));
  std::nth_element(values, values + lo, values + n);  // O(n): a full sort took ~1 s of a 10⁷-point selection
  const double a = values[lo], b = lo + 1 < n ? *std::min_element(values + lo + 1, values + n) : a;
  return a + (at - double(lo)) * (b - a);
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// Brent's minimiser (Brent 1973, ch. 5) over [a, b]: parabolic steps through the three best points, golden-section
// steps when a parabola is untrustworthy, until the bracket is narrower than `tol`. On the smooth, nearly
// quadratic CV curve in log h it needs about half the evaluations of golden section alone. Returns the best x.
template <class F>
double brent(F&& f, double a, double b, double tol) {
  const double golden = 0.3819660112501051;  // 2 − φ
  double x = a + golden * (b - a), w = x, v = x;
  double fx = f(x), fw = fx, fv = fx;
  double step = 0, last_step = 0;
  while (b - a > tol) {
    const double mid = 0.5 * (a + b), eps = 0.25 * tol;
    bool parabolic = false;
    if (std::fabs(last_step) > eps) {
      // Vertex of the parabola through (x, fx), (w, fw), (v, fv).
      const double r = (x - w) * (fx - fv), q0 = (x - v) * (fx - fw);
      double p = (x - v) * q0 - (x - w) * r, q = 2 * (q0 - r);
      if (q > 0) p = -p;
      q = std::fabs(q);
      // Accept only a step that stays inside the bracket and shrinks faster than the one before last.
      if (std::fabs(p) < std::fabs(0.5 * q * last_step) && p > q * (a - x) && p < q * (b - x)) {
        last_step = step;
        step = p / q;
        parabolic = true;
        if (x + step - a < 2 * eps || b - (x + step) < 2 * eps) step = x < mid ? eps : -eps;
      }
    }
    if (!parabolic) {
      last_step = (x < mid ? b : a) - x;
      step = golden * last_step;
    }
    const double u = std::fabs(step) >= eps ? x + step : x + (step > 0 ? eps : -eps);
    const double fu = f(u);
    if (fu <= fx) {
      (u < x ? b : a) = x;
      v = w;
      fv = fw;
      w = x;
      fw = fx;
      x = u;
      fx = fu;
    } else {
      (u < x ? a : b) = u;
      if (fu <= fw || w == x) {
        v = w;
        fv = fw;
        w = u;
        fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u;
        fv = fu;
      }
    }
  }
  return x;
}

// The sample in the order of its first coordinate: key tiles are then compact in space, so local_fit skips the
// tiles far from each query. The scores are sums over points: the order changes only their rounding. With
// `sort` false, the sample as it is (the grid needs no order).
struct SortedSample {
  Scratch<int64_t> order;
  Scratch<float> x, y, weights;
  Problem problem;
  Criterion criterion;

  SortedSample(const Problem& p, const Criterion& c, bool sort)
      : order(sort ? p.keys.rows : 0),
        x(sort ? p.keys.rows * p.keys.cols : 0),
        y(sort ? p.values.rows * p.values.cols : 0),
        weights(sort && c.observation_weights ? p.keys.rows : 0),
        problem(p),
        criterion(c) {
    if (!sort || !ok()) return;
    const int64_t n = p.keys.rows, dims = p.keys.cols, width = p.values.cols;
    int64_t* idx = order.get();
    for (int64_t i = 0; i < n; ++i) idx[i] = i;
    std::stable_sort(idx, idx + n, [&](int64_t a, int64_t b) { return p.keys.row(a)[0] < p.keys.row(b)[0]; });
    for (int64_t i = 0; i < n; ++i) {
      std::copy(p.keys.row(idx[i]), p.keys.row(idx[i]) + dims, x.get() + i * dims);
      std::copy(p.values.row(idx[i]), p.values.row(idx[i]) + width, y.get() + i * width);
      if (c.observation_weights) weights.get()[i] = c.observation_weights[idx[i]];
    }
    problem.queries = problem.keys = {x.get(), n, dims, dims};
    problem.values = {y.get(), n, width, width};
    if (c.observation_weights) criterion.observation_weights = weights.get();
  }
  bool ok() const { return order.ok() && x.ok() && y.ok() && weights.ok(); }
};

}  // namespace

Status rule_of_thumb(ConstMatrix x, Rule rule, double* h) {
  const int64_t n = x.rows, dims = x.cols;
  if (n < 2 || dims < 1 || !x.data || !h) return Status::BadShape;
  Scratch<double> column(n);
  if (!column.ok()) return Status::OutOfMemory;
  const double factor = std::pow(double(n), -1.0 / double(dims + 4));
  for (int64_t d = 0; d < dims; ++d) {
    double mean = 0;
    for (int64_t i = 0; i < n; ++i) mean += column.get()[i] = x.row(i)[d];
    mean /= double(n);
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) ss += (column.get()[i] - mean) * (column.get()[i] - mean);
    const double sd = std::sqrt(ss / double(n - 1));
    const double iqr = (quantile(column.get(), n, 0.75) - quantile(column.get(), n, 0.25)) / 1.349;
    double spread = sd;
    if (rule == Rule::Silverman) spread = 0.9 * (sd > 0 && iqr > 0 ? std::min(sd, iqr) : std::max(sd, iqr));
    if (!(spread > 0)) spread = std::fabs(mean) > 0 ? std::fabs(mean) * 1e-3 : 1.0;
    h[d] = spread * factor;
  }
  return Status::Ok;
}

namespace {

// h as the float32 bandwidth the engine reads; false where float32 cannot hold it (such a bandwidth is never the
// minimiser; checked before converting: beyond FLT_MAX the conversion is undefined).
bool float_bandwidth(double h, float* hf) {
  if (!(h > 0) || !(h <= double(std::numeric_limits<float>::max())) || !(float(h) > 0)) return false;
  *hf = float(h);
  return true;
}

// The sample of p as GridCv takes it; a tolerance of 0 (no grid asked for, or a criterion the grid does not
// compute) makes the GridCv decline every bandwidth at no cost.
GridCv search_grid(const Problem& p, const Criterion& criterion) {
  const bool grid = criterion.score == Score::LeaveOneOut && p.queries.cols == 1;
  return GridCv(Fit{p, criterion.estimator, criterion.observation_weights}, grid ? criterion.grid_tolerance : 0.0);
}

// cv_score without GridCv: exactly, or (2-D, or a sample GridCv declines) by grid_local_fit per evaluation.
Result cv_score_direct(const Problem& p, const double* h, double* score, const Criterion& criterion) {
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
  // leave-one-out; everything else runs exactly, on the sample sorted by its first coordinate.
  const int64_t nodes = criterion.score == Score::LeaveOneOut && !p.masks.any()
                            ? plan_grid_nodes(p.keys, p.kernel.kind, hf.get(), criterion.grid_tolerance)
                            : 0;
  const SortedSample sorted(p, criterion, nodes == 0);
  if (!sorted.ok()) return {Status::OutOfMemory};
  Problem q = sorted.problem;
  q.kernel.bandwidth = hf.get();
  q.empty = EmptyPolicy::NaN;
  const Fit f{q, criterion.estimator, sorted.criterion.observation_weights};
  if (criterion.score == Score::AICc) {
    FitSummary s;
    const Result r = summarize_fit(f, &s);
    if (r.status != Status::Ok) return r;
    *score = s.empty_rows ? kInf : aicc(s, width);
    return {};
  }
  q.masks.leave_one_out = true;
  const Fit loo{q, f.estimator, f.observation_weights};
  const bool linear = f.estimator == Estimator::LocalLinear;
  Scratch<uint8_t> guarded(linear ? n : 0);
  if (!guarded.ok()) return {Status::OutOfMemory};
  std::fill(guarded.get(), guarded.get() + (linear ? n : 0), uint8_t(0));
  FitOut into{Matrix{fit.get(), n, width, width}};
  into.guarded = linear ? guarded.get() : nullptr;
  const Result r = nodes > 0 ? grid_local_fit(loo, nodes, into) : local_fit(loo, into);
  if (r.status != Status::Ok) return r;
  // The textbook criterion: where the guard changed a held-out point's solve, its fit comes from the float64
  // solve without the guard, and a design singular even there scores +inf, as a point with no neighbour does
  // (bandwidth.h).
  const int64_t np = linear ? dims + 1 : 1;
  Scratch<double> solve(np * np + np * width + np + width);
  if (!solve.ok()) return {Status::OutOfMemory};
  const ExactRowScratch rows{solve.get(), solve.get() + np * np, solve.get() + np * np + np * width};
  double* exact = solve.get() + np * np + np * width + np;
  double sum = 0, total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double omega = f.observation_weights ? f.observation_weights[i] : 1.0;
    total += omega;
    const bool textbook = into.guarded && guarded.get()[i] && omega > 0;
    if (textbook && !exact_local_row(q, 1, f.observation_weights, i, rows, exact)) {
      *score = kInf;
      return {};
    }
    for (int64_t c = 0; c < width; ++c) {
      const double e = double(q.values.row(i)[c]) - (textbook ? exact[c] : double(fit.get()[i * width + c]));
      if (omega > 0) sum += omega * e * e;  // a zero-weight point does not count, even when its fit is empty
    }
  }
  *score = std::isnan(sum) || !(total > 0) ? kInf : sum / total;
  return {};
}

// CV(h) on the search's grid where it serves h, else by cv_score_direct.
Result cv_score_with(GridCv& grid, const Problem& p, const double* h, double* score, const Criterion& criterion) {
  float hf;
  if (grid.suits() && float_bandwidth(h[0], &hf)) {
    bool served = false;
    const Result r = grid.score(hf, score, &served);
    if (served || r.status != Status::Ok) return r;
  }
  return cv_score_direct(p, h, score, criterion);
}

}  // namespace

Result cv_score(const Problem& p, const double* h, double* score, const Criterion& criterion) {
  GridCv grid = search_grid(p, criterion);
  return cv_score_with(grid, p, h, score, criterion);
}

namespace {

// The scan of select_cv (bandwidth.h): kScanPerDecade log-spaced points per decade of the common scale, from
// kScanLow times the smallest per-dimension median spacing to kScanHigh times the largest per-dimension range, and
// up to kScanExtra more points beyond either end while the best point sits there.
constexpr double kScanPerDecade = 6, kScanLow = 0.25, kScanHigh = 4;
constexpr int kScanExtra = 12;

// An exact 1-D leave-one-out search scores its scan points on a grid (GridCv) where one of this relative tolerance
// serves h and costs less than the exact fit: the scan's upper decades, whose bandwidths reach every key, cost O(n²)
// each exactly and O(n + G log G) so. Such a grid's fits err by at most kScreenFitError of range(y) (measured well
// below it: bandwidth_test.cpp), so a score s errs by at most screen_margin(s) = 2·√(s·W)·e + W·e² (W columns,
// e = kScreenFitError·range(y)); scan points whose scores are that close to the best one's get a refinement too, up
// to kScreenBrackets in all.
constexpr double kScreenTolerance = 1e-6, kScreenFitError = 5e-5;
constexpr int kScreenBrackets = 3;
// Where the screen pays (measured natively on 10⁴ uniform points, Gaussian: an exact evaluation at h = range/64 takes
// about 40 ms, the grid's about 10 ms, falling with h while the exact one grows to O(n²)): from h = range/64, on
// samples of at least 2,000 points (below, the whole exact search takes a tenth of a second; binning the sample
// once on the grid of 2^18 cells costs about as much).
constexpr double kScreenFrom = 1.0 / 64;
constexpr int64_t kScreenMinPoints = 2000;

// The range of the common scale s (h_d = s · start_d) that the scan covers: s·start_d reaches from kScanLow times
// the median gap between sorted distinct values of x_d (below it a fit interpolates) up to kScanHigh times the
// range of x_d (there every weight is within e^(−1/32) of the largest: Nadaraya–Watson is within a few % of the
// constant and local-linear of the least-squares line; a criterion still falling there extends the scan), over every
// dimension with a spread. Without any spread (or a range no double holds): 2^-5 … 1.
Status scan_range(ConstMatrix x, const double* start, double* lo, double* hi) {
  const int64_t n = x.rows, dims = x.cols;
  Scratch<double> column(n);
  if (!column.ok()) return Status::OutOfMemory;
  double low = kInf, high = 0;
  for (int64_t d = 0; d < dims; ++d) {
    double* v = column.get();
    int64_t m = 0;  // the finite values only: NaN has no place in a sort (the criterion decides what NaN gives)
    for (int64_t i = 0; i < n; ++i)
      if (std::isfinite(x.row(i)[d])) v[m++] = x.row(i)[d];
    if (m < 2) continue;
    std::sort(v, v + m);
    const double range = v[m - 1] - v[0];
    if (!(range > 0) || !std::isfinite(range)) continue;
    int64_t gaps = 0;
    for (int64_t i = 1; i < m; ++i)
      if (v[i] > v[i - 1]) v[gaps++] = v[i] - v[i - 1];  // in place: gap k overwrites a value already read
    const double spacing = quantile(v, gaps, 0.5);
    low = std::min(low, kScanLow * spacing / start[d]);
    high = std::max(high, kScanHigh * range / start[d]);
  }
  if (!(low > 0) || !(high <= std::numeric_limits<double>::max()) || !(low < high)) {
    low = 1.0 / 32;
    high = 1;
  }
  low = std::max(low, high * 1e-30);  // at most 30 decades (180 points), whatever spacings float32 holds
  *lo = low;
  *hi = high;
  return Status::Ok;
}

}  // namespace

Result select_cv(const Problem& p, bool per_dimension, double* h, double* score, CvCurve* curve,
                 const Criterion& criterion, const SearchProgress& progress) {
  const int64_t dims = p.queries.cols;
  for (int64_t d = 0; d < dims; ++d)
    if (!(h[d] > 0) || !std::isfinite(h[d])) return {Status::BadArgument};  // the start must be a bandwidth
  Scratch<double> start(dims), trial(dims);
  if (!start.ok() || !trial.ok()) return {Status::OutOfMemory};
  std::copy(h, h + dims, start.get());
  Scratch<double> best_h(dims);
  if (!best_h.ok()) return {Status::OutOfMemory};
  double best_score = kInf;
  bool any_holdable = false;  // some evaluated bandwidth was positive and finite (else the scan overflowed)
  Result failure;
  // Evaluations a resumed search takes from the curve (CvCurve), and the evaluations made so far.
  const int32_t recorded = curve ? std::clamp(curve->count, 0, curve->capacity) : 0;
  int32_t evaluations = 0;
  // Leave-one-out CV in 1-D: one grid for the whole search, binned once.
  GridCv grid = search_grid(p, criterion);
  // An exact 1-D leave-one-out search screens its scan on a fine grid of its own (kScreenTolerance); then only the
  // refinement's evaluations, all exact, can be returned. Whether the scan is screened depends on the sample alone,
  // so a replayed search makes the same choice.
  GridCv screen(Fit{p, criterion.estimator, criterion.observation_weights},
                criterion.score == Score::LeaveOneOut && p.queries.cols == 1 && !(criterion.grid_tolerance > 0)
                    ? kScreenTolerance
                    : 0.0);
  const bool screening = screen.suits() && p.keys.rows >= kScreenMinPoints;
  // The smallest bandwidth screened: below it the exact fit of a scan point costs about as little as the grid's.
  double screen_from = kInf;
  if (screening) {
    float low = p.keys.row(0)[0], high = low;
    for (int64_t i = 1; i < p.keys.rows; ++i) {
      low = std::min(low, p.keys.row(i)[0]);
      high = std::max(high, p.keys.row(i)[0]);
    }
    screen_from = kScreenFrom * (double(high) - double(low));
  }
  double y_range = 0;
  for (int64_t c = 0; screening && c < p.values.cols; ++c) {
    double low = kInf, high = -kInf;
    for (int64_t i = 0; i < p.values.rows; ++i) {
      low = std::min(low, double(p.values.row(i)[c]));
      high = std::max(high, double(p.values.row(i)[c]));
    }
    y_range = std::max(y_range, high - low);
  }
  const auto screen_margin = [&, width = double(p.values.cols)](double s) {
    const double e = kScreenFitError * y_range;
    return 2 * std::sqrt(s * width) * e + width * e * e;
  };
  // CV at a bandwidth, recorded on the curve and kept when it is the best so far; NaN-free (+inf for empty
  // neighbourhoods). The search returns the best point it evaluated, so no evaluation is repeated at the end.
  // A scan point while screening (`scan`) is scored on the screening grid where that serves h, and is never kept.
  // After a failure (or a cancellation) nothing more is evaluated: the loops run out on +inf and the search returns.
  const auto evaluate = [&](const double* bandwidth, bool scan) {
    if (failure.status != Status::Ok) return kInf;
    double s = kInf;
    if (evaluations < recorded) {
      const double* was = curve->bandwidths + int64_t(evaluations) * dims;
      if (!std::equal(bandwidth, bandwidth + dims, was)) {
        failure = {Status::BadArgument};  // not the same search: the curve is of other inputs
        return kInf;
      }
      s = curve->scores[evaluations++];
    } else {
      bool served = false;
      float hf;
      if (screening && scan && bandwidth[0] >= screen_from && float_bandwidth(bandwidth[0], &hf)) {
        const Result r = screen.score(hf, &s, &served);
        if (r.status != Status::Ok) failure = r;
      }
      if (!served && failure.status == Status::Ok) {
        const Result r = cv_score_with(grid, p, bandwidth, &s, criterion);
        if (r.status != Status::Ok) failure = r;
      }
      if (curve && curve->count < curve->capacity) {
        std::copy(bandwidth, bandwidth + dims, curve->bandwidths + int64_t(curve->count) * dims);
        curve->scores[curve->count++] = s;
      }
      ++evaluations;
      if (failure.status == Status::Ok && progress.after_evaluation &&
          !progress.after_evaluation(progress.context, evaluations))
        failure = {Status::Cancelled};
    }
    const bool holdable = std::all_of(bandwidth, bandwidth + dims, [](double v) { return v > 0 && std::isfinite(v); });
    // All +inf: the latest, whose score that is.
    if (holdable && !(screening && scan) && (s < best_score || best_score == kInf)) {
      any_holdable = true;
      best_score = s;
      std::copy(bandwidth, bandwidth + dims, best_h.get());
    }
    return s;
  };
  const auto scale_to = [&](double log_scale, bool scan) {
    for (int64_t d = 0; d < dims; ++d) trial.get()[d] = start.get()[d] * std::exp(log_scale);
    return evaluate(trial.get(), scan);
  };
  const auto scan_at = [&](double log_scale) { return scale_to(log_scale, true); };
  const auto at_scale = [&](double log_scale) { return scale_to(log_scale, false); };

  // Coarse scan of the common scale over the whole sensible range (scan_range), log-spaced, then Brent's method
  // between the best scan point's neighbours: the search returns the global minimum of what it scanned.
  double scale_lo = 0, scale_hi = 0;
  if (const Status st = scan_range(p.keys, start.get(), &scale_lo, &scale_hi); st != Status::Ok) return {st};
  const int count = std::max(2, int(std::ceil(std::log10(scale_hi / scale_lo) * kScanPerDecade)) + 1);
  const double first = std::log(scale_lo), step = (std::log(scale_hi) - first) / double(count - 1);
  // Scan points k = lo … hi, k = 0 at scale_lo; kScanExtra more each way where the best point sits at an end.
  Scratch<double> scores(count + 2 * kScanExtra);
  if (!scores.ok()) return {Status::OutOfMemory};
  const auto score_at = [&](int k) -> double& { return scores.get()[k + kScanExtra]; };
  int lo = 0, hi = count - 1, best = 0;
  for (int k = lo; k <= hi; ++k) {
    score_at(k) = scan_at(first + k * step);
    if (score_at(k) < score_at(best)) best = k;
  }
  if (failure.status != Status::Ok) return failure;
  // Below the range: only while the lowest point is the best (ties in x, or a kernel that needs no spacing).
  while (best == lo && lo > -kScanExtra && std::isfinite(score_at(lo))) {
    --lo;
    score_at(lo) = scan_at(first + lo * step);
    if (score_at(lo) < score_at(best)) best = lo;
  }
  // Above it: while the highest point is the best (Nadaraya–Watson's constant, local-linear's line, approached from
  // below), or while every score is infinite (compact kernels leave points without neighbours).
  while ((best == hi || !std::isfinite(score_at(best))) && hi < count - 1 + kScanExtra) {
    ++hi;
    score_at(hi) = scan_at(first + hi * step);
    if (score_at(hi) < score_at(best)) best = hi;
  }
  if (failure.status != Status::Ok) return failure;
  // Brent's method, exactly, between the neighbours of the best scan point; where the scan was screened, also around
  // up to kScreenBrackets − 1 more local minima of the scan (not next to one already taken) that the grid's error
  // could make the best: a score within screen_margin of the best's (both ways), in order of score.
  int chosen[kScreenBrackets] = {best};
  int brackets = 1;
  const double best_scan = score_at(best);
  const auto local_minimum = [&](int k) {
    return (k == lo || score_at(k) <= score_at(k - 1)) && (k == hi || score_at(k) <= score_at(k + 1));
  };
  while (screening && brackets < kScreenBrackets && std::isfinite(best_scan)) {
    int next = -1;
    for (int k = lo; k <= hi; ++k) {
      const bool apart = std::all_of(chosen, chosen + brackets, [&](int c) { return std::abs(k - c) >= 2; });
      if (apart && local_minimum(k) && std::isfinite(score_at(k)) && (next < 0 || score_at(k) < score_at(next)))
        next = k;
    }
    if (next < 0 || score_at(next) - screen_margin(score_at(next)) > best_scan + screen_margin(best_scan)) break;
    chosen[brackets++] = next;
  }
  for (int b = 0; b < brackets; ++b) {
    brent(at_scale, first + std::max(lo, chosen[b] - 1) * step, first + std::min(hi, chosen[b] + 1) * step, 0.005);
    if (failure.status != Status::Ok) return failure;
  }

  if (per_dimension && dims > 1) {
    // Coordinate descent: sweeps until a sweep improves CV by less than 1e-7 (relative), at most 12.
    for (int sweep = 0; sweep < 12; ++sweep) {
      const double before = best_score;
      for (int64_t d = 0; d < dims; ++d) {
        std::copy(best_h.get(), best_h.get() + dims, trial.get());
        const auto along = [&](double log_h) {
          trial.get()[d] = std::exp(log_h);
          return evaluate(trial.get(), false);
        };
        // A minimum at the edge of the bracket (an irrelevant input wants an ever larger bandwidth) moves the
        // bracket, up to 6 times; the first sweep looks within a factor 4, later ones within a factor 2.
        const double reach = std::log(sweep == 0 ? 4.0 : 2.0), tol = 0.002;
        double center = std::log(best_h.get()[d]);
        for (int moves = 0; moves < 6; ++moves) {
          const double next = brent(along, center - reach, center + reach, tol);
          const bool at_edge = std::fabs(std::fabs(next - center) - reach) < 2 * tol;
          center = next;
          if (!at_edge || failure.status != Status::Ok) break;
        }
        if (failure.status != Status::Ok) return failure;
      }
      if (!(best_score < before * (1 - 1e-7))) break;
    }
  }
  if (!any_holdable) {  // every bandwidth tried overflowed: the start, with its own score
    evaluate(start.get(), false);
    if (failure.status != Status::Ok) return failure;
  }
  // h is written only now: a cancelled search leaves it as the start, so that it can be resumed.
  std::copy(best_h.get(), best_h.get() + dims, h);
  *score = best_score;
  return {};
}

Result select_cv_gradient(const Problem& p, double* h, double* score, CvCurve* curve, const Criterion& criterion,
                          const SearchProgress& progress, GradientSearch* search) {
  const int64_t n = p.queries.rows, dims = p.queries.cols, width = p.values.cols;
  if (p.heads != 1 || p.keys.rows != n || p.keys.cols != dims || p.values.rows != n) return {Status::BadShape};
  if (!search || search->rank < 0 || (search->rank > 0 && !search->transform)) return {Status::BadArgument};
  if (criterion.estimator != Estimator::NadarayaWatson || criterion.score != Score::LeaveOneOut ||
      criterion.observation_weights || p.kernel.kind == KernelKind::Uniform || p.kernel.kind == KernelKind::Softmax)
    return {Status::BadArgument};
  for (int64_t d = 0; d < dims; ++d)
    if (!(h[d] > 0) || !std::isfinite(h[d])) return {Status::BadArgument};
  const int64_t rank = search->rank, cols = rank ? rank : dims;  // columns of the transformed sample
  const int64_t params = rank ? rank * dims : dims;
  Scratch<double> theta(params), lower(params), upper(params), best(params), lse(n);
  Scratch<float> xt(rank ? n * rank : 0), hf(cols), out(n * width), dout(n * width), dq(rank ? n * rank : 0),
      dk(rank ? n * rank : 0), dtheta(cols);
  if (!theta.ok() || !lower.ok() || !upper.ok() || !best.ok() || !lse.ok() || !xt.ok() || !hf.ok() || !out.ok() ||
      !dout.ok() || !dq.ok() || !dk.ok() || !dtheta.ok())
    return {Status::OutOfMemory};
  // θ: log h (box of ±log kBandwidthBox around the start), or L (unbounded), starting at diag(1/h).
  for (int64_t a = 0; a < params; ++a) {
    if (rank == 0) {
      theta.get()[a] = std::log(h[a]);
      lower.get()[a] = theta.get()[a] - std::log(kBandwidthBox);
      upper.get()[a] = theta.get()[a] + std::log(kBandwidthBox);
    } else {
      theta.get()[a] = a / dims == a % dims ? 1 / h[a % dims] : 0;
      lower.get()[a] = -kInf;
      upper.get()[a] = kInf;
    }
  }
  Problem q = p;
  q.masks.leave_one_out = true;
  q.empty = EmptyPolicy::NaN;
  q.kernel.bandwidth = hf.get();
  if (rank) {
    q.queries = q.keys = ConstMatrix{xt.get(), n, rank, rank};
    std::fill(hf.get(), hf.get() + rank, 1.0f);
  }
  const int32_t recorded = curve ? std::clamp(curve->count, 0, curve->capacity) : 0;
  if (recorded > 0 && !curve->gradients) return {Status::BadArgument};  // a replay needs the recorded gradients
  int32_t evaluations = 0;
  double best_score = kInf;
  Result failure;
  // What the curve records of θ: the bandwidths (rank 0), or L itself.
  const auto shown = [&](const double* t, double* into) {
    for (int64_t a = 0; a < params; ++a) into[a] = rank ? t[a] : std::exp(t[a]);
  };
  Scratch<double> shown_now(params);
  if (!shown_now.ok()) return {Status::OutOfMemory};
  // CV at θ by the forward pass, and its gradient by the backward pass when CV <= threshold; +inf where a float32
  // bandwidth cannot hold h or a point has no neighbour; NaN stops the minimiser (a failure or a cancellation).
  const auto cv_at = [&](const double* t, double threshold, double* grad) -> double {
    if (rank == 0) {
      for (int64_t d = 0; d < dims; ++d) {
        const double hd = std::exp(t[d]);
        if (!(hd <= double(std::numeric_limits<float>::max())) || !(float(hd) > 0)) return kInf;
        hf.get()[d] = float(hd);
      }
    } else {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t r = 0; r < rank; ++r) {
          double v = 0;
          for (int64_t d = 0; d < dims; ++d) v += t[r * dims + d] * double(p.keys.row(i)[d]);
          if (!(std::fabs(v) <= double(std::numeric_limits<float>::max()))) return kInf;
          xt.get()[i * rank + r] = float(v);
        }
    }
    const Matrix fit{out.get(), n, width, width};
    if (const Result r = attention_forward(q, fit, lse.get()); r.status != Status::Ok) {
      failure = r;
      return std::numeric_limits<double>::quiet_NaN();
    }
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < width; ++c) {
        const double e = double(out.get()[i * width + c]) - double(p.values.row(i)[c]);
        sum += e * e;
        dout.get()[i * width + c] = float(2 * e / double(n));
      }
    const double cv = std::isfinite(sum) ? sum / double(n) : kInf;  // NaN rows: a point without neighbours
    if (!(cv <= threshold)) return cv;
    Gradients g{{dq.get(), rank ? n : 0, rank, rank}, {dk.get(), rank ? n : 0, rank, rank}, {}, dtheta.get()};
    if (const Result r = attention_backward(q, lse.get(), {dout.get(), n, width, width}, g); r.status != Status::Ok) {
      failure = r;
      return std::numeric_limits<double>::quiet_NaN();
    }
    if (rank == 0) {
      for (int64_t d = 0; d < dims; ++d) grad[d] = double(dtheta.get()[d]);
    } else {
      std::fill(grad, grad + params, 0.0);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t r = 0; r < rank; ++r) {
          const double s = double(dq.get()[i * rank + r]) + double(dk.get()[i * rank + r]);
          for (int64_t d = 0; d < dims; ++d) grad[r * dims + d] += s * double(p.keys.row(i)[d]);
        }
    }
    return cv;
  };
  // One evaluation: replayed from the curve (resuming, as select_cv) or computed and recorded; then the hook.
  const auto evaluate = [&](const double* t, double threshold, double* grad) -> double {
    shown(t, shown_now.get());
    double f;
    if (evaluations < recorded) {
      const double* was = curve->bandwidths + int64_t(evaluations) * params;
      const double* was_grad = curve->gradients + int64_t(evaluations) * params;
      f = curve->scores[evaluations++];
      if (!std::equal(shown_now.get(), shown_now.get() + params, was) || (f <= threshold && std::isnan(was_grad[0]))) {
        failure = {Status::BadArgument};  // not the same search: the curve is of other inputs
        return std::numeric_limits<double>::quiet_NaN();
      }
      if (f <= threshold) std::copy(was_grad, was_grad + params, grad);
    } else {
      f = cv_at(t, threshold, grad);
      if (std::isnan(f)) return f;
      if (curve && curve->count < curve->capacity) {
        const int64_t at = int64_t(curve->count) * params;
        std::copy(shown_now.get(), shown_now.get() + params, curve->bandwidths + at);
        if (curve->gradients) {
          if (f <= threshold)
            std::copy(grad, grad + params, curve->gradients + at);
          else
            std::fill(curve->gradients + at, curve->gradients + at + params, std::numeric_limits<double>::quiet_NaN());
        }
        curve->scores[curve->count++] = f;
      }
      ++evaluations;
    }
    if (f < best_score) {
      best_score = f;
      std::copy(t, t + params, best.get());
    }
    if (evaluations > recorded && progress.after_evaluation &&
        !progress.after_evaluation(progress.context, evaluations)) {
      failure = {Status::Cancelled};
      return std::numeric_limits<double>::quiet_NaN();
    }
    return f;
  };
  LbfgsOptions o;
  o.max_iterations = search->max_iterations;
  o.gradient_tolerance = search->gradient_tolerance;
  o.improvement_tolerance = search->improvement_tolerance;
  double f = kInf;
  LbfgsStop stop = lbfgs_box(params, theta.get(), lower.get(), upper.get(), evaluate, o, &f, &search->iterations);
  // A start where some point has no neighbour (a compact kernel, small h): widen it by factors of 2 (up to 2^10).
  for (int widen = 0; stop == LbfgsStop::Failed && widen < 10; ++widen) {
    for (int64_t a = 0; a < params; ++a) theta.get()[a] += rank ? -0.5 * theta.get()[a] : std::log(2.0);
    stop = lbfgs_box(params, theta.get(), lower.get(), upper.get(), evaluate, o, &f, &search->iterations);
  }
  if (failure.status != Status::Ok) return failure;
  if (stop == LbfgsStop::OutOfMemory) return {Status::OutOfMemory};
  if (best_score == kInf) std::copy(theta.get(), theta.get() + params, best.get());  // nothing finite: h stays finite
  // h is written only now: a cancelled search leaves it as the start, so that it can be resumed.
  if (rank == 0) {
    for (int64_t d = 0; d < dims; ++d) h[d] = std::exp(best.get()[d]);
  } else {
    std::copy(best.get(), best.get() + params, search->transform);
    for (int64_t d = 0; d < dims; ++d) {
      double norm = 0;
      for (int64_t r = 0; r < rank; ++r) norm += best.get()[r * dims + d] * best.get()[r * dims + d];
      h[d] = norm > 0 ? 1 / std::sqrt(norm) : kInf;
    }
  }
  *score = best_score;
  return {};
}

}  // namespace ka
