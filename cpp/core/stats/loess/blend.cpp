// Hermite interpolation and 2-D blending of loess's vertex fits (blend.h).
#include "stats/loess/blend.h"

namespace ka::loess {
namespace {

struct Hermite {
  double phi[2], psi[2];  // φ0, φ1, ψ0, ψ1 at h
};

Hermite hermite(double h) {
  return {{(1 - h) * (1 - h) * (1 + 2 * h), h * h * (3 - 2 * h)}, {h * (1 - h) * (1 - h), h * h * (h - 1)}};
}

struct Terms {
  BlendTerm* out;
  int count = 0;
  void add(int32_t vertex, int32_t component, double weight) { out[count++] = {vertex, component, weight}; }
};

// The tensor-product Hermite interpolant of the leaf's corners, each weight multiplied by `sign`.
void tensor_terms(const KdTree& tree, int32_t leaf, const Hermite* basis, const double* width, double sign,
                  Terms* terms) {
  const int32_t d = tree.dims;
  for (int32_t b = 0; b < tree.corners; ++b) {
    const int32_t v = tree.corner_of(leaf, b);
    double phi[kMaxDims], all = sign;
    for (int32_t j = 0; j < d; ++j) all *= phi[j] = basis[j].phi[(b >> j) & 1];
    terms->add(v, 0, all);
    for (int32_t j = 0; j < d; ++j) {
      double w = sign * basis[j].psi[(b >> j) & 1] * width[j];
      for (int32_t i = 0; i < d; ++i)
        if (i != j) w *= phi[i];
      terms->add(v, 1 + j, w);
    }
  }
}

// One edge of a 2-D leaf: the boundary where coordinate `across` is at the leaf's lower (side 0) or upper (side 1)
// end, running along the other coordinate. Its curve is the Hermite interpolant along the edge between its two
// nearest vertices: the leaf's corners there, or, when the neighbouring leaf across the edge is finer, the nearer
// corners of that leaf (found as R finds it: the deepest ancestor cut on this very line, then down its other side
// by z). The curve's value enters with `value_weight`, its interpolated slope across the edge with `slope_weight`.
void edge_terms(const KdTree& tree, const int32_t* path, int len, const double* z, int32_t across, int side,
                double value_weight, double slope_weight, Terms* terms) {
  const int32_t along = 1 - across, leaf = path[len - 1];
  const int32_t bit_across = side << across;
  int32_t v0 = tree.corner_of(leaf, bit_across), v1 = tree.corner_of(leaf, bit_across | (1 << along));
  double a0 = tree.vertex(v0)[along], a1 = tree.vertex(v1)[along];
  const double line = tree.vertex(v0)[across];
  for (int m = len - 2; m >= 0; --m) {
    const KdCell& cell = tree.cells[size_t(path[m])];
    if (cell.axis != across || cell.split != line) continue;
    int32_t down[kMaxDepth];
    const int n = kd_descend(tree, z, side ? cell.upper : cell.lower, down);
    const int32_t neighbour = down[n - 1], facing = (1 - side) << across;
    const int32_t n0 = tree.corner_of(neighbour, facing), n1 = tree.corner_of(neighbour, facing | (1 << along));
    if (a0 < tree.vertex(n0)[along]) v0 = n0, a0 = tree.vertex(n0)[along];
    if (tree.vertex(n1)[along] < a1) v1 = n1, a1 = tree.vertex(n1)[along];
    break;
  }
  const Hermite e = hermite((z[along] - a0) / (a1 - a0));
  const double len_along = a1 - a0;
  terms->add(v0, 0, value_weight * e.phi[0]);
  terms->add(v1, 0, value_weight * e.phi[1]);
  terms->add(v0, 1 + along, value_weight * e.psi[0] * len_along);
  terms->add(v1, 1 + along, value_weight * e.psi[1] * len_along);
  terms->add(v0, 1 + across, slope_weight * e.phi[0]);
  terms->add(v1, 1 + across, slope_weight * e.phi[1]);
}

}  // namespace

int blend_terms(const KdTree& tree, const double* z, BlendTerm* out) {
  int32_t path[kMaxDepth];
  const int len = kd_descend(tree, z, 0, path);
  const int32_t leaf = path[len - 1], d = tree.dims;
  const double *lo = tree.vertex(tree.corner_of(leaf, 0)), *hi = tree.vertex(tree.corner_of(leaf, tree.corners - 1));
  Hermite basis[kMaxDims];
  double width[kMaxDims];
  for (int32_t j = 0; j < d; ++j) {
    width[j] = hi[j] - lo[j];
    basis[j] = hermite((z[j] - lo[j]) / width[j]);
  }
  Terms terms{out};
  if (d != 2) {
    tensor_terms(tree, leaf, basis, width, 1.0, &terms);
    return terms.count;
  }
  tensor_terms(tree, leaf, basis, width, -1.0, &terms);
  // S_ns: the lower (south) and upper (north) edges, interpolated across y; S_ew: west and east across x.
  edge_terms(tree, path, len, z, 1, 0, basis[1].phi[0], basis[1].psi[0] * width[1], &terms);
  edge_terms(tree, path, len, z, 1, 1, basis[1].phi[1], basis[1].psi[1] * width[1], &terms);
  edge_terms(tree, path, len, z, 0, 0, basis[0].phi[0], basis[0].psi[0] * width[0], &terms);
  edge_terms(tree, path, len, z, 0, 1, basis[0].phi[1], basis[0].psi[1] * width[0], &terms);
  return terms.count;
}

}  // namespace ka::loess
