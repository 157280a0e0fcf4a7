// Jacobi eigen-decomposition, Householder QR and one-sided Jacobi SVD for matrices of at most 15 columns
// (dense.h). Golub & Van Loan, Matrix Computations (4th ed.), §5.1 (Householder), §8.5 (Jacobi), §8.6.3
// (one-sided Jacobi SVD).
#include "stats/loess/dense.h"

#include <algorithm>
#include <utility>
#include <cmath>

namespace ka::loess {
namespace {

// The rotation (c, s) that zeroes the off-diagonal entry of [[app, apq], [apq, aqq]] (Golub & Van Loan 8.5.2),
// choosing the smaller angle.
void jacobi_rotation(double app, double apq, double aqq, double* c, double* s) {
  const double theta = (aqq - app) / (2 * apq);
  const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
  *c = 1 / std::sqrt(t * t + 1);
  *s = t * *c;
}

}  // namespace

void symmetric_eigen(double* a, int k, double* values, double* vectors) {
  for (int i = 0; i < k; ++i)
    for (int j = 0; j < k; ++j) vectors[i * k + j] = i == j ? 1 : 0;
  for (int sweep = 0; sweep < 64; ++sweep) {
    bool rotated = false;
    for (int p = 0; p < k; ++p) {
      for (int q = p + 1; q < k; ++q) {
        const double apq = a[p * k + q];
        if (std::fabs(apq) <= 1e-17 * std::sqrt(std::fabs(a[p * k + p] * a[q * k + q]))) {
          a[p * k + q] = a[q * k + p] = 0;
          continue;
        }
        rotated = true;
        double c, s;
        jacobi_rotation(a[p * k + p], apq, a[q * k + q], &c, &s);
        for (int r = 0; r < k; ++r) {  // columns p and q
          const double arp = a[r * k + p], arq = a[r * k + q];
          a[r * k + p] = c * arp - s * arq;
          a[r * k + q] = s * arp + c * arq;
        }
        for (int r = 0; r < k; ++r) {  // rows p and q
          const double apr = a[p * k + r], aqr = a[q * k + r];
          a[p * k + r] = c * apr - s * aqr;
          a[q * k + r] = s * apr + c * aqr;
        }
        for (int r = 0; r < k; ++r) {
          const double vrp = vectors[r * k + p], vrq = vectors[r * k + q];
          vectors[r * k + p] = c * vrp - s * vrq;
          vectors[r * k + q] = s * vrp + c * vrq;
        }
      }
    }
    if (!rotated) break;
  }
  for (int j = 0; j < k; ++j) values[j] = a[j * k + j];
}

void householder_qr(double* b, int64_t rows, int k, double* tau) {
  for (int j = 0; j < k; ++j) {
    double* col = b + j * rows;
    double tail = 0;
    for (int64_t i = j + 1; i < rows; ++i) tail += col[i] * col[i];
    const double alpha = col[j];
    if (tail == 0) {  // already triangular in this column: the identity reflector
      tau[j] = 0;
      continue;
    }
    const double norm = std::sqrt(alpha * alpha + tail);
    const double beta = alpha >= 0 ? -norm : norm;
    tau[j] = (beta - alpha) / beta;
    const double scale = 1 / (alpha - beta);
    for (int64_t i = j + 1; i < rows; ++i) col[i] *= scale;
    col[j] = beta;
    for (int c = j + 1; c < k; ++c) {  // H = I − tau·v·vᵀ with v = (1, col[j+1:]) applied to column c
      double* other = b + c * rows;
      double w = other[j];
      for (int64_t i = j + 1; i < rows; ++i) w += col[i] * other[i];
      w *= tau[j];
      other[j] -= w;
      for (int64_t i = j + 1; i < rows; ++i) other[i] -= w * col[i];
    }
  }
}

void apply_qt(const double* b, int64_t rows, int k, const double* tau, double* v) {
  for (int j = 0; j < k; ++j) {
    if (tau[j] == 0) continue;
    const double* col = b + j * rows;
    double w = v[j];
    for (int64_t i = j + 1; i < rows; ++i) w += col[i] * v[i];
    w *= tau[j];
    v[j] -= w;
    for (int64_t i = j + 1; i < rows; ++i) v[i] -= w * col[i];
  }
}

void triangular_svd(const double* b, int64_t rows, int k, double* sigma, double* u, double* v) {
  double w[kMaxColumns * kMaxColumns];  // column-major working copy of R
  double vv[kMaxColumns * kMaxColumns];
  for (int c = 0; c < k; ++c)
    for (int r = 0; r < k; ++r) {
      w[c * k + r] = r <= c ? b[c * rows + r] : 0;
      vv[c * k + r] = r == c ? 1 : 0;
    }
  for (int sweep = 0; sweep < 64; ++sweep) {
    bool rotated = false;
    for (int p = 0; p < k; ++p) {
      for (int q = p + 1; q < k; ++q) {
        double alpha = 0, beta = 0, gamma = 0;
        for (int r = 0; r < k; ++r) {
          alpha += w[p * k + r] * w[p * k + r];
          beta += w[q * k + r] * w[q * k + r];
          gamma += w[p * k + r] * w[q * k + r];
        }
        if (gamma == 0 || std::fabs(gamma) <= 1e-17 * std::sqrt(alpha * beta)) continue;
        rotated = true;
        double c, s;
        jacobi_rotation(alpha, gamma, beta, &c, &s);
        for (int r = 0; r < k; ++r) {
          const double wp = w[p * k + r], wq = w[q * k + r];
          w[p * k + r] = c * wp - s * wq;
          w[q * k + r] = s * wp + c * wq;
          const double vp = vv[p * k + r], vq = vv[q * k + r];
          vv[p * k + r] = c * vp - s * vq;
          vv[q * k + r] = s * vp + c * vq;
        }
      }
    }
    if (!rotated) break;
  }
  int order[kMaxColumns];
  double norm[kMaxColumns];
  for (int c = 0; c < k; ++c) {
    double s = 0;
    for (int r = 0; r < k; ++r) s += w[c * k + r] * w[c * k + r];
    norm[c] = std::sqrt(s);
    order[c] = c;
  }
  for (int j = 1; j < k; ++j)  // insertion sort by decreasing norm (stable; k <= 15)
    for (int i = j; i > 0 && norm[order[i - 1]] < norm[order[i]]; --i) std::swap(order[i - 1], order[i]);
  for (int j = 0; j < k; ++j) {
    const int c = order[j];
    sigma[j] = norm[c];
    for (int r = 0; r < k; ++r) {
      u[r * k + j] = norm[c] > 0 ? w[c * k + r] / norm[c] : (r == j ? 1 : 0);
      v[r * k + j] = vv[c * k + r];
    }
  }
}

}  // namespace ka::loess
