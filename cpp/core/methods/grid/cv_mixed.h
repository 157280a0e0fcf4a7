// Leave-one-out CV of a mixed regression (stats/mixed.h) with one continuous column, over a bandwidth search, on
// grids. The kernel is a product (categories.h), so a point of group g (its combination of levels) weighs key j by
// ω_j·W(g, g_j), one discrete factor per pair of groups: its moments are the convolution of its mixed bins, every
// point binned with that factor. A score costs O(K·n) to bin for each of the K groups, K convolutions and a pass over
// the points, where the exact score fits every group over all keys in reach: O(n²) once the bandwidth spans the data.
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_fit.h"
#include "stats/categories.h"

namespace ka {

class MixedGridCv {
 public:
  // `f`: the continuous column as GridCv takes it (1-D, keys = queries, no mask, one head; Nadaraya–Watson or
  // local-linear; any observation weights); `c`: its discrete columns (keys = queries: the sample's levels; λ is
  // ignored). Views must outlive this object. `tolerance` as in grid_nodes.
  MixedGridCv(const Fit& f, const Categories& c, double tolerance);

  // Whether the sample suits the grid (finite keys spanning a range, valid weights, a kernel with a grid, tolerance >
  // 0, memory for its sorted copy); if not, every score() declines.
  bool suits() const { return suits_; }
  // The leave-one-out CV score at bandwidth h and λ (c.count values within their ranges) as mixed_cv_score defines it
  // (+inf where a held-out point has no key of positive weight or a singular design), with *served true; *served
  // false, nothing computed, where the plan runs h exactly (plan_grid_cv_cells) or the binning would take more than
  // K·n = kMixedGridWork points (K groups: a score bins every point once per group). Points the grid cannot serve
  // (plan.h's served share, a local-linear pivot the guard would raise) are fitted exactly over the keys in reach.
  Result score(float h, const double* lambda, double* score, bool* served);

  // The cap above: about 2.7·10⁸ binned points a score (a second or two), 268 groups at 10⁶ points.
  static constexpr int64_t kMixedGridWork = int64_t(1) << 28;

 private:
  Fit fit_;
  Categories c_;
  double tolerance_;
  float h_ = 1;  // fit_'s bandwidth
  bool suits_ = false;
  double lo_ = 0, range_ = 0, total_ = 0;
  int64_t counted_ = 0, groups_ = 0;
  // The points with ω > 0 sorted by x: x, y (width per point), ω (with observation weights), their group; each group's
  // points (their places in that order, increasing) from members_[first_[g]]; a group's levels from codes_.
  Scratch<float> x_, y_, w_;
  Scratch<int32_t> group_, codes_;
  Scratch<int64_t> first_, members_;
  Scratch<double> group_weight_;  // Σω per group
};

}  // namespace ka
