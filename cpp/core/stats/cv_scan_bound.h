// A lower bound on Nadaraya–Watson leave-one-out CV at small bandwidths, where each held-out fit approaches the mean of
// its nearest admissible point(s): the scan of select_cv skips the bandwidths that provably cannot be its minimum.
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "stats/bandwidth.h"

namespace ka {

// For the Gaussian kernel at h = s · start (dims values), held-out point i (no observation weights) has weights
// exp(−D_ij² / 2s²), D_ij² = Σ_d ((x_id − x_jd) / start_d)², over its admissible points A_i (j ≠ i, and beyond
// Criterion::exclude along x₁). Let D1_i be the smallest distance, N_i the m_i points at it, ȳ_i their mean, and D2_i
// the next distance. Every other weight is at most ρ_i(s) = exp(−(D2_i² − D1_i²) / 2s²) times theirs, so
//   |f₋ᵢ(x_i) − ȳ_i| <= δ_i(s) = range(y) · min(1, (|A_i| − m_i) · ρ_i(s) / m_i)
// and CV(s) >= LB(s) = Σ_i Σ_c max(0, |y_ic − ȳ_ic| − δ_ic(s))² / n, which rises as s falls. A scan point with
// LB(s) above the best score found is not the scan's minimum, and need not be evaluated: below the spacing of a
// multi-dimensional sample those evaluations are the costly ones (the engine redoes rows whose weights underflow
// float32 in double, key by key).
// At large s every weight lies in [a_i, 1], a_i(s) = exp(−Dmax_i² / 2s²), Dmax_i an upper bound of the distances
// from x_i. With ȳ_i and sd_i the mean and standard deviation of y over A_i, Σ_j w_j (y_j − ȳ_i) =
// Σ_j (w_j − (1 + a_i)/2)(y_j − ȳ_i) and Σ_j w_j >= |A_i| a_i give
//   |f₋ᵢ(x_i) − ȳ_i| <= ε_i(s) = min(range(y), (1 − a_i) / (2 a_i) · sd_i)
// and CV(s) >= UB(s) = Σ_i Σ_c max(0, |y_ic − ȳ_ic| − ε_ic(s))² / n, which rises with s: the scan's top points,
// which reach every key (O(n²) each), are skipped where it exceeds the best score.
class NearestBound {
 public:
  // active() is false (and both bounds 0) unless: at least `min_dims` dimensions (the unbounded scan of a small 1-D
  // sample is cheap and left as it is), Gaussian, Nadaraya–Watson, leave-one-out, no observation weights, no other
  // mask, every x and y finite, every held-out point with an admissible point. A sample already sorted by its first
  // coordinate is not sorted again.
  NearestBound(const Problem& p, const Criterion& c, const double* start, int64_t min_dims = 2);
  Status status() const { return status_; }
  bool active() const { return active_; }
  double lower_bound(double s) const;      // LB(s): the bound near the nearest-neighbour fit
  double lower_bound_far(double s) const;  // UB(s): the bound near the mean

 private:
  Status status_ = Status::Ok;
  bool active_ = false;
  int64_t n_, width_;
  Scratch<double> gap_, ratio_, residual_, range_;  // per point: D2² − D1², (|A| − m)/m; n × width; width
  Scratch<double> far_, mean_residual_, sd_;        // per point: Dmax²; n × width: |y − ȳ|, sd over A_i
};

// Local-linear leave-one-out CV is +inf at a bandwidth where some held-out point's float64 design is singular
// (bandwidth.h; the float32 pass's guard, whose floor is 10⁸ times the singular threshold, flags such a row, and the
// score's textbook re-solve refuses it). Below the spacing of a large sample most scan points are such: some point's
// design rests on too few keys, every other key outweighed by a factor beyond 1e10 — in 1-D one neighbour (the
// design has 2 columns), in 2-D two (3 columns: two keys and the point span one line). The probe tries the few points
// whose last such key is closest against the next one (the largest D2² − D1² in 1-D, over the distinct values of x and
// one point a value, D3² − D1² in 2-D, the distances
// in units of the search's start), each by the textbook solve over the keys in its reach: one singular design proves
// the score +inf without the O(n) pass.
// Per point k of a 2-D sample x sorted by its first coordinate, every coordinate finite: D3² − D1², its third and
// first smallest squared distances to the other points in units of `start` (0 with fewer than three others), into
// spread[k]. The points are bucketed on square cells of about two points each (in those units), and each point visits
// the rings of cells around its own until the next ring lies beyond D3; where points crowd a few cells (a far outlier
// stretches the box) or a point's nearest lie beyond kMaxRings rings, it sweeps outward along x₁ instead, until x₁'s
// term alone exceeds D3². Either way the same values as over every point (the sweep alone visited about 2·D3·n points
// a point: 0.8 s of a 10⁵-point search, profiled in WebAssembly). Returns false without memory for the cells.
bool planar_spreads(ConstMatrix x, const double* start, double* spread);

class SingularProbe {
 public:
  // `sorted`: the sample sorted by its first coordinate (a search's, keys_in_reach's `sorted`), leave-one-out, 1-D or
  // 2-D; `start` (dims values, may be null in 1-D): the search's start, whose units rank the 2-D distances. active()
  // is false unless: local-linear, leave-one-out, no observation weights, no blocked band, at least 4 points.
  SingularProbe(const Problem& sorted, const Criterion& c, const double* start = nullptr);
  Status status() const { return status_; }
  bool active() const { return active_; }
  // Whether CV at bandwidths h (dims values) is shown to be +inf (false: not shown, the score must be evaluated).
  bool singular(const float* h) const;

 private:
  static constexpr int64_t kProbes = 16;
  Status status_ = Status::Ok;
  bool active_ = false;
  Problem problem_;
  int64_t rows_[kProbes];
  int64_t count_ = 0;
  void keep(double spread[kProbes], double v, int64_t k);
  bool choose_planar(const double* start);
};

}  // namespace ka
