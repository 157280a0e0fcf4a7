// The scan-and-refine search of the CV (or AICc) bandwidth: a log-spaced scan of the whole range (cv_scan.cpp),
// then Brent's method, and a coordinate descent per dimension.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>

#include "methods/plan.h"
#include "stats/brent.h"
#include "stats/cv_band_window.h"
#include "stats/cv_search_parts.h"
#include "stats/mixed_detail.h"

namespace ka {

using bandwidth_detail::band_window_plan;
using bandwidth_detail::band_window_score;
using bandwidth_detail::cv_score_with;
using bandwidth_detail::float_bandwidth;
using bandwidth_detail::search_grid;

CvSearchKeep::CvSearchKeep(const Problem& p, const Criterion& criterion, const double* start)
    : grid(search_grid(p, criterion)),
      screen(Fit{p, criterion.estimator, criterion.observation_weights},
             criterion.score == Score::LeaveOneOut && p.queries.cols == 1 && !(criterion.grid_tolerance > 0) &&
                     !(criterion.exclude > 0)
                 ? kScreenTolerance
                 : 0.0),
      // The bounded scan up and down from the start: in 2-D and more, and in 1-D below the size whose scan
      // descends (where the bounds are made on the sorted sample at the first exact point).
      bound(p, criterion, start, p.keys.rows < kScreenMinPoints ? 1 : 2),
      expansion(p, criterion, p.keys.rows < kScreenMinPoints) {
  status = bound.status() != Status::Ok ? bound.status() : expansion.status();
  // 1-D: the spacing from the search's sorted sample, which its exact points and bounds sort anyway.
  if (status == Status::Ok)
    status = scan_range(p.keys, p.keys.cols == 1 ? sorted.ordered_first(p, criterion) : nullptr, start, &scale_lo,
                        &scale_hi);
}

CvSearchState::CvSearchState() = default;
CvSearchState::~CvSearchState() = default;

namespace cv_search {

double Search::scan_tolerance(const double* bandwidth) const {
  if (!coarse_scan) return criterion.grid_tolerance;
  float hf[2];
  for (int64_t d = 0; d < 2; ++d)
    if (!float_bandwidth(bandwidth[d], hf + d)) return criterion.grid_tolerance;
  return plan_scan_tolerance(keep.sorted.extent(p), p.kernel.kind, criterion.estimator, hf, criterion.grid_tolerance,
                             kCoarseScanSteps, kCoarsestScanTolerance);
}

double Search::grid_margin(const double* bandwidth, double s, double tolerance) const {
  if (!(tolerance > 0) || !std::isfinite(s)) return 0;
  const double per_square = double(p.keys.rows) * bandwidth[0] * bandwidth[1] / box;
  return tolerance * s * (kCoarseMarginFloor + kCoarseMarginPerPoint / per_square);
}

double Search::coarse_margin(const double* bandwidth, double s, double tolerance) const {
  return tolerance > criterion.grid_tolerance ? grid_margin(bandwidth, s, tolerance) : 0.0;
}

double Search::evaluate(const double* bandwidth, bool scan, const double* known, double asked) {
  // A scan point below the grid's reach scored on a coarser grid: never kept (the same choice when replayed).
  const double tolerance = asked > 0             ? asked
                           : scan && coarse_scan ? scan_tolerance(bandwidth)
                                                 : criterion.grid_tolerance;
  const bool coarse = tolerance > criterion.grid_tolerance;
  const double s = replay.score(bandwidth, &failure, [&](double* out) -> Result {
    if (known) {
      *out = *known;
      return {};
    }
    bool served = false;
    float hf;
    if (screening && scan && bandwidth[0] >= screen_from && float_bandwidth(bandwidth[0], &hf))
      if (const Result r = keep.screen.score(hf, out, &served); r.status != Status::Ok) return r;
    // A descending scan's point where the float32 windowed criterion costs less than the grid (cv_band_window.h).
    if (!served && scan && descends && float_bandwidth(bandwidth[0], &hf))
      if (const Result r = band_window_score(keep.sorted, p, criterion, hf, out, &served); r.status != Status::Ok)
        return r;
    if (served) return Result{};
    Criterion c = criterion;
    if (planar_screening && scan) c.grid_tolerance = kPlanarScreenTolerance;  // the grid where it serves and pays
    if (coarse) c.grid_tolerance = tolerance;
    return cv_score_with(keep.grid, p, bandwidth, out, c, &keep.sorted);
  });
  const bool holdable = std::all_of(bandwidth, bandwidth + dims, [](double v) { return v > 0 && std::isfinite(v); });
  // All +inf: the latest, whose score that is.
  if (holdable && !((screening || planar_screening) && scan) && !coarse && (s < best_score || best_score == kInf)) {
    any_holdable = true;
    best_score = s;
    std::copy(bandwidth, bandwidth + dims, best_h.get());
  }
  return s;
}

GridCv* Search::scan_grid(double h) {
  float hf;
  if (!float_bandwidth(h, &hf)) return nullptr;
  if (screening && h >= screen_from && keep.screen.serves(hf)) return &keep.screen;
  if (descends) {
    bool planned = false;
    if (band_window_plan(keep.sorted, p, criterion, hf, &planned).status != Status::Ok || planned) return nullptr;
  }
  return keep.grid.suits() && keep.grid.serves(hf) ? &keep.grid : nullptr;
}

namespace {

// Brent's method, exactly, between the neighbours of the best scan point; where the scan was screened, also around
// up to kScreenBrackets − 1 more local minima of the scan (not next to one already taken) that the grid's error
// could make the best: a score within screen_margin of the best's (both ways), in order of score.
Result refine(Search& se, const Scan& sc) {
  const auto at_scale = [&](double log_scale) { return se.scale_to(log_scale, false); };
  const auto score_at = [&](int k) { return sc.score_at(k); };
  const int lo = sc.lo, hi = sc.hi, best = sc.best;
  const double first = sc.first, step = sc.step;
  int chosen[kScreenBrackets] = {best};
  int brackets = 1;
  const double best_scan = score_at(best);
  const auto local_minimum = [&](int k) {
    return (k == lo || score_at(k) <= score_at(k - 1)) && (k == hi || score_at(k) <= score_at(k + 1));
  };
  while ((se.screening || se.planar_screening) && brackets < kScreenBrackets && std::isfinite(best_scan)) {
    int next = -1;
    for (int k = lo; k <= hi; ++k) {
      const bool apart = std::all_of(chosen, chosen + brackets, [&](int c) { return std::abs(k - c) >= 2; });
      if (apart && local_minimum(k) && std::isfinite(score_at(k)) && (next < 0 || score_at(k) < score_at(next)))
        next = k;
    }
    if (next < 0 || score_at(next) - se.screen_margin(score_at(next)) > best_scan + se.screen_margin(best_scan)) break;
    chosen[brackets++] = next;
  }
  // A coarse scan point (coarse_scan) that its margin shows could be below the best scan point: refined too, the
  // lowest bound first, apart from those taken. The plan (an O(n) pass or more) is asked only for a point that the
  // widest margin, at the coarsest tolerance, would not rule out.
  const double coarsest =
      coarsest_scan_tolerance(se.criterion.grid_tolerance, kCoarseScanSteps, kCoarsestScanTolerance);
  while (se.coarse_scan && brackets < kScreenBrackets && std::isfinite(best_scan)) {
    int next = -1;
    double next_bound = best_scan;
    for (int k = lo; k <= hi; ++k) {
      const bool apart = std::all_of(chosen, chosen + brackets, [&](int c) { return std::abs(k - c) >= 2; });
      if (!apart || !std::isfinite(score_at(k))) continue;
      double g[2];
      for (int64_t d = 0; d < 2; ++d) g[d] = se.start[d] * std::exp(first + k * step);
      if (score_at(k) - se.coarse_margin(g, score_at(k), coarsest) > next_bound) continue;
      const double bound = score_at(k) - se.coarse_margin(g, score_at(k), sc.tolerance_of(se, k, g));
      if (bound <= next_bound && (next < 0 || bound < next_bound)) {
        next = k;
        next_bound = bound;
      }
    }
    if (next < 0) break;
    chosen[brackets++] = next;
  }
  for (int b = 0; b < brackets; ++b) {
    const double a = first + std::max(lo, chosen[b] - 1) * step, z = first + std::min(hi, chosen[b] + 1) * step;
    if (b == 0) {
      brent(at_scale, a, z, 0.005);
    } else {
      // A further bracket's point, scored on the screen or a coarser grid: first at the search's own tolerance, and
      // refined only where that is not above the best score so far (then from there); a bracket whose exact scores
      // fall towards one refined already had its Brent's method creep to that end (on eight clusters of 10⁴
      // points: twelve scores, 0.7 s in WebAssembly).
      const double best_before = se.best_score, center = first + chosen[b] * step;
      const double s = at_scale(center);
      if (se.failure.status != Status::Ok) return se.failure;
      if (s <= best_before) brent_from(at_scale, a, center, s, z, 0.005);
    }
    if (se.failure.status != Status::Ok) return se.failure;
  }
  return {};
}

// Coordinate descent over the per-dimension bandwidths from the best common scale: sweeps until a sweep improves CV
// by less than 1e-7 (relative), at most 12.
Result descend_per_dimension(Search& se) {
  const int64_t dims = se.dims;
  for (int sweep = 0; sweep < 12; ++sweep) {
    const double before = se.best_score;
    for (int64_t d = 0; d < dims; ++d) {
      std::copy(se.best_h.get(), se.best_h.get() + dims, se.trial.get());
      const auto along = [&](double log_h) {
        se.trial.get()[d] = std::exp(log_h);
        return se.evaluate(se.trial.get(), false);
      };
      // A minimum at the edge of the bracket (an irrelevant input wants an ever larger bandwidth) moves the
      // bracket, up to 6 times; the first sweep looks within a factor 4, later ones within a factor 2.
      const double reach = std::log(sweep == 0 ? 4.0 : 2.0), tol = 0.002;
      double center = std::log(se.best_h.get()[d]);
      for (int moves = 0; moves < 6; ++moves) {
        const double next = brent(along, center - reach, center + reach, tol);
        const bool at_edge = std::fabs(std::fabs(next - center) - reach) < 2 * tol;
        center = next;
        if (!at_edge || se.failure.status != Status::Ok) break;
      }
      if (se.failure.status != Status::Ok) return se.failure;
    }
    if (!(se.best_score < before * (1 - 1e-7))) break;
  }
  return {};
}

}  // namespace
}  // namespace cv_search

using namespace cv_search;

Result select_cv(const Problem& p, bool per_dimension, double* h, double* score, CvCurve* curve,
                 const Criterion& criterion, const SearchProgress& progress, CvSearchState* state) {
  const int64_t dims = p.queries.cols;
  if (!bandwidth_detail::exclude_ok(criterion)) return {Status::BadArgument};
  for (int64_t d = 0; d < dims; ++d)
    if (!(h[d] > 0) || !std::isfinite(h[d])) return {Status::BadArgument};  // the start must be a bandwidth
  Scratch<double> start(dims);
  if (!start.ok()) return {Status::OutOfMemory};
  std::copy(h, h + dims, start.get());
  // What the search keeps for its whole run, across the calls of a search resumed in steps when `state` is given
  // (made by the first): its grids, its sorted sample, its bounds and its scan's range.
  CvSearchState own;
  CvSearchState& kept = state ? *state : own;
  if (!kept.keep) {
    kept.keep.reset(new (std::nothrow) CvSearchKeep(p, criterion, start.get()));
    if (!kept.keep) return {Status::OutOfMemory};
  }
  if (kept.keep->status != Status::Ok) return {kept.keep->status};
  Search se(p, criterion, progress, curve, start.get(), *kept.keep);
  if (!se.ok()) return {Status::OutOfMemory};
  // Coarse scan of the common scale over the whole sensible range, then Brent's method between the best scan point's
  // neighbours: the search returns the global minimum of what it scanned.
  Scan sc;
  if (const Result r = scan(se, sc); r.status != Status::Ok) return r;
  if (const Result r = refine(se, sc); r.status != Status::Ok) return r;
  if (per_dimension && dims > 1)
    if (const Result r = descend_per_dimension(se); r.status != Status::Ok) return r;
  if (!se.any_holdable) {  // every bandwidth tried overflowed: the start, with its own score
    se.evaluate(start.get(), false);
    if (se.failure.status != Status::Ok) return se.failure;
  }
  // h is written only now: a cancelled search leaves it as the start, so that it can be resumed.
  std::copy(se.best_h.get(), se.best_h.get() + dims, h);
  *score = se.best_score;
  return {};
}

}  // namespace ka

// The pieces the mixed search shares (search_parts.h).
namespace ka::bandwidth_detail {

double brent_minimum(double (*call)(const void*, double), const void* objective, double a, double b, double tol) {
  return brent_with(call, objective, a, b, tol);
}

Status search_scale_range(ConstMatrix x, const double* start, double* lo, double* hi) {
  return scan_range(x, nullptr, start, lo, hi);
}

}  // namespace ka::bandwidth_detail
