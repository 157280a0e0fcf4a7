// loess's direct surface (direct.h).
#include "stats/loess/direct.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/block_moments.h"
#include "stats/loess/local_fit.h"
#include "stats/loess/neighbourhood.h"

namespace ka::loess {
namespace {

// 1-D fits from block moments (values and L_ii only): the neighbourhood of z is the run [begin, end) of sorted
// points, split at z into its two sides. Returns false when the Gram matrix is ill conditioned, for the caller's
// point-by-point fit (R's QR and SVD).
bool moment_fit(const BlockMoments& moments, const double* x, int64_t begin, int64_t end, double z, double rho,
                int32_t degree, LocalFit* fit) {
  const int64_t mid = std::lower_bound(x + begin, x + end, z) - x;
  const double h = std::sqrt(rho);
  PolynomialSums sums;
  moments.add_side(begin, mid, z, h, -1, &sums, degree);
  moments.add_side(mid, end, z, h, 1, &sums, degree);
  const int k = degree + 1;
  double g[9], b[3];
  for (int a = 0; a < k; ++a) {
    b[a] = sums.t[a];
    for (int c = 0; c < k; ++c) g[a * k + c] = sums.s[a + c];
  }
  return solve_gram(g, b, k, fit);
}

// The points [begin, end) of direct_fit; false at a zero-width neighbourhood.
bool direct_points(const Sample& sample, const FitSpec& spec, const double* y, const double* rw, const double* z,
                   int64_t begin_point, int64_t end_point, const BlockMoments* moments, DirectOutputs* out,
                   bool* pseudo_inverse) {
  const int32_t d = sample.dims;
  NeighbourFinder finder(sample, spec.q, spec.span);
  LocalSolver solver;
  Neighbourhood hood;
  LocalFit fit;
  for (int64_t p = begin_point; p < end_point; ++p) {
    const double* zp = z + p * d;
    int64_t begin, end;
    double rho;
    if (moments) {
      if (!finder.run(zp[0], &begin, &end, &rho)) return false;
      if (moment_fit(*moments, sample.x.data(), begin, end, zp[0], rho, spec.degree, &fit)) {
        if (out->fit) out->fit[p] = fit.coef[0];
        if (out->diagonal) out->diagonal[p] = fit.inverse[0] * rw[p];
        continue;
      }
    }
    if (!finder.find(zp, rw, &hood)) return false;
    solver.fit(sample, hood, y, zp, spec.degree, &fit);
    *pseudo_inverse |= fit.pseudo_inverse;
    if (out->fit) out->fit[p] = fit.coef[0];
    // At the data point itself the design row is (1, 0, …) and the tricube weight 1: L_ii = A_00·rw_i.
    if (out->diagonal) out->diagonal[p] = fit.inverse[0] * rw[p];
    if (!out->rows && !out->variance) continue;
    double* row = out->rows ? out->rows + p * sample.n : nullptr;
    if (row) std::fill(row, row + sample.n, 0.0);
    double variance = 0, entry;
    for (size_t t = 0; t < hood.index.size(); ++t) {
      const int64_t j = hood.index[t];
      operator_entries(fit, sample.point(j), zp, d, spec.degree, hood.weight[t], 1, &entry);
      if (row) row[j] = entry;
      // A point of prior weight 0 has operator entry 0 (R divides 0 by 0 there: NaN); it adds nothing.
      if (out->variance && out->prior[j] > 0) variance += entry * entry / out->prior[j];
    }
    if (out->variance) out->variance[p] = variance;
  }
  return true;
}

}  // namespace

Status direct_fit(const Sample& sample, const FitSpec& spec, const double* y, const double* rw, const double* z,
                  int64_t m, DirectOutputs* out) {
  // In 1-D, values alone (no operator rows) come from block moments when neighbourhoods are large.
  const int64_t block = sample.dims == 1 && !out->rows && !out->variance ? moment_block_size(spec.q) : 0;
  BlockMoments moments;
  if (block) moments.build(sample.x.data(), y, rw, sample.n, block);
  const int64_t tasks = fit_tasks(m, spec.q, spec.threads);
  std::vector<uint8_t> failed(size_t(tasks), 0), pseudo(size_t(tasks), 0);
  for_fit_tasks(m, spec.q, spec.threads, [&](int64_t begin, int64_t end, int64_t task) {
    bool singular = false;
    failed[size_t(task)] =
        !direct_points(sample, spec, y, rw, z, begin, end, block ? &moments : nullptr, out, &singular);
    pseudo[size_t(task)] = singular;
  });
  for (int64_t t = 0; t < tasks; ++t) out->pseudo_inverse |= pseudo[size_t(t)] != 0;
  for (int64_t t = 0; t < tasks; ++t)
    if (failed[size_t(t)]) return Status::BadArgument;
  return Status::Ok;
}

}  // namespace ka::loess
