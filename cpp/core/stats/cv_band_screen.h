// The screen of a large 1-D descent's exact band and lowest grid points (cv_scan.cpp): a scan point below the grid's
// reach costs O(n · keys in reach) exactly (cv_band_window.h), and on a large sample those few points are most of the
// search (8 of 49 evaluations, about 55 % of a 10⁶-point default fit), though the criterion there mostly rises as h
// falls; so do the grid's points far below the minimum, whose convolutions grow as h falls. Each is
// first scored on a stratified subsample of m = band_screen_rows(n) rows (the ⌊(k + ½)·n/m⌋-th of the sorted sample),
// paired with the same rows at a reference point the descent evaluated above it (the last screened point evaluated,
// else the lowest point evaluated when the screen began): the mean D̂ and standard deviation σ̂ of
// the rows' differences of squared residuals give CV(h) − CV(reference) >= D̂ − z·σ̂/√m (z = kBandScreenDeviations), and
// a point whose score that shows above the best found (with the search's margins) is skipped, nor on the curve, as the
// nearest-neighbour bound skips. Paired, the differences spread far less than either residual (both are mostly the
// row's own noise). The skip is statistical, not proven: the n rows' mean difference would have to lie more than z
// standard errors below the subsample's, a chance under 1e-15 in the normal approximation (two looks, a
// quarter of the rows and then all: 2e-15); a held-out design singular on the subsample proves the score +inf.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/scratch.h"
#include "engine/problem.h"
#include "stats/bandwidth.h"

namespace ka {

// Below kBandScreenMinPoints the band costs little and the subsample would be most of the rows; from it the first look
// (a quarter of the rows, lower_difference) decides most points (natively, 6·10⁴ points: 0.049 → 0.039 s a search).
constexpr int64_t kBandScreenMinPoints = int64_t(1) << 15, kBandScreenRows = int64_t(1) << 14;
// The rows of a 1-D screen of n points: kBandScreenRows, half of them below 2^17 points, where the criterion's steps
// between scan points are wider against its noise (natively, 10⁵ points: 0.058 → 0.052 s a search, every shape
// tried faster by 3–27 %, the same h and score; 2·10⁵ points: 0.083 s with 2^14 rows, 0.104 s with 2^13).
inline int64_t band_screen_rows(int64_t n) { return n < (int64_t(1) << 17) ? kBandScreenRows / 2 : kBandScreenRows; }
// A 2-D search's exact points (cv_scan_planar.cpp: below the coarsest grid's reach) each cost a pass of the sample in
// cells (cv_planar.h), O(n·(kPlanarRowKeys + keys in reach)): about 40 % of a 10⁶-point search. Their subsample is
// about kPlanarScreenBlocks of the pass's blocks of 64 neighbouring rows, evenly through the cells' order, fitted by
// the same sweep (a row of the float64 textbook over its window cost 20–40 times a swept row): rows of one block share
// their keys, so the standard error comes from the blocks' sums (cluster-robust), not the rows'. From
// kPlanarScreenMinPoints points, where those blocks are a quarter of the sample at most.
constexpr int64_t kPlanarScreenBlocks = 256, kPlanarScreenMinPoints = 4 * kBandScreenRows;
constexpr double kBandScreenDeviations = 8;

class PlanarSample;

class BandScreen {
 public:
  // `sorted`: the search's sample sorted by x₁ (its kernel's bandwidth is ignored). active() is false unless: the
  // leave-one-out criterion, no observation weights, no other mask, and in 1-D at least kBandScreenMinPoints points
  // where band_window_cv applies (Gaussian, Nadaraya–Watson or local-linear, one column of y); in 2-D at least
  // kPlanarScreenMinPoints points where `cells`, the sample in cells made from `sorted` (cv_planar.h), sweeps the
  // criterion (PlanarSample::sweep_suits), whose fits it takes: the swept rows', the textbook re-solve of the guarded.
  BandScreen(const Problem& sorted, const Criterion& c, const PlanarSample* cells = nullptr);
  bool active() const { return active_; }
  bool has_reference() const { return referenced_; }
  // Scores the rows at the reference bandwidths h (one per dimension); false (the screen then inactive) without
  // memory, or where some row's design is singular at h.
  bool set_reference(const float* h);
  // The lower bound D̂ − z·σ̂/√m on CV(h) − CV(reference): +inf where a row's held-out design is singular at h, NaN
  // where it cannot tell (no reference, no memory, a NaN row). In 1-D, where a quarter of the rows already bound it at
  // `enough` or above, that quarter's bound (two looks at the rows: the chance of error doubles).
  double lower_difference(const float* h, double enough = std::numeric_limits<double>::infinity());
  // Makes h (one per dimension) the reference, taking the rows lower_difference last scored when they were h's; false
  // (the reference unchanged) without memory or where some row is not finite at h.
  bool move_reference(const float* h);
  // What float32 rounding may move the scores compared about a score s: the band's at h, the reference's, and the
  // subsample's two, each by at most 2·√s·e + e², e = 2^-16 · max|y| (256 float32 steps of the largest value a fit
  // weighs: without noise, CV is that rounding, and the subsample's differ from the band's sums).
  double rounding(double s) const { return 4 * (2 * std::sqrt(s) * rounding_ + rounding_ * rounding_); }

 private:
  Problem problem_;
  Estimator estimator_;
  const PlanarSample* cells_;
  bool active_ = false, referenced_ = false;
  double rounding_ = 0;
  int64_t m_ = 0;                   // rows
  int64_t every_ = 1, blocks_ = 0;  // 2-D: every every_-th block of the sweep, blocks_ of them, each ending at ends_
  Scratch<int64_t> rows_, ends_;
  Scratch<double> reference_, trial_;
  float trial_h_[2] = {};  // the bandwidths whose rows trial_ holds (none while trial_dims_ is 0)
  int64_t trial_dims_ = 0;
  bool residuals(const float* h, double* out) { return residuals(h, out, 0, m_); }
  bool residuals(const float* h, double* out, int64_t from, int64_t to);  // rows [from, to) into out[from, to)
  double bound(int64_t m) const;  // D̂ − z·σ̂/√m over trial_'s first m rows against the reference's
  bool planar_residuals(const float* h, double* out);
};

}  // namespace ka
