// loess's direct surface (direct.h).
#include "stats/loess/direct.h"

#include <algorithm>

#include "stats/loess/local_fit.h"
#include "stats/loess/neighbourhood.h"

namespace ka::loess {

Status direct_fit(const Sample& sample, const FitSpec& spec, const double* y, const double* rw, const double* z,
                  int64_t m, DirectOutputs* out) {
  const int32_t d = sample.dims;
  NeighbourFinder finder(sample, spec.q, spec.span);
  LocalSolver solver;
  Neighbourhood hood;
  LocalFit fit;
  for (int64_t p = 0; p < m; ++p) {
    const double* zp = z + p * d;
    if (!finder.find(zp, rw, &hood)) return Status::BadArgument;
    solver.fit(sample, hood, y, zp, spec.degree, &fit);
    out->pseudo_inverse |= fit.pseudo_inverse;
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
      if (out->variance) variance += entry * entry / out->prior[j];
    }
    if (out->variance) out->variance[p] = variance;
  }
  return Status::Ok;
}

}  // namespace ka::loess
