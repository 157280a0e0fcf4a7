// Local weighted least squares of loess (local_fit.h).
#include "stats/loess/local_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ka::loess {
namespace {

// The smallest eigenvalue of the unit-diagonal Gram matrix, relative to the largest, that the normal equations may
// serve: their solution then carries about 2e-16 / 1e-7 = 2e-9 relative error.
constexpr double kGramConditionLimit = 1e-7;

}  // namespace

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

bool solve_gram(const double* g, const double* b, int k, LocalFit* out) {
  out->k = k;
  out->pseudo_inverse = false;
  // R equilibrates the weighted design's columns to unit norm: the square roots of the Gram diagonal.
  double scale[kMaxColumns];
  for (int a = 0; a < k; ++a) scale[a] = g[a * k + a] > 0 ? std::sqrt(g[a * k + a]) : 1;
  double c[kMaxColumns * kMaxColumns], lambda[kMaxColumns], v[kMaxColumns * kMaxColumns];
  for (int a = 0; a < k; ++a)
    for (int e = 0; e < k; ++e) c[a * k + e] = g[a * k + e] / (scale[a] * scale[e]);
  symmetric_eigen(c, k, lambda, v);
  const double largest = *std::max_element(lambda, lambda + k), smallest = *std::min_element(lambda, lambda + k);
  if (!(largest > 0 && smallest > kGramConditionLimit * largest)) return false;
  for (int a = 0; a < k; ++a)
    for (int e = 0; e < k; ++e) {
      double s = 0;
      for (int j = 0; j < k; ++j) s += v[a * k + j] * v[e * k + j] / lambda[j];
      out->inverse[a * k + e] = s / (scale[a] * scale[e]);
    }
  for (int a = 0; a < k; ++a) {
    double s = 0;
    for (int e = 0; e < k; ++e) s += out->inverse[a * k + e] * b[e];
    out->coef[a] = s;
  }
  return true;
}

void LocalSolver::fit_by_svd(const Sample& sample, const Neighbourhood& hood, const double* y, const double* z,
                             int32_t degree, LocalFit* out) {
  const int32_t dims = sample.dims;
  const int k = design_columns(dims, degree);
  out->k = k;
  out->pseudo_inverse = false;
  // R equilibrates the weighted design's columns to unit norm.
  double scale[kMaxColumns] = {}, row[kMaxColumns];
  for (size_t t = 0; t < hood.index.size(); ++t) {
    design_row(sample.point(hood.index[t]), z, dims, degree, row);
    for (int a = 0; a < k; ++a) scale[a] += hood.weight[t] * row[a] * row[a];
  }
  for (int a = 0; a < k; ++a) scale[a] = scale[a] > 0 ? std::sqrt(scale[a]) : 1;
  const int64_t rows = std::max<int64_t>(int64_t(hood.index.size()), k);  // zero rows pad a tiny neighbourhood
  design_.assign(size_t(rows * k), 0.0);
  eta_.assign(size_t(rows), 0.0);
  for (size_t t = 0; t < hood.index.size(); ++t) {
    const int64_t i = hood.index[t];
    const double root = std::sqrt(hood.weight[t]);
    design_row(sample.point(i), z, dims, degree, row);
    for (int a = 0; a < k; ++a) design_[size_t(a * rows) + t] = root * row[a] / scale[a];
    eta_[t] = root * y[i];
  }
  double tau[kMaxColumns], sigma[kMaxColumns], u[kMaxColumns * kMaxColumns], v[kMaxColumns * kMaxColumns];
  householder_qr(design_.data(), rows, k, tau);
  apply_qt(design_.data(), rows, k, tau, eta_.data());
  triangular_svd(design_.data(), rows, k, sigma, u, v);
  const double tol = sigma[0] * 100 * std::numeric_limits<double>::epsilon();
  double gamma[kMaxColumns], inv[kMaxColumns];
  for (int j = 0; j < k; ++j) {
    const bool kept = tol < sigma[j];
    out->pseudo_inverse |= !kept;
    inv[j] = kept ? 1 / sigma[j] : 0;
    double s = 0;
    for (int r = 0; r < k; ++r) s += u[r * k + j] * eta_[size_t(r)];
    gamma[j] = s * inv[j];
  }
  for (int a = 0; a < k; ++a) {
    double s = 0;
    for (int j = 0; j < k; ++j) s += v[a * k + j] * gamma[j];
    out->coef[a] = s / scale[a];
    for (int e = 0; e < k; ++e) {
      double t = 0;
      for (int j = 0; j < k; ++j) t += v[a * k + j] * inv[j] * inv[j] * v[e * k + j];
      out->inverse[a * k + e] = t / (scale[a] * scale[e]);
    }
  }
}

}  // namespace ka::loess
