// Standard errors of loess's interpolated surface, as R's predict(se = TRUE) computes them (loess_ise): the
// operator row of the surface at a point q is Σ_t a_t·ℓ_t, a blend of vertex-fit operator rows, and
// se(q) = s·√(Σ_j L_qj² / w_j), w the prior weights.
#pragma once
#include <cstdint>
#include <vector>

#include "stats/loess/blend.h"
#include "stats/loess/id_table.h"
#include "stats/loess/surface.h"

namespace ka::loess {

// Σ_j (Σ_t a_t ℓ_t(j))² / w_j = Σ_t Σ_u a_t a_u G(t, u), G the vertex operators' weighted Gram entries
// Σ_j ℓ_t(j) ℓ_u(j) / w_j. A point's terms touch few vertices, so G is computed for the pairs of vertices asked
// for and kept: each pair costs one pass over the points both neighbourhoods share (1-D: a run of sorted points;
// more dimensions: every point), and later queries in the same cells cost only the double sum.
class InterpolatedVariance {
 public:
  // ops: the vertex operators of the fit with the prior weights (R's standard errors ignore robustness weights).
  InterpolatedVariance(const Sample& sample, const KdTree& tree, const std::vector<VertexOperator>& ops,
                       int32_t degree);

  double at(const BlendTerm* terms, int count);

 private:
  const double* pair(int32_t a, int32_t b);  // (dims + 1)² entries G(a·c, b·e) at [c·(dims + 1) + e], a <= b
  void neighbour_run(int32_t v, int64_t* begin, int64_t* end) const;  // 1-D: the points with d² < rho

  const Sample& sample_;
  const KdTree& tree_;
  const std::vector<VertexOperator>& ops_;
  int32_t degree_;
  IdTable pair_ids_;           // vertex pair → its entries' place in pairs_
  std::vector<double> pairs_;  // (dims + 1)² entries per pair computed
};

}  // namespace ka::loess
