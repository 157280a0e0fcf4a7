// One local weighted least-squares fit of loess (R's ehg127; Cleveland & Grosse 1991, §2): the local polynomial at
// a point, the pseudo-inverse that makes its operator, and the operator's entries.
#pragma once
#include <cstdint>
#include <vector>

#include "stats/loess/dense.h"
#include "stats/loess/neighbourhood.h"
#include "stats/loess/sample.h"

namespace ka::loess {

// The number of columns of the local design: 1 (degree 0), dims + 1 (degree 1), (dims + 1)(dims + 2)/2 (degree 2).
int design_columns(int32_t dims, int32_t degree);

// The local design row of point x for the fit at z, in R's column order: 1; x_j − z_j for each j; then for degree
// 2, for each j, (x_j − z_j)² followed by (x_j − z_j)(x_l − z_l) for each l > j.
inline void design_row(const double* x, const double* z, int32_t dims, int32_t degree, double* row) {
  row[0] = 1;
  if (degree == 0) return;
  double d[kMaxDims];
  for (int32_t j = 0; j < dims; ++j) row[1 + j] = d[j] = x[j] - z[j];
  if (degree == 1) return;
  int c = 1 + dims;
  for (int32_t j = 0; j < dims; ++j) {
    row[c++] = d[j] * d[j];
    for (int32_t l = j + 1; l < dims; ++l) row[c++] = d[j] * d[l];
  }
}

struct LocalFit {
  int k = 1;                 // design columns
  double coef[kMaxColumns];  // the local polynomial: coef[0] the value at z, coef[1 + j] its slope along j
  double inverse[kMaxColumns * kMaxColumns];  // A, row-major k × k: the operator of point i is A·row_i·w_i
  bool pseudo_inverse = false;                // a singular value at or below R's tolerance was dropped
};

// Fits local polynomials. With Z the design and W the weights of a neighbourhood, the coefficients minimise
// Σ w_i (y_i − row_i·β)², and A is the pseudo-inverse of ZᵀWZ as R forms it: columns scaled to unit norm, then
// R's truncated SVD (singular values at or below 100·ε times the largest dropped), scaling undone. Both come from
// the scaled Gram matrix when it is well conditioned (smallest eigenvalue above 1e-7 of the largest: the solution
// then agrees with R's QR route to about 1e-9); otherwise the weighted design is built and factored as R does
// (Householder QR, then the SVD of R), so nearly singular neighbourhoods get R's pseudo-inverse.
class LocalSolver {
 public:
  void fit(const Sample& sample, const Neighbourhood& hood, const double* y, const double* z, int32_t degree,
           LocalFit* out);

 private:
  void fit_by_svd(const Sample& sample, const Neighbourhood& hood, const double* y, const double* z, int32_t degree,
                  LocalFit* out);

  std::vector<double> design_;  // the weighted, scaled design of the SVD route (column-major)
  std::vector<double> eta_;
};

// The local fit from the weighted Gram matrix g = ZᵀWZ (k × k, row-major) and b = ZᵀWy, when the scaled g is well
// conditioned (LocalSolver's first route); false otherwise, for the caller to take the design route.
bool solve_gram(const double* g, const double* b, int k, LocalFit* out);

// The operator entries of point x (weight w, the neighbourhood weight of the fit) for the fit at z: out[c] for the
// first `count` coefficients (value, slopes), the amount y at x contributes to each.
inline void operator_entries(const LocalFit& fit, const double* x, const double* z, int32_t dims, int32_t degree,
                             double w, int count, double* out) {
  double row[kMaxColumns];
  design_row(x, z, dims, degree, row);
  for (int c = 0; c < count; ++c) {
    double s = 0;
    if (c < fit.k)
      for (int j = 0; j < fit.k; ++j) s += fit.inverse[c * fit.k + j] * row[j];
    out[c] = s * w;
  }
}

}  // namespace ka::loess
