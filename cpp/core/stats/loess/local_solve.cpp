// Local weighted least squares of loess (local_fit.h): the solves, from the Gram matrix or, where it is ill
// conditioned, from the weighted design by R's QR and truncated SVD. Per fit, not per point: compiled for size in
// WebAssembly.
#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/loess/local_fit.h"

namespace ka::loess {
namespace {

// The smallest eigenvalue of the unit-diagonal Gram matrix, relative to the largest, that the normal equations may
// serve: their solution then carries about 2e-16 / 1e-7 = 2e-9 relative error.
constexpr double kGramConditionLimit = 1e-7;

}  // namespace

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
