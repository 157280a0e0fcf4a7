// Block moments for tricube-weighted sums over sorted 1-D points (block_moments.h).
#include "stats/loess/block_moments.h"

#include <cmath>

namespace ka::loess {
namespace {

constexpr int kWeightMoments = 14;  // a_0 … a_13: degree 9 of the weight times d^4
constexpr int kValueMoments = 12;   // e_0 … e_11: degree 9 times d^2
constexpr int kStride = kWeightMoments + kValueMoments;

struct Binomials {
  double c[kWeightMoments][kWeightMoments] = {};
  Binomials() {
    for (int l = 0; l < kWeightMoments; ++l) {
      c[l][0] = 1;
      for (int q = 1; q <= l; ++q) c[l][q] = c[l - 1][q - 1] + (q < l ? c[l - 1][q] : 0);
    }
  }
};
const Binomials kBinomials;

}  // namespace

int64_t moment_block_size(int64_t q) {
  if (q < 1024) return 0;
  int64_t b = 64;
  while (b < 512 && 2 * b * 2 * b <= 32 * q) b *= 2;
  return b;
}

void BlockMoments::build(const double* x, const double* y, const double* rw, int64_t n, int64_t block) {
  x_ = x, y_ = y, rw_ = rw, n_ = n, block_ = block;
  const int64_t blocks = block ? n / block : 0;
  centre_.assign(size_t(blocks), 0.0);
  moments_.assign(size_t(blocks * kStride), 0.0);
  for (int64_t k = 0; k < blocks; ++k) {
    const int64_t j0 = k * block;
    const double c = x[j0 + block / 2];
    centre_[size_t(k)] = c;
    double* a = moments_.data() + k * kStride;
    double* e = a + kWeightMoments;
    for (int64_t j = j0; j < j0 + block; ++j) {
      const double d = x[j] - c;
      double p = rw[j], v = rw[j] * y[j];
      for (int l = 0; l < kValueMoments; ++l) {
        a[l] += p;
        e[l] += v;
        p *= d;
        v *= d;
      }
      a[12] += p;
      a[13] += p * d;
    }
  }
}

void BlockMoments::add_points(int64_t a, int64_t b, double z, double inv_h, PolynomialSums* m) const {
  for (int64_t j = a; j < b; ++j) {
    const double d = x_[j] - z, u = std::fabs(d) * inv_h, t = 1 - u * u * u;
    const double w = t * t * t * rw_[j], wd = w * d, wd2 = wd * d, wy = w * y_[j];
    m->s[0] += w;
    m->s[1] += wd;
    m->s[2] += wd2;
    m->s[3] += wd2 * d;
    m->s[4] += wd2 * d * d;
    m->t[0] += wy;
    m->t[1] += wy * d;
    m->t[2] += wy * d * d;
  }
}

void BlockMoments::add_side(int64_t a, int64_t b, double z, double h, double sigma, PolynomialSums* m) const {
  if (a >= b) return;
  const double inv_h = 1 / h;
  const int64_t first = block_ ? (a + block_ - 1) / block_ : 0, end = block_ ? b / block_ : 0;
  if (first >= end) {
    add_points(a, b, z, inv_h, m);
    return;
  }
  add_points(a, first * block_, z, inv_h, m);
  add_points(end * block_, b, z, inv_h, m);
  // D_l = Σ rw d^l and E_l = Σ rw y d^l over the whole blocks.
  double D[kWeightMoments] = {}, E[kValueMoments] = {};
  for (int64_t k = first; k < end; ++k) {
    const double* am = moments_.data() + k * kStride;
    const double* em = am + kWeightMoments;
    double power[kWeightMoments];  // (c − z)^l
    power[0] = 1;
    const double shift = centre_[size_t(k)] - z;
    for (int l = 1; l < kWeightMoments; ++l) power[l] = power[l - 1] * shift;
    for (int l = 0; l < kWeightMoments; ++l) {
      const double* binomial = kBinomials.c[l];
      double da = 0, de = 0;
      for (int q = 0; q <= l; ++q) {
        const double f = binomial[q] * power[l - q];
        da += f * am[q];
        if (l < kValueMoments) de += f * em[q];
      }
      D[l] += da;
      if (l < kValueMoments) E[l] += de;
    }
  }
  // w = 1 − 3σ (d/h)³ + 3 (d/h)⁶ − σ (d/h)⁹ on this side.
  const double v3 = inv_h * inv_h * inv_h;
  const double c[4] = {1, -3 * sigma * v3, 3 * v3 * v3, -sigma * v3 * v3 * v3};
  for (int p = 0; p < 4; ++p) {
    for (int l = 0; l < 5; ++l) m->s[l] += c[p] * D[3 * p + l];
    for (int l = 0; l < 3; ++l) m->t[l] += c[p] * E[3 * p + l];
  }
}

}  // namespace ka::loess
