// What the scan-and-refine search of the CV (or AICc) bandwidth shares between its files: the scan's constants, what a
// search keeps across its calls (CvSearchKeep), one call's state (Search: the evaluations and the best point) and
// the scan's points (Scan). cv_scan.cpp scans the common scale (cv_scan_planar.cpp a 2-D search on the grid);
// cv_search.cpp refines, descends per dimension and is select_cv (bandwidth.h).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>

#include "base/scratch.h"
#include "stats/bandwidth_detail.h"
#include "stats/cv_band_screen.h"
#include "stats/cv_scan_bound.h"
#include "stats/cv_scan_far.h"
#include "stats/search_parts.h"

namespace ka {

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
// An exact 2-D local-linear (or Nadaraya–Watson) leave-one-out search of at least kScreenMinPoints points scores its
// scan points on the 2-D grid at this tolerance where one serves h and costs less than the exact score
// (plan_grid_cv_nodes): the scan's upper decades, whose bandwidths reach every key (at 10⁴ uniform points, h from
// about a tenth of the range; Nadaraya–Watson's bounded scan reached 3.5 times the range exactly, 4.3 s at 19,000
// points against 0.7 s on the grid). Its
// scores lie within the 1-D screen's margins of the exact ones (measured on 3,000 and 10,000 points, two samples each,
// h in steps of 1.2: at most 0.48 and 0.52 of screen_margin; at tolerance 1e-4 0.10 and 0.18, at 2e-4 0.19 and 0.35,
// at 1e-3 1.3 times it: cv_scan_2d_test.cpp checks it), so the screen's brackets are the 1-D ones. 3e-4 rather than
// 1e-4: the Gaussian's taps reach 7.8/√(12·tolerance) nodes either way, 225 at 1e-4 and 130 at 3e-4, and the nodes per
// axis shrink by √3 as well, so each 2-D transform has about a third of the entries and the grid pays from a bandwidth
// about √3 times smaller: at 10⁴ uniform points from 0.09 of the range instead of 0.2 (the scan's points at 0.09 and
// 0.14 took 0.4–0.7 s each exactly in WebAssembly, 0.10–0.17 s on the grid; at 2e-4 only the one at 0.14 moves).
constexpr double kPlanarScreenTolerance = 3e-4;

// A 2-D leave-one-out search on the grid (grid_tolerance > 0, at least kScreenMinPoints points) scores a scan point the
// grid cannot serve at that tolerance on the finest grid, up to 2^kCoarseScanSteps times coarser, that serves it and
// costs less than the exact score (plan_scan_tolerance), and never keeps it: such points lie below the grid's reach
// (h under about range/(9·√n) on a uniform sample: most_grid_nodes_2d), where an exact score visits n·π(7.9h)² keys a
// row (at 10⁶ points, h = 0.0067: 8.4 s natively, 0.86 s on a 965² grid at 2e-3). Such a score s at tolerance t errs
// low by about 0.4·t·s/m, m = n·h₁h₂/(range₁·range₂) points a bandwidth square (the neighbours' binning, the point's
// own share taken out as binned: OwnShare, grid/query.h), and high by at most 0.01·t·s (measured on uniform and
// clustered samples of 10⁵ points, m = 2 … 45, t = 2e-3 … 3.2e-2: −0.19·t·s at m = 2 to +0.01·t·s at 45; with K(0)
// taken out instead, up to +0.5·t·s on uniform points and +5 on clustered ones, all high): coarse_margin, by which a
// grid score can lie above the exact one, allows kCoarseMarginPerPoint·t·s/m + kCoarseMarginFloor·t·s. A coarse point
// whose score, less that margin, is not above the best scan point's is refined too (refine, cv_search.cpp). Averaged
// over the points, 1/m of the local density is at most the box's (∫ f·(1/f) is the support's area). Samples whose tails
// leave a global bandwidth few neighbours (lognormal axes) err 1–2·t·s either way, beyond any such margin.
constexpr double kCoarseMarginPerPoint = 0.1, kCoarseMarginFloor = 0.1;
constexpr int kCoarseScanSteps = 5;
// No coarser than this (the measured range above): a search asked for 1e-2 had scored its points at 0.32, with
// spacings of two bandwidths, and at 10⁵ points refined exactly around a score 10³ times too high (14 s, not 0.2).
constexpr double kCoarsestScanTolerance = 3.2e-2;
// A grid scan point past the minimum (planar_descend: the scores above it, extrapolated, put it above the best so far)
// is scored first on a grid kScreenScanCoarser times coarser than its own (no coarser than kCoarsestScanTolerance),
// and at its own tolerance only where that score less its coarse_margin is not above the best's: the CV curve rises
// below its minimum, and such points (at 10⁵ uniform points, h = 0.014 on 640² nodes, 0.14 s natively; on 226² nodes
// 0.02 s) are then shown not the minimum for about an eighth of the grid. 8: the margin, about 0.1·t·s, then rules out
// points 0.1 % above the best (at the default 1e-3).
constexpr double kScreenScanCoarser = 8;

// The range of the common scale s (h_d = s · start_d) that the scan covers (cv_scan.cpp).
Status scan_range(ConstMatrix x, const float* sorted, const double* start, double* lo, double* hi);

// What one search keeps (CvSearchState, bandwidth.h). An exact 1-D leave-one-out search screens its scan on a fine
// grid of its own (kScreenTolerance); then only the refinement's evaluations, all exact, can be returned. Whether the
// scan is screened depends on the sample alone, so a replayed search makes the same choice.
struct CvSearchKeep {
  GridCv grid, screen;
  bandwidth_detail::SearchSample sorted;
  NearestBound bound;
  ExpansionBound expansion;               // the small 1-D scan's upward points (cv_scan_far.h)
  Scratch<double> expanded;               // per scan point going up: its expansion bound, NaN until asked
  std::unique_ptr<NearestBound> nearest;  // the 1-D descent's bounds, made at its first exact point
  std::unique_ptr<SingularProbe> probe;
  std::unique_ptr<BandScreen> band;  // the descent's band screen (cv_band_screen.h), made with its bounds
  Scratch<double> ruled;             // per scan point of the descent: its bound or probe's answer, NaN until asked
  Scratch<double>
      screened;            // per scan point of the descent: the band screen's lower bound on its score, NaN until asked
  int band_reference = 0;  // the scan point whose rows the band screen holds
  // Per scan point of the descent: NaN until scored; −inf where evaluated in full; else the score without the rows
  // the grid could not serve, the point deferred (cv_scan.cpp).
  Scratch<double> partial;
  int partial_points = 0;
  int ruled_points = 0;
  double scale_lo = 0, scale_hi = 0;
  Status status = Status::Ok;
  CvSearchKeep(const Problem& p, const Criterion& criterion, const double* start);
};

namespace cv_search {

using bandwidth_detail::kInf;

// One select_cv call: its inputs, what the search keeps across its calls (CvSearchKeep: grids, sorted sample, bounds,
// the scan's range), the evaluations so far (a resumed search replays them from the curve), the best point evaluated
// and the first failure.
struct Search {
  const Problem& p;
  const Criterion& criterion;
  const SearchProgress& progress;
  CvCurve* const curve;
  const int64_t dims;
  const double* start;
  Scratch<double> trial, best_h;
  double best_score = kInf;
  bool any_holdable = false;  // some evaluated bandwidth was positive and finite (else the scan overflowed)
  Result failure;
  // The evaluations: a resumed search's first ones read back from the curve (CvCurve), the rest computed.
  bandwidth_detail::CurveReplay replay;
  CvSearchKeep& keep;
  // Leave-one-out CV in 1-D: one grid for the whole search, binned once (keep.grid); the exact evaluations' sorted
  // sample, sorted once for the whole search (keep.sorted); the screen (keep.screen).
  const bool screening;
  // An exact 2-D local-linear or Nadaraya–Watson leave-one-out search: its scan points are scored on the 2-D grid at
  // kPlanarScreenTolerance where one serves and pays, and never kept.
  const bool planar_screening;
  // The smallest bandwidth screened: below it the exact fit of a scan point costs about as little as the grid's.
  double screen_from = kInf;
  double y_range = 0;
  // The scan descends from the top (cv_scan.cpp): its points below the grid's reach are the exact band.
  const bool descends;
  // A 2-D search on the grid: its scan points below the grid's reach run on a coarser grid (kCoarseScanSteps).
  const bool coarse_scan;
  double box = 0;  // coarse_scan: the area of the sample's bounding box, range₁·range₂

  Search(const Problem& p_, const Criterion& c, const SearchProgress& progress_, CvCurve* curve_, const double* start_,
         CvSearchKeep& keep_)
      : p(p_),
        criterion(c),
        progress(progress_),
        curve(curve_),
        dims(p_.queries.cols),
        start(start_),
        trial(dims),
        best_h(dims),
        replay(curve_, p_.queries.cols, progress_),
        keep(keep_),
        screening(keep_.screen.suits() && p_.keys.rows >= kScreenMinPoints),
        planar_screening(p_.queries.cols == 2 && c.score == Score::LeaveOneOut &&
                         (c.estimator == Estimator::LocalLinear || c.estimator == Estimator::NadarayaWatson) &&
                         !(c.grid_tolerance > 0) && !(c.exclude > 0) && !p_.masks.any() &&
                         p_.keys.rows >= kScreenMinPoints),
        descends(dims == 1 && c.score == Score::LeaveOneOut && !(c.exclude > 0) && p_.keys.rows >= kScreenMinPoints &&
                 (screening || keep_.grid.suits())),
        coarse_scan(dims == 2 && c.score == Score::LeaveOneOut && c.grid_tolerance > 0 && !(c.exclude > 0) &&
                    !p_.masks.any() && p_.keys.rows >= kScreenMinPoints) {
    const SampleExtent& x = keep.sorted.extent(p);
    if (screening) screen_from = kScreenFrom * x.range[0];
    if (coarse_scan) box = x.range[0] * x.range[1];
    for (int64_t c = 0; (screening || planar_screening) && c < p.values.cols; ++c) {
      double low = kInf, high = -kInf;
      for (int64_t i = 0; i < p.values.rows; ++i) {
        low = std::min(low, double(p.values.row(i)[c]));
        high = std::max(high, double(p.values.row(i)[c]));
      }
      y_range = std::max(y_range, high - low);
    }
  }
  bool ok() const { return trial.ok() && best_h.ok(); }

  double screen_margin(double s) const {
    const double width = double(p.values.cols), e = kScreenFitError * y_range;
    return 2 * std::sqrt(s * width) * e + width * e * e;
  }

  // CV at a bandwidth, recorded on the curve and kept when it is the best so far; NaN-free (+inf for empty
  // neighbourhoods). The search returns the best point it evaluated, so no evaluation is repeated at the end.
  // A scan point while screening (`scan`) is scored on the screening grid where that serves h, and is never kept.
  // After a failure (or a cancellation) nothing more is evaluated: the loops run out on +inf and the search returns.
  // `known` (may be null): the score, already computed as the evaluation would (scan_grid's), recorded as it.
  // `tolerance` (> 0): the grid tolerance a scan point's score runs at, where scan_tolerance's is not wanted (a
  // point screened on a coarser grid: kScreenScanCoarser); never kept when coarser than the criterion's.
  double evaluate(const double* bandwidth, bool scan, const double* known = nullptr, double tolerance = 0);
  // The tolerance a scan point of a coarse_scan search runs at (plan_scan_tolerance; the criterion's elsewhere), and
  // how far above the exact score s its score at that tolerance may lie (kCoarseMarginPerPoint; 0 at the criterion's).
  double scan_tolerance(const double* bandwidth) const;
  double coarse_margin(const double* bandwidth, double s, double tolerance) const;
  // How far the exact score may lie from a score s on the grid at `tolerance` either way (coarse_margin's rule at any
  // tolerance): the exact scan points' screen (cv_scan_planar.cpp) compares exact scores with the grid's.
  double grid_margin(const double* bandwidth, double s, double tolerance) const;
  // The grid that scores scan point h as evaluate routes it (the screen's, or the search's where neither the screen
  // nor the band takes h), or null.
  GridCv* scan_grid(double h);

  // The start times e^log_scale.
  double scale_to(double log_scale, bool scan, const double* known = nullptr, double tolerance = 0) {
    for (int64_t d = 0; d < dims; ++d) trial.get()[d] = start[d] * std::exp(log_scale);
    return evaluate(trial.get(), scan, known, tolerance);
  }
};

// The scan of the common scale: points k = lo … hi at log scale first + k·step (k = 0 at scale_lo), their scores,
// and the best one.
struct Scan {
  double first = 0, step = 0;
  int count = 0, lo = 0, hi = 0, best = 0;
  Scratch<double> scores;  // k = -kScanExtra … count − 1 + kScanExtra
  // The tolerance a point's score ran at where it is not scan_tolerance's (a point screened on a coarser grid), else
  // NaN; the same indices.
  Scratch<double> tolerances;
  double& score_at(int k) { return scores.get()[k + kScanExtra]; }
  double score_at(int k) const { return scores.get()[k + kScanExtra]; }
  double& tolerance_at(int k) { return tolerances.get()[k + kScanExtra]; }
  // The tolerance point k's score ran at (bandwidth b, the point's).
  double tolerance_of(const Search& se, int k, const double* b) const {
    const double t = tolerances.get()[k + kScanExtra];
    return std::isnan(t) ? se.scan_tolerance(b) : t;
  }
  // Whether point k's score beats point `best`'s (best < 0: none yet); ties go to the smaller bandwidth.
  bool better(int k, int best) const {
    return best < 0 || score_at(k) < score_at(best) || (score_at(k) == score_at(best) && k < best);
  }
};

// Coarse scan of the common scale over the whole sensible range (scan_range), log-spaced, extended beyond either
// end while the best point sits there (cv_scan.cpp).
Result scan(Search& se, Scan& sc);

// A 2-D search on the grid (coarse_scan) scores the scan points its grids serve first, from the top down, then those
// below the coarsest grid's reach, which run exactly (a pass of the sample in cells each, O(n·(kPlanarRowKeys + keys
// in reach)): about 40 % of a 10⁶-point search, though the criterion there mostly rises as h falls. The singular probe
// runs first, as in the upward scan: the points from the bottom up to the first it does not show singular score +inf,
// not evaluated. Going down, on kPlanarScreenMinPoints or more, an exact point whose subsample (cv_band_screen.h),
// paired with the lowest point scored above it, shows its score above the best one's is skipped: the reference's exact
// score within grid_margin of its grid score, the best one's within coarse_margin of what the search takes it for.
// Skipped points are not evaluated (nor on the curve). Returns the best point of [low, high] (cv_scan_planar.cpp).
int planar_descend(Search& se, Scan& sc, int low, int high, const SingularProbe* probe);
// The score one scan step below three scores s1, s2, s3 (the next point down, and the two above it; `ratio` the
// scan's step as a factor), by the 2-D local-polynomial CV's shape near its minimum: σ² plus a squared bias growing as
// h⁴ and a variance as 1/(n·h²). At 10⁵ uniform points it put the first point past the minimum within 1e-6 of its
// score, where the parabola through the three missed by 3e-4 (and called points still falling rising).
double cv_extrapolated(double s1, double s2, double s3, double ratio);

}  // namespace cv_search
}  // namespace ka
