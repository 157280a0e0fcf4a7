// The scan-and-refine search of the CV (or AICc) bandwidth: a log-spaced scan of the whole range, then Brent's method.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>

#include "base/scratch.h"
#include "stats/bandwidth_detail.h"
#include "stats/cv_scan_bound.h"

namespace ka {
namespace {

using bandwidth_detail::cv_score_with;
using bandwidth_detail::float_bandwidth;
using bandwidth_detail::kInf;
using bandwidth_detail::quantile;
using bandwidth_detail::search_grid;

// Brent's minimiser (Brent 1973, ch. 5) over [a, b]: parabolic steps through the three best points, golden-section
// steps when a parabola is untrustworthy, until the bracket is narrower than `tol`. On the smooth, nearly
// quadratic CV curve in log h it needs about half the evaluations of golden section alone. Returns the best x.
// One copy for every objective: f is called through a pointer, once per evaluation (each a whole CV fit).
double brent_with(double (*call)(const void*, double), const void* objective, double a, double b, double tol) {
  const auto f = [&](double x) { return call(objective, x); };
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

template <class F>
double brent(const F& f, double a, double b, double tol) {
  return brent_with([](const void* o, double x) { return (*static_cast<const F*>(o))(x); }, &f, a, b, tol);
}

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

}  // namespace

// What one search keeps (CvSearchState, bandwidth.h). An exact 1-D leave-one-out search screens its scan on a fine
// grid of its own (kScreenTolerance); then only the refinement's evaluations, all exact, can be returned. Whether the
// scan is screened depends on the sample alone, so a replayed search makes the same choice.
struct CvSearchKeep {
  GridCv grid, screen;
  bandwidth_detail::SearchSample sorted;
  NearestBound bound;
  std::unique_ptr<NearestBound> nearest;  // the 1-D descent's bounds, made at its first exact point
  std::unique_ptr<SingularProbe> probe;
  Scratch<double> ruled;  // per scan point of the descent: its bound or probe's answer, NaN until asked
  int ruled_points = 0;
  double scale_lo = 0, scale_hi = 0;
  Status status = Status::Ok;
  CvSearchKeep(const Problem& p, const Criterion& criterion, const double* start)
      : grid(search_grid(p, criterion)),
        screen(Fit{p, criterion.estimator, criterion.observation_weights},
               criterion.score == Score::LeaveOneOut && p.queries.cols == 1 && !(criterion.grid_tolerance > 0) &&
                       !(criterion.exclude > 0)
                   ? kScreenTolerance
                   : 0.0),
        // The bounded scan up and down from the start: in 2-D and more, and in 1-D below the size whose scan
        // descends (where the bounds are made on the sorted sample at the first exact point).
        bound(p, criterion, start, p.keys.rows < kScreenMinPoints ? 1 : 2) {
    status = bound.status();
    if (status == Status::Ok) status = scan_range(p.keys, start, &scale_lo, &scale_hi);
  }
};

CvSearchState::CvSearchState() = default;
CvSearchState::~CvSearchState() = default;

Result select_cv(const Problem& p, bool per_dimension, double* h, double* score, CvCurve* curve,
                 const Criterion& criterion, const SearchProgress& progress, CvSearchState* state) {
  const int64_t dims = p.queries.cols;
  if (!bandwidth_detail::exclude_ok(criterion)) return {Status::BadArgument};
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
  // What the search keeps for its whole run, across the calls of a search resumed in steps when `state` is given
  // (made by the first): its grids, its sorted sample, its bounds and its scan's range.
  CvSearchState own;
  CvSearchState& kept = state ? *state : own;
  if (!kept.keep) {
    kept.keep.reset(new (std::nothrow) CvSearchKeep(p, criterion, start.get()));
    if (!kept.keep) return {Status::OutOfMemory};
  }
  CvSearchKeep& keep = *kept.keep;
  if (keep.status != Status::Ok) return {keep.status};
  // Leave-one-out CV in 1-D: one grid for the whole search, binned once.
  GridCv& grid = keep.grid;
  // The exact evaluations' sorted sample, sorted once for the whole search.
  bandwidth_detail::SearchSample& sorted = keep.sorted;
  GridCv& screen = keep.screen;
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
  };
  const auto scale_to = [&](double log_scale, bool scan) {
    for (int64_t d = 0; d < dims; ++d) trial.get()[d] = start.get()[d] * std::exp(log_scale);
    return evaluate(trial.get(), scan);
  };
  const auto scan_at = [&](double log_scale) { return scale_to(log_scale, true); };
  const auto at_scale = [&](double log_scale) { return scale_to(log_scale, false); };

  // Coarse scan of the common scale over the whole sensible range (scan_range), log-spaced, then Brent's method
  // between the best scan point's neighbours: the search returns the global minimum of what it scanned.
  const double scale_lo = keep.scale_lo, scale_hi = keep.scale_hi;
  const int count = std::max(2, int(std::ceil(std::log10(scale_hi / scale_lo) * kScanPerDecade)) + 1);
  const double first = std::log(scale_lo), step = (std::log(scale_hi) - first) / double(count - 1);
  // Scan points k = lo … hi, k = 0 at scale_lo; kScanExtra more each way where the best point sits at an end.
  Scratch<double> scores(count + 2 * kScanExtra);
  if (!scores.ok()) return {Status::OutOfMemory};
  const auto score_at = [&](int k) -> double& { return scores.get()[k + kScanExtra]; };
  int lo = 0, hi = count - 1, best = 0;
  // A multi-dimensional Nadaraya–Watson scan runs from the start (s = 1) up, then from there down, and stops each
  // way where a lower bound on CV (cv_scan_bound.h: near the mean going up, near the nearest-neighbour fit going
  // down; each only rises further that way) exceeds the best score found: those points are not the scan's minimum,
  // and they are its costly ones (reaching every key above, rows redone in double below the spacing). Ties go to
  // the smaller bandwidth, as in the upward scan.
  const NearestBound& bound = keep.bound;
  // A large 1-D leave-one-out scan (screened, or on the search's grid) runs from the top down: its grid-served points
  // first, then the exact ones below the grid's reach, where the scan stops or skips what cannot be its minimum (the
  // bounds of cv_scan_bound.h, made on the sorted sample when the first exact point comes). Nadaraya–Watson
  // (Gaussian): the lower bound near the nearest-neighbour fit, which only rises as h falls, so the descent ends
  // where it exceeds the best score (with the screen's margin both ways, and kBoundMargin for float32 rounding).
  // Local-linear: a point where the probe finds a singular held-out design scores +inf, as its evaluation would.
  // Skipped points are not evaluated (nor on the curve); the scan's minimum is the one the whole scan gives.
  const bool descending = dims == 1 && criterion.score == Score::LeaveOneOut && !(criterion.exclude > 0) &&
                          p.keys.rows >= kScreenMinPoints && (screening || grid.suits());
  std::unique_ptr<NearestBound>& nearest = keep.nearest;
  std::unique_ptr<SingularProbe>& probe = keep.probe;
  const auto runs_exactly = [&](double h) {
    float hf;
    if (!float_bandwidth(h, &hf)) return false;
    return !(screening && h >= screen_from && screen.serves(hf)) && !grid.serves(hf);
  };
  const auto margin = [&](double v) { return screening && std::isfinite(v) ? screen_margin(v) : 0.0; };
  const auto descend = [&](int low, int high, const auto& at) {
    int chosen = -1;
    for (int k = low; k <= high; ++k) at(k) = kInf;
    for (int k = high; k >= low; --k) {
      const double s = std::exp(first + k * step), h = start.get()[0] * s;
      if (failure.status != Status::Ok) continue;
      if (chosen >= 0 && std::isfinite(at(chosen)) && runs_exactly(h)) {
        if (!nearest && !probe) {
          const Problem* q = sorted.sorted_problem(p, criterion);
          if (!q) {
            failure = {Status::OutOfMemory};
            continue;
          }
          nearest.reset(new (std::nothrow) NearestBound(*q, criterion, start.get(), 1));
          probe.reset(new (std::nothrow) SingularProbe(*q, criterion));
          if (!nearest || !probe || nearest->status() != Status::Ok || probe->status() != Status::Ok) {
            failure = {Status::OutOfMemory};
            continue;
          }
        }
        // Each point's bound or probe once per search (a search resumed in steps replays its descent every step).
        if (keep.ruled_points < count) {
          if (!keep.ruled.reset_zeroed(count)) {
            failure = {Status::OutOfMemory};
            continue;
          }
          std::fill(keep.ruled.get(), keep.ruled.get() + count, std::numeric_limits<double>::quiet_NaN());
          keep.ruled_points = count;
        }
        double& ruled = keep.ruled.get()[k];  // the bound (Nadaraya–Watson), or 1 where the probe shows +inf
        const double won = at(chosen);
        if (nearest->active()) {
          if (std::isnan(ruled)) ruled = nearest->lower_bound(s);
          if (ruled * (1 - kBoundMargin) - margin(ruled) > won + margin(won)) break;  // and every lower point
        } else {
          if (std::isnan(ruled)) ruled = probe->singular(float(h)) ? 1 : 0;
          if (ruled == 1) continue;
        }
      }
      at(k) = scan_at(first + k * step);
      if (chosen < 0 || at(k) <= at(chosen)) chosen = k;  // ties to the smaller bandwidth, as the upward scan
    }
    return std::max(chosen, low);
  };
  if (!screening && bound.active()) {
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
  } else if (descending) {
    best = descend(lo, hi, [&](int k) -> double& { return score_at(k); });
  } else {
    for (int k = lo; k <= hi; ++k) {
      score_at(k) = scan_at(first + k * step);
      if (score_at(k) < score_at(best)) best = k;
    }
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

}  // namespace ka

// The pieces the mixed search shares (search_parts.h).
namespace ka::bandwidth_detail {

double brent_minimum(double (*call)(const void*, double), const void* objective, double a, double b, double tol) {
  return brent_with(call, objective, a, b, tol);
}

Status search_scale_range(ConstMatrix x, const double* start, double* lo, double* hi) {
  return scan_range(x, start, lo, hi);
}

}  // namespace ka::bandwidth_detail
