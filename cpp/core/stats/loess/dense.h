// Small dense linear algebra for loess's local fits (at most 15 columns, R's limit for degree 2 in 4-D): the
// symmetric eigen-decomposition, Householder QR and the SVD of a square triangular factor, all in float64.
#pragma once
#include <cstdint>

namespace ka::loess {

constexpr int kMaxColumns = 15;

// Eigen-decomposition of the symmetric k × k matrix a (row-major, overwritten) by cyclic Jacobi rotations:
// values[j] the eigenvalues, vectors (row-major, k × k) their unit eigenvectors as columns. Off-diagonal entries
// below 1e-17·√(a_pp·a_qq) are treated as zero, which keeps the eigenvalues of a positive definite matrix accurate
// relative to themselves (Demmel & Veselić 1992). Eigenvalues are not sorted.
void symmetric_eigen(double* a, int k, double* values, double* vectors);

// Householder QR of the rows × k matrix b (column-major, leading dimension rows, rows >= k), in place as LINPACK's
// dqrdc without pivoting leaves it: R on and above the diagonal, the reflectors below it, their scalars in tau.
void householder_qr(double* b, int64_t rows, int k, double* tau);

// v ← Qᵀ·v for the Q of householder_qr (v has `rows` entries).
void apply_qt(const double* b, int64_t rows, int k, const double* tau, double* v);

// The SVD R = U·diag(sigma)·Vᵀ of the k × k upper triangle of a householder_qr result, by one-sided Jacobi
// rotations: sigma sorted decreasing, u and v row-major k × k with the singular vectors as columns.
void triangular_svd(const double* b, int64_t rows, int k, double* sigma, double* u, double* v);

}  // namespace ka::loess
