// The interpolated loess surface between the vertices of the k-d tree, as R's ehg128 evaluates it (Cleveland &
// Grosse 1991, §4): cubic Hermite interpolation of the vertex values and slopes across the leaf holding the point,
// and in 2-D the blending with the leaf's four edges, which takes in the vertices neighbouring leaves put on them.
#pragma once
#include <cstdint>

#include "stats/loess/kd_tree.h"

namespace ka::loess {

// The surface at a point is linear in the vertex values: Σ weight · value(vertex, component), component 0 the
// vertex's fitted value and 1 + j its slope along coordinate j.
struct BlendTerm {
  int32_t vertex;
  int32_t component;
  double weight;
};

constexpr int kMaxBlendTerms = 16 * (kMaxDims + 1);  // 4-D's tensor; 2-D's blending has 36

// The terms of the surface at z (scaled coordinates inside the tree's root box); returns their count. With h_j the
// position of z across the leaf along coordinate j (0 at its lower side, 1 at its upper) and w_j the leaf's width,
// the Hermite basis φ0 = (1 − h)²(1 + 2h), φ1 = h²(3 − 2h), ψ0 = h(1 − h)², ψ1 = h²(h − 1) gives the tensor
// interpolant: corner b (upper along j iff bit j) contributes Π_j φ_{b_j}(h_j) of its value and
// ψ_{b_j}(h_j)·w_j·Π_{i≠j} φ_{b_i}(h_i) of its slope along j. In 2-D the result is S_ns + S_ew − tensor, where S_ns
// interpolates, by the same basis across y, the curves along the lower and upper edges (each a Hermite curve along
// x between the edge's two nearest vertices, the leaf's corners or those a finer neighbour across the edge put
// there) and their interpolated y-slopes; S_ew likewise with x and y exchanged.
int blend_terms(const KdTree& tree, const double* z, BlendTerm* terms);

// Σ weight · values[vertex·(dims + 1) + component].
inline double blend_value(const BlendTerm* terms, int count, const double* values, int32_t dims) {
  double s = 0;
  for (int t = 0; t < count; ++t)
    s += terms[t].weight * values[size_t(terms[t].vertex) * size_t(dims + 1) + size_t(terms[t].component)];
  return s;
}

}  // namespace ka::loess
