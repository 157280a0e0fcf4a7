// The scan-and-refine search of the CV (or AICc) bandwidth: a log-spaced scan of the whole range, then Brent's method.
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/scratch.h"
#include "stats/brent.h"
#include "stats/bandwidth_detail.h"
#include "stats/cv_scan_bound.h"

namespace ka {
namespace {

using bandwidth_detail::cv_score_with;
using bandwidth_detail::float_bandwidth;
using bandwidth_detail::kInf;
using bandwidth_detail::quantile;
using bandwidth_detail::search_grid;

// The scan of select_cv (bandwidth.h): kScanPerDecade log-spaced points per decade of the common scale, from
// kScanLow times the smallest per-dimension median spacing to kScanHigh times the largest per-dimension range, and
// up to kScanExtra more points beyond either end while the best point sits there.
constexpr double kScanPerDecade = 6, kScanLow = 0.25, kScanHigh = 4;
constexpr int kScanExtra = 12;
// A scan point is skipped where the nearest-neighbour bound exceeds the best score by this share: far more than the
// float32 engine's rounding of a score, so the skipped point's score would not have been the best either.
constexpr double kBoundMargin = 1e-3;

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

// One select_cv search: its inputs, its grids, the evaluations so far (a resumed search replays them from the
// curve), the best point evaluated and the first failure.
struct Search {
  const Problem& p;
  const Criterion& criterion;
  const SearchProgress& progress;
  CvCurve* const curve;
  const int64_t dims;
  Scratch<double> start, trial, best_h;
  double best_score = kInf;
  bool any_holdable = false;  // some evaluated bandwidth was positive and finite (else the scan overflowed)
  Result failure;
  // Evaluations a resumed search takes from the curve (CvCurve), and the evaluations made so far.
  const int32_t recorded;
  int32_t evaluations = 0;
  // Leave-one-out CV in 1-D: one grid for the whole search, binned once.
  GridCv grid;
  // The exact evaluations' sorted sample, sorted once for the whole search.
  bandwidth_detail::SearchSample sorted;
  // An exact 1-D leave-one-out search screens its scan on a fine grid of its own (kScreenTolerance); then only the
  // refinement's evaluations, all exact, can be returned. Whether the scan is screened depends on the sample alone,
  // so a replayed search makes the same choice.
  GridCv screen;
  bool screening;
  // The smallest bandwidth screened: below it the exact fit of a scan point costs about as little as the grid's.
  double screen_from = kInf;
  double y_range = 0;

  Search(const Problem& p_, const Criterion& c, const SearchProgress& progress_, CvCurve* curve_, const double* h)
      : p(p_),
        criterion(c),
        progress(progress_),
        curve(curve_),
        dims(p_.queries.cols),
        start(dims),
        trial(dims),
        best_h(dims),
        recorded(curve_ ? std::clamp(curve_->count, 0, curve_->capacity) : 0),
        grid(search_grid(p_, c)),
        screen(Fit{p_, c.estimator, c.observation_weights},
               c.score == Score::LeaveOneOut && p_.queries.cols == 1 && !(c.grid_tolerance > 0) && !(c.exclude > 0)
                   ? kScreenTolerance
                   : 0.0),
        screening(screen.suits() && p_.keys.rows >= kScreenMinPoints) {
    if (start.ok()) std::copy(h, h + dims, start.get());
    if (screening) {
      float low = p.keys.row(0)[0], high = low;
      for (int64_t i = 1; i < p.keys.rows; ++i) {
        low = std::min(low, p.keys.row(i)[0]);
        high = std::max(high, p.keys.row(i)[0]);
      }
      screen_from = kScreenFrom * (double(high) - double(low));
    }
    for (int64_t c = 0; screening && c < p.values.cols; ++c) {
      double low = kInf, high = -kInf;
      for (int64_t i = 0; i < p.values.rows; ++i) {
        low = std::min(low, double(p.values.row(i)[c]));
        high = std::max(high, double(p.values.row(i)[c]));
      }
      y_range = std::max(y_range, high - low);
    }
  }
  bool ok() const { return start.ok() && trial.ok() && best_h.ok(); }

  double screen_margin(double s) const {
    const double width = double(p.values.cols), e = kScreenFitError * y_range;
    return 2 * std::sqrt(s * width) * e + width * e * e;
  }

  // CV at a bandwidth, recorded on the curve and kept when it is the best so far; NaN-free (+inf for empty
  // neighbourhoods). The search returns the best point it evaluated, so no evaluation is repeated at the end.
  // A scan point while screening (`scan`) is scored on the screening grid where that serves h, and is never kept.
  // After a failure (or a cancellation) nothing more is evaluated: the loops run out on +inf and the search returns.
  double evaluate(const double* bandwidth, bool scan) {
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
        const Result r = cv_score_with(grid, p, bandwidth, &s, criterion, &sorted);
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
  }

  // The start times e^log_scale.
  double scale_to(double log_scale, bool scan) {
    for (int64_t d = 0; d < dims; ++d) trial.get()[d] = start.get()[d] * std::exp(log_scale);
    return evaluate(trial.get(), scan);
  }
};

// The scan of the common scale: points k = lo … hi at log scale first + k·step (k = 0 at scale_lo), their scores,
// and the best one.
struct Scan {
  double first = 0, step = 0;
  int count = 0, lo = 0, hi = 0, best = 0;
  Scratch<double> scores;  // k = -kScanExtra … count − 1 + kScanExtra
  double& score_at(int k) { return scores.get()[k + kScanExtra]; }
  double score_at(int k) const { return scores.get()[k + kScanExtra]; }
};

// Coarse scan of the common scale over the whole sensible range (scan_range), log-spaced, extended beyond either
// end while the best point sits there.
Result scan(Search& s, Scan& sc) {
  const Problem& p = s.p;
  const auto scan_at = [&](double log_scale) { return s.scale_to(log_scale, true); };
  double scale_lo = 0, scale_hi = 0;
  if (const Status st = scan_range(p.keys, s.start.get(), &scale_lo, &scale_hi); st != Status::Ok) return {st};
  const int count = std::max(2, int(std::ceil(std::log10(scale_hi / scale_lo) * kScanPerDecade)) + 1);
  const double first = std::log(scale_lo), step = (std::log(scale_hi) - first) / double(count - 1);
  sc.first = first;
  sc.step = step;
  sc.count = count;
  // Scan points k = lo … hi, k = 0 at scale_lo; kScanExtra more each way where the best point sits at an end.
  if (!sc.scores.reset_zeroed(count + 2 * kScanExtra)) return {Status::OutOfMemory};
  const auto score_at = [&](int k) -> double& { return sc.score_at(k); };
  int& lo = sc.lo;
  int& hi = sc.hi;
  int& best = sc.best;
  lo = 0;
  hi = count - 1;
  best = 0;
  // A multi-dimensional Nadaraya–Watson scan runs from the start (s = 1) up, then from there down, and stops each
  // way where a lower bound on CV (cv_scan_bound.h: near the mean going up, near the nearest-neighbour fit going
  // down; each only rises further that way) exceeds the best score found: those points are not the scan's minimum,
  // and they are its costly ones (reaching every key above, rows redone in double below the spacing). Ties go to
  // the smaller bandwidth, as in the upward scan.
  const NearestBound bound(p, s.criterion, s.start.get());
  if (bound.status() != Status::Ok) return {bound.status()};
  if (!s.screening && bound.active()) {
    best = -1;
    const auto take = [&](int k) {
      score_at(k) = scan_at(first + k * step);
      if (best < 0 || score_at(k) < score_at(best) || (score_at(k) == score_at(best) && k < best)) best = k;
    };
    const auto beaten = [&](double floor) {
      return best >= 0 && std::isfinite(score_at(best)) && floor > score_at(best) * (1 + kBoundMargin);
    };
    const int mid = std::clamp(int(std::lround(-first / step)), lo, hi);
    int k = mid;
    for (; k <= hi && !beaten(bound.lower_bound_far(std::exp(first + k * step))); ++k) take(k);
    for (int j = k; j <= hi; ++j) score_at(j) = kInf;
    for (k = mid - 1; k >= lo && !beaten(bound.lower_bound(std::exp(first + k * step))); --k) take(k);
    for (int j = k; j >= lo; --j) score_at(j) = kInf;
  } else {
    for (int k = lo; k <= hi; ++k) {
      score_at(k) = scan_at(first + k * step);
      if (score_at(k) < score_at(best)) best = k;
    }
  }
  if (s.failure.status != Status::Ok) return s.failure;
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
  return s.failure;
}

// Brent's method, exactly, between the neighbours of the best scan point; where the scan was screened, also around
// up to kScreenBrackets − 1 more local minima of the scan (not next to one already taken) that the grid's error
// could make the best: a score within screen_margin of the best's (both ways), in order of score.
Result refine(Search& s, const Scan& sc) {
  const auto at_scale = [&](double log_scale) { return s.scale_to(log_scale, false); };
  const auto score_at = [&](int k) { return sc.score_at(k); };
  const int lo = sc.lo, hi = sc.hi, best = sc.best;
  const double first = sc.first, step = sc.step;
  int chosen[kScreenBrackets] = {best};
  int brackets = 1;
  const double best_scan = score_at(best);
  const auto local_minimum = [&](int k) {
    return (k == lo || score_at(k) <= score_at(k - 1)) && (k == hi || score_at(k) <= score_at(k + 1));
  };
  while (s.screening && brackets < kScreenBrackets && std::isfinite(best_scan)) {
    int next = -1;
    for (int k = lo; k <= hi; ++k) {
      const bool apart = std::all_of(chosen, chosen + brackets, [&](int c) { return std::abs(k - c) >= 2; });
      if (apart && local_minimum(k) && std::isfinite(score_at(k)) && (next < 0 || score_at(k) < score_at(next)))
        next = k;
    }
    if (next < 0 || score_at(next) - s.screen_margin(score_at(next)) > best_scan + s.screen_margin(best_scan)) break;
    chosen[brackets++] = next;
  }
  for (int b = 0; b < brackets; ++b) {
    brent(at_scale, first + std::max(lo, chosen[b] - 1) * step, first + std::min(hi, chosen[b] + 1) * step, 0.005);
    if (s.failure.status != Status::Ok) return s.failure;
  }
  return {};
}

// Coordinate descent over the per-dimension bandwidths from the best common scale: sweeps until a sweep improves CV
// by less than 1e-7 (relative), at most 12.
Result descend_per_dimension(Search& s) {
  const int64_t dims = s.dims;
  for (int sweep = 0; sweep < 12; ++sweep) {
    const double before = s.best_score;
    for (int64_t d = 0; d < dims; ++d) {
      std::copy(s.best_h.get(), s.best_h.get() + dims, s.trial.get());
      const auto along = [&](double log_h) {
        s.trial.get()[d] = std::exp(log_h);
        return s.evaluate(s.trial.get(), false);
      };
      // A minimum at the edge of the bracket (an irrelevant input wants an ever larger bandwidth) moves the
      // bracket, up to 6 times; the first sweep looks within a factor 4, later ones within a factor 2.
      const double reach = std::log(sweep == 0 ? 4.0 : 2.0), tol = 0.002;
      double center = std::log(s.best_h.get()[d]);
      for (int moves = 0; moves < 6; ++moves) {
        const double next = brent(along, center - reach, center + reach, tol);
        const bool at_edge = std::fabs(std::fabs(next - center) - reach) < 2 * tol;
        center = next;
        if (!at_edge || s.failure.status != Status::Ok) break;
      }
      if (s.failure.status != Status::Ok) return s.failure;
    }
    if (!(s.best_score < before * (1 - 1e-7))) break;
  }
  return {};
}

}  // namespace

Result select_cv(const Problem& p, bool per_dimension, double* h, double* score, CvCurve* curve,
                 const Criterion& criterion, const SearchProgress& progress) {
  const int64_t dims = p.queries.cols;
  if (!bandwidth_detail::exclude_ok(criterion)) return {Status::BadArgument};
  for (int64_t d = 0; d < dims; ++d)
    if (!(h[d] > 0) || !std::isfinite(h[d])) return {Status::BadArgument};  // the start must be a bandwidth
  Search s(p, criterion, progress, curve, h);
  if (!s.ok()) return {Status::OutOfMemory};
  // Coarse scan of the common scale, then Brent's method between the best scan point's neighbours: the search
  // returns the global minimum of what it scanned.
  Scan sc;
  if (const Result r = scan(s, sc); r.status != Status::Ok) return r;
  if (const Result r = refine(s, sc); r.status != Status::Ok) return r;
  if (per_dimension && dims > 1)
    if (const Result r = descend_per_dimension(s); r.status != Status::Ok) return r;
  if (!s.any_holdable) {  // every bandwidth tried overflowed: the start, with its own score
    s.evaluate(s.start.get(), false);
    if (s.failure.status != Status::Ok) return s.failure;
  }
  // h is written only now: a cancelled search leaves it as the start, so that it can be resumed.
  std::copy(s.best_h.get(), s.best_h.get() + dims, h);
  *score = s.best_score;
  return {};
}

}  // namespace ka
