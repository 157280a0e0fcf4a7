// Local weighted least squares of loess (local_fit.h): the sums over a neighbourhood (the solves are in
// local_solve.cpp).
#include "stats/loess/local_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ka::loess {
int design_columns(int32_t dims, int32_t degree) {
  return degree == 0 ? 1 : degree == 1 ? dims + 1 : (dims + 1) * (dims + 2) / 2;
}

void LocalSolver::fit(const Sample& sample, const Neighbourhood& hood, const double* y, const double* z, int32_t degree,
                      LocalFit* out) {
  const int32_t dims = sample.dims;
  const int k = design_columns(dims, degree);
  out->k = k;
  out->pseudo_inverse = false;
  double g[kMaxColumns * kMaxColumns] = {}, b[kMaxColumns] = {}, row[kMaxColumns];
  const size_t count = hood.index.size();
  if (dims == 1 && degree == 2) {  // the common case, with the moments of d = x − z
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, t0 = 0, t1 = 0, t2 = 0;
    const double* x = sample.x.data();
    for (size_t t = 0; t < count; ++t) {
      const int64_t i = hood.index[t];
      const double w = hood.weight[t], d = x[i] - z[0], wd = w * d, wd2 = wd * d, wy = w * y[i];
      s0 += w;
      s1 += wd;
      s2 += wd2;
      s3 += wd2 * d;
      s4 += wd2 * d * d;
      t0 += wy;
      t1 += wy * d;
      t2 += wy * d * d;
    }
    const double m[9] = {s0, s1, s2, s1, s2, s3, s2, s3, s4};
    std::copy(m, m + 9, g);
    b[0] = t0, b[1] = t1, b[2] = t2;
  } else {
    for (size_t t = 0; t < count; ++t) {
      const int64_t i = hood.index[t];
      const double w = hood.weight[t];
      design_row(sample.point(i), z, dims, degree, row);
      for (int a = 0; a < k; ++a) {
        const double wa = w * row[a];
        for (int c = a; c < k; ++c) g[a * k + c] += wa * row[c];
        b[a] += wa * y[i];
      }
    }
    for (int a = 0; a < k; ++a)
      for (int c = 0; c < a; ++c) g[a * k + c] = g[c * k + a];
  }
  if (!solve_gram(g, b, k, out)) fit_by_svd(sample, hood, y, z, degree, out);
}

}  // namespace ka::loess
