// The scan of select_cv (cv_search_parts.h): the common scale's log-spaced points over the sensible range, upward
// with bounds, descending from the top, or all of them; then extended beyond an end while the best point sits there.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>

#include "methods/plan.h"
#include "stats/cv_band_window.h"
#include "stats/cv_search_parts.h"

namespace ka {

using bandwidth_detail::band_window_plan;
using bandwidth_detail::float_bandwidth;
using bandwidth_detail::kInf;
using bandwidth_detail::quantile;

// The range of the common scale s (h_d = s · start_d) that the scan covers: s·start_d reaches from kScanLow times
// the median gap between sorted distinct values of x_d (below it a fit interpolates) up to kScanHigh times the
// range of x_d (there every weight is within e^(−1/32) of the largest: Nadaraya–Watson is within a few % of the
// constant and local-linear of the least-squares line; a criterion still falling there extends the scan), over every
// dimension with a spread (in 1-D, `sorted` when given holds x sorted, NaN nowhere: the spacing without a sort).
// Without any spread (or a range no double holds): 2^-5 … 1.
Status scan_range(ConstMatrix x, const float* sorted, const double* start, double* lo, double* hi) {
  const int64_t n = x.rows, dims = x.cols;
  Scratch<double> column(n);
  if (!column.ok()) return Status::OutOfMemory;
  double low = kInf, high = 0;
  for (int64_t d = 0; d < dims; ++d) {
    double least = kInf, most = -kInf;
    for (int64_t i = 0; i < n; ++i) {
      const double v = column.get()[i] = x.row(i)[d];
      if (std::isfinite(v)) {
        least = std::min(least, v);
        most = std::max(most, v);
      }
    }
    const double range = most - least;
    if (!(range > 0) || !std::isfinite(range)) continue;
    double spacing;
    if (const Status st = dims == 1 && sorted ? bandwidth_detail::median_spacing_sorted(sorted, n, &spacing)
                                              : median_spacing(column.get(), n, 1, &spacing);
        st != Status::Ok)
      return st;
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

namespace cv_search {
namespace {

// How far a descent's score s may lie from its exact score: the screen's margin where the exact search screens its
// scan on a grid (s finite), else 0.
double descent_margin(const Search& se, double s) {
  return se.screening && std::isfinite(s) ? se.screen_margin(s) : 0.0;
}

// The points a descent deferred (keep.partial: their scores without the rows the grid cannot serve, a lower bound),
// least bound first (the same order when a resumed search replays it): each completed where its bound, with the
// margins of both, does not show it beaten by the best point evaluated, `chosen`. Returns the best point then.
int complete_deferred(Search& se, Scan& sc, int low, int high, int chosen) {
  const double* partial = se.keep.partial.get();
  Scratch<uint8_t> decided(sc.count);
  if (!decided.ok()) {
    se.failure = {Status::OutOfMemory};
    return chosen;
  }
  std::fill(decided.get(), decided.get() + sc.count, uint8_t(0));
  for (;;) {
    int next = -1;
    for (int k = low; k <= high; ++k) {
      const double v = partial[k];
      if (!decided.get()[k] && v > -kInf && !std::isnan(v) && (next < 0 || v < partial[next])) next = k;
    }
    if (next < 0 || se.failure.status != Status::Ok) break;
    decided.get()[next] = 1;
    const double won = chosen >= 0 ? sc.score_at(chosen) : kInf, bound = partial[next];
    if (std::isfinite(won) && bound * (1 - kBoundMargin) - descent_margin(se, bound) > won + descent_margin(se, won))
      continue;
    sc.score_at(next) = se.scale_to(sc.first + next * sc.step, true);
    if (sc.better(next, chosen)) chosen = next;
  }
  return chosen;
}

// The descent's bounds, probe and band screen, made on the search's sorted sample at its first exact point; false
// without memory for them.
bool make_bounds(Search& se) {
  CvSearchKeep& keep = se.keep;
  const Problem* q = keep.sorted.sorted_problem(se.p, se.criterion);
  if (!q) return false;
  keep.nearest.reset(new (std::nothrow) NearestBound(*q, se.criterion, se.start, 1));
  keep.probe.reset(new (std::nothrow) SingularProbe(*q, se.criterion));
  keep.band.reset(new (std::nothrow) BandScreen(*q, se.criterion));
  return keep.nearest && keep.probe && keep.band && keep.nearest->status() == Status::Ok &&
         keep.probe->status() == Status::Ok;
}

// A large 1-D leave-one-out scan (screened, or on the search's grid) runs from the top down: its grid-served points
// first, then the exact ones below the grid's reach (on kBandScreenMinPoints or more, also those the grid serves where
// the band costs less: cv_band_window.h), where the scan stops or skips what cannot be its minimum (the bounds of
// cv_scan_bound.h, made on the sorted sample when the first exact point comes). Nadaraya–Watson
// (Gaussian): the lower bound near the nearest-neighbour fit, which only rises as h falls, so the descent ends
// where it exceeds the best score (with the screen's margin both ways, and kBoundMargin for float32 rounding).
// Local-linear: a point where the probe finds a singular held-out design scores +inf, as its evaluation would.
// On a sample of kBandScreenMinPoints or more, an exact point (or a grid point whose screen costs far less than its
// grid score: plan_band_screen) whose subsample (cv_band_screen.h), paired with a point evaluated above it, shows its
// score above the best one's is skipped too; and a grid point with rows the grid cannot serve is deferred, then
// completed only where the others' sum, a lower bound, does not show it beaten.
// Skipped points are not evaluated (nor on the curve); the scan's minimum is the one the whole scan gives (the band
// screen's: but for its chance of error). Returns the best point of [low, high].
int descend(Search& se, Scan& sc, int low, int high) {
  const Problem& p = se.p;
  const Criterion& criterion = se.criterion;
  CvSearchKeep& keep = se.keep;
  GridCv& grid = keep.grid;
  GridCv& screen = keep.screen;
  const bool screening = se.screening;
  const double screen_from = se.screen_from, first = sc.first, step = sc.step;
  const int count = sc.count;
  Result& failure = se.failure;
  const auto at = [&](int k) -> double& { return sc.score_at(k); };
  const auto scan_at = [&](double log_scale) { return se.scale_to(log_scale, true); };
  std::unique_ptr<NearestBound>& nearest = keep.nearest;
  std::unique_ptr<SingularProbe>& probe = keep.probe;
  std::unique_ptr<BandScreen>& band = keep.band;
  // Whether the exact search's screening grid scores scan point h (hf its float32 bandwidth).
  const auto screen_takes = [&](double h, float hf) { return screening && h >= screen_from && screen.serves(hf); };
  const auto runs_exactly = [&](double h) {
    float hf;
    if (!float_bandwidth(h, &hf)) return false;
    return !screen_takes(h, hf) && !grid.serves(hf);
  };
  // The band's points the grid serves too (where plan_band_cv prefers the band on a uniform spread: a clustered
  // sample's may run on the grid): bounded, probed and screened as the exact ones on a large sample (a clustered one's
  // band costs O(n · cluster) a point: one shown +inf by the probe had cost 2 of a 3.5 s search at 2·10⁵ points).
  const auto by_band = [&](double h) {
    float hf;
    bool planned = false;
    if (p.keys.rows < kBandScreenMinPoints || !float_bandwidth(h, &hf) || screen_takes(h, hf)) return false;
    if (const Result r = band_window_plan(keep.sorted, p, criterion, hf, &planned, false); r.status != Status::Ok)
      failure = r;
    return planned;
  };
  // A grid point whose screen costs far less than its grid score (plan_band_screen: the scan's lowest grid points on a
  // large sample) is bounded, probed and screened first, as the band's.
  const auto screened_first = [&](double h) {
    float hf;
    return p.keys.rows >= kBandScreenMinPoints && float_bandwidth(h, &hf) && !screen_takes(h, hf) && grid.serves(hf) &&
           plan_band_screen(keep.sorted.extent(p).range[0], p.kernel.kind, criterion.estimator, hf, p.keys.rows,
                            band_screen_rows(p.keys.rows), criterion.grid_tolerance);
  };
  const auto margin = [&](double v) { return descent_margin(se, v); };
  int chosen = -1,
      lowest = -1;  // the best point, and the lowest evaluated with a finite score (the screen's reference)
  for (int k = low; k <= high; ++k) at(k) = kInf;
  // Each point's deferral once per search (a search resumed in steps replays its descent every step).
  if (keep.partial_points < count) {
    if (!keep.partial.reset_filled(count, std::numeric_limits<double>::quiet_NaN())) {
      failure = {Status::OutOfMemory};
      return low;
    }
    keep.partial_points = count;
  }
  const auto take = [&](int k) {
    if (std::isfinite(at(k))) lowest = std::min(lowest < 0 ? k : lowest, k);
    if (sc.better(k, chosen)) chosen = k;
  };
  // A screened point evaluated becomes the screen's reference (where its rows are all finite).
  const auto refer = [&](int k) {
    float hf;
    if (band && band->has_reference() && keep.ruled_points >= count && !std::isnan(keep.screened.get()[k]) &&
        keep.band_reference != k && std::isfinite(at(k)) && failure.status == Status::Ok &&
        float_bandwidth(se.start[0] * std::exp(first + k * step), &hf) && band->move_reference(&hf))
      keep.band_reference = k;
  };
  for (int k = high; k >= low; --k) {
    const double s = std::exp(first + k * step), h = se.start[0] * s;
    if (failure.status != Status::Ok) continue;
    if (chosen >= 0 && std::isfinite(at(chosen)) && (runs_exactly(h) || by_band(h) || screened_first(h))) {
      if (!nearest && !probe && !make_bounds(se)) {
        failure = {Status::OutOfMemory};
        continue;
      }
      // Each point's bound or probe once per search (a search resumed in steps replays its descent every step).
      if (keep.ruled_points < count) {
        const double unknown = std::numeric_limits<double>::quiet_NaN();
        if (!keep.ruled.reset_filled(count, unknown) || !keep.screened.reset_filled(count, unknown)) {
          failure = {Status::OutOfMemory};
          continue;
        }
        keep.ruled_points = count;
      }
      double& ruled = keep.ruled.get()[k];  // the bound (Nadaraya–Watson), or 1 where the probe shows +inf
      const double won = at(chosen);
      if (nearest->active()) {
        if (std::isnan(ruled)) ruled = nearest->lower_bound(s);
        if (ruled * (1 - kBoundMargin) - margin(ruled) > won + margin(won)) break;  // and every lower point
      } else {
        const float hf = float(h);
        if (std::isnan(ruled)) ruled = probe->singular(&hf) ? 1 : 0;
        if (ruled == 1) continue;
      }
      // The band screen's reference: the lowest point evaluated when it is first asked, then each screened point
      // evaluated (the nearest above the next: paired rows of nearby bandwidths differ least).
      float hf, ref;
      if (!band->has_reference() && lowest >= 0 &&
          float_bandwidth(se.start[0] * std::exp(first + lowest * step), &ref) && band->set_reference(&ref))
        keep.band_reference = lowest;
      if (band->has_reference() && float_bandwidth(h, &hf)) {
        // A lower bound on CV(h) (the reference's score and the rows' difference), NaN until asked.
        double& floor = keep.screened.get()[k];
        const double needed = (won + margin(won)) * (1 + kBoundMargin);  // what the floor must exceed to skip h
        if (std::isnan(floor)) {
          const double reference = at(keep.band_reference), base = reference - margin(reference);
          // A quarter of the rows is enough where it shows the floor above `needed` (its rounding as far up).
          const double lower = band->lower_difference(&hf, needed - base + band->rounding(std::max(reference, needed)));
          floor = base + lower - band->rounding(std::max(reference, reference + lower));
        }
        if (floor > needed) continue;
      }
    }
    // A grid-served point is scored first without the rows the grid cannot serve (grid.h: each fitted exactly over
    // its keys in reach, at large bandwidths every key); where there are such rows, that lower bound (the rows add
    // squares) defers the point, and it is completed after the descent only where it could be the best.
    double& partial = keep.partial.get()[k];
    if (std::isnan(partial)) {
      partial = -kInf;
      if (GridCv* g = se.scan_grid(h)) {
        double v;
        bool served = false, deferred = false;
        if (const Result r = g->score(float(h), &v, &served, nullptr, &deferred); r.status != Status::Ok) {
          failure = r;
          continue;
        }
        if (served && deferred) {
          partial = v;
          continue;
        }
        if (served) {  // no such rows: v is its score, recorded as its evaluation
          at(k) = se.scale_to(first + k * step, true, &v);
          take(k);
          refer(k);
          continue;
        }
      }
    }
    if (partial > -kInf) continue;
    at(k) = scan_at(first + k * step);
    take(k);
    refer(k);
  }
  return std::max(complete_deferred(se, sc, low, high, chosen), low);
}

// The 2-D singular probe, made once per search on its sorted sample (null without memory for it: every point is then
// evaluated).
const SingularProbe* planar_probe(Search& se) {
  CvSearchKeep& keep = se.keep;
  if (!keep.probe) {
    const Problem* q = keep.sorted.sorted_problem(se.p, se.criterion);
    if (!q) return nullptr;
    keep.probe.reset(new (std::nothrow) SingularProbe(*q, se.criterion, se.start));
  }
  return keep.probe && keep.probe->status() == Status::Ok ? keep.probe.get() : nullptr;
}

}  // namespace

Result scan(Search& se, Scan& sc) {
  const auto scan_at = [&](double log_scale) { return se.scale_to(log_scale, true); };
  const double scale_lo = se.keep.scale_lo, scale_hi = se.keep.scale_hi;
  const int count = std::max(2, int(std::ceil(std::log10(scale_hi / scale_lo) * kScanPerDecade)) + 1);
  const double first = std::log(scale_lo), step = (std::log(scale_hi) - first) / double(count - 1);
  sc.first = first;
  sc.step = step;
  sc.count = count;
  // Scan points k = lo … hi, k = 0 at scale_lo; kScanExtra more each way where the best point sits at an end.
  if (!sc.scores.reset_zeroed(count + 2 * kScanExtra) ||
      !sc.tolerances.reset_filled(count + 2 * kScanExtra, std::numeric_limits<double>::quiet_NaN()))
    return {Status::OutOfMemory};
  const auto score_at = [&](int k) -> double& { return sc.score_at(k); };
  int& lo = sc.lo;
  int& hi = sc.hi;
  int& best = sc.best;
  lo = 0;
  hi = count - 1;
  best = 0;
  // A multi-dimensional Nadaraya–Watson scan runs from the start (s = 1) up, then from there down, and stops each
  // way where a lower bound on CV (cv_scan_bound.h: near the mean going up, near the nearest-neighbour fit going
  // down; each only rises further that way) exceeds the best score found (a score on the 2-D screen's grid plus its
  // margin): those points are not the scan's minimum, and they are its costly ones (reaching every key above, rows
  // redone in double below the spacing). Ties go to
  // the smaller bandwidth, as in the upward scan. A 2-D local-linear point where the singular probe
  // (cv_scan_bound.h) finds a held-out design singular scores +inf, as its evaluation would, without being evaluated
  // (nor on the curve).
  const NearestBound& bound = se.keep.bound;
  const SingularProbe* probe =
      se.dims == 2 && se.criterion.estimator == Estimator::LocalLinear && !bound.active() ? planar_probe(se) : nullptr;
  const auto shown_singular = [&](double log_scale) {
    if (!probe) return false;
    float hf[2];
    for (int64_t d = 0; d < 2; ++d)
      if (!float_bandwidth(se.start[d] * std::exp(log_scale), hf + d)) return false;
    return probe->singular(hf);
  };
  const bool descending = se.descends;
  if (!se.screening && bound.active()) {
    best = -1;
    const auto take = [&](int k) {
      score_at(k) = scan_at(first + k * step);
      if (sc.better(k, best)) best = k;
    };
    // A bound is on the exact score; a screened best point's own exact score is within screen_margin of its score.
    const auto beaten = [&](double floor) {
      if (best < 0 || !std::isfinite(score_at(best))) return false;
      const double won = score_at(best), margin = se.planar_screening ? se.screen_margin(won) : 0.0;
      return floor > (won + margin) * (1 + kBoundMargin);
    };
    // Going up, a point the expansion bound (cv_scan_far.h: the criterion itself within rounding, O(n·p)) rules out
    // is skipped as +inf, and the scan goes on; each point's bound once per search (a resumed search replays it).
    CvSearchKeep& keep = se.keep;
    const ExpansionBound& expansion = keep.expansion;
    if (expansion.active() && !keep.expanded.get()) {
      if (!keep.expanded.reset_filled(count + 2 * kScanExtra, std::numeric_limits<double>::quiet_NaN()))
        return {Status::OutOfMemory};
    }
    const auto ruled_out = [&](int k) {
      float hf;
      if (!expansion.active() || best < 0 || !float_bandwidth(se.start[0] * std::exp(first + k * step), &hf))
        return false;
      double& floor = keep.expanded.get()[k + kScanExtra];
      if (std::isnan(floor)) floor = expansion.lower_bound(double(hf));
      return beaten(floor);
    };
    const int mid = std::clamp(int(std::lround(-first / step)), lo, hi);
    // With the expansion bound, the point just below the start comes first (the downward scan evaluates it unless the
    // nearest-neighbour bound is decisive that high), so that the start, whose bandwidth reaches every key, can be
    // ruled out too.
    const int below = expansion.active() && mid > lo ? mid - 1 : mid;
    if (below < mid) take(below);
    int k = mid;
    for (; k <= hi && !beaten(bound.lower_bound_far(std::exp(first + k * step))); ++k) {
      if (ruled_out(k))
        score_at(k) = kInf;
      else
        take(k);
    }
    for (int j = k; j <= hi; ++j) score_at(j) = kInf;
    for (k = below - 1; k >= lo && !beaten(bound.lower_bound(std::exp(first + k * step))); --k) take(k);
    for (int j = k; j >= lo; --j) score_at(j) = kInf;
  } else if (descending) {
    best = descend(se, sc, lo, hi);
  } else if (se.coarse_scan) {
    best = planar_descend(se, sc, lo, hi, probe);
  } else {
    // The probe runs up the scan until a point is not shown singular: above it each held-out point's keys weigh ever
    // more evenly (every weight's ratio to the nearest key's rises with h), and a point +inf all the same still scores
    // +inf where it is evaluated exactly (the textbook re-solve of its guarded rows). Probing every point cost as much
    // as the grid's evaluations: 16 textbook rows over every key, in double, at the upper decades (2 of 8 s at 10⁵).
    bool probing = probe != nullptr;
    for (int k = lo; k <= hi; ++k) {
      const bool singular = probing && shown_singular(first + k * step);
      probing = singular;
      score_at(k) = singular ? kInf : scan_at(first + k * step);
      if (score_at(k) < score_at(best)) best = k;
    }
  }
  if (se.failure.status != Status::Ok) return se.failure;
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
  return se.failure;
}

}  // namespace cv_search
}  // namespace ka
