// Block moments for tricube-weighted sums over sorted 1-D points (block_moments.h).
#include "engine/block_moments.h"

#include <cmath>

namespace ka {
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

namespace {

// The sums of a fit of `Degree` over the points [a, b): s[0 … 2·Degree] and t[0 … Degree] (each in the order
// and arithmetic of the full set, so a fit reads the same sums whichever degree asked for them); with Squares, the
// squared weights' Σ rw² t⁶ d^e (e <= 2·Degree) into q.
template <int Degree, bool Squares>
void add_points_of(const double* x, const double* y, const double* rw, int64_t a, int64_t b, double z, double inv_h,
                   PolynomialSums* m, double* q) {
  double s0 = m->s[0], s1 = m->s[1], s2 = m->s[2], s3 = m->s[3], s4 = m->s[4];
  double t0 = m->t[0], t1 = m->t[1], t2 = m->t[2];
  double q0 = 0, q1 = 0, q2 = 0;
  if constexpr (Squares) {
    q0 = q[0];
    if constexpr (Degree >= 1) q1 = q[1], q2 = q[2];
  }
  for (int64_t j = a; j < b; ++j) {
    const double d = x[j] - z, u = std::fabs(d) * inv_h, t = 1 - u * u * u, t3 = t * t * t;
    const double w = t3 * rw[j], wy = w * y[j];
    s0 += w;
    t0 += wy;
    if constexpr (Degree >= 1) {
      const double wd = w * d, wd2 = wd * d;
      s1 += wd;
      s2 += wd2;
      t1 += wy * d;
      if constexpr (Degree >= 2) {
        s3 += wd2 * d;
        s4 += wd2 * d * d;
        t2 += wy * d * d;
      }
    }
    if constexpr (Squares) {
      const double w2 = t3 * t3 * rw[j] * rw[j];
      q0 += w2;
      if constexpr (Degree >= 1) {
        q1 += w2 * d;
        q2 += w2 * d * d;
      }
    }
  }
  m->s[0] = s0, m->s[1] = s1, m->s[2] = s2, m->s[3] = s3, m->s[4] = s4;
  m->t[0] = t0, m->t[1] = t1, m->t[2] = t2;
  if constexpr (Squares) {
    q[0] = q0;
    if constexpr (Degree >= 1) q[1] = q1, q[2] = q2;
  }
}

// The whole blocks' share for a fit of `Degree`: of the shifted moments D_l = Σ rw d^l and E_l = Σ rw y d^l, only
// those the weight's powers d^(3p) times s's d^e (e <= 2·Degree) and t's (e <= Degree) reach.
template <int Degree>
void add_blocks_of(const double* centre, const double* moments, int64_t first, int64_t end, double z, double inv_h,
                   double sigma, PolynomialSums* m) {
  constexpr int kS = 2 * Degree + 1, kT = Degree + 1;  // the sums s and t a fit of Degree reads
  constexpr int kD = 9 + kS, kE = 9 + kT;              // the moments they reach
  static_assert(kD <= kWeightMoments && kE <= kValueMoments, "the blocks keep moments to degree 2");
  double D[kD] = {}, E[kE] = {};
  for (int64_t k = first; k < end; ++k) {
    const double* am = moments + k * kStride;
    const double* em = am + kWeightMoments;
    double power[kD];  // (c − z)^l
    power[0] = 1;
    const double shift = centre[k] - z;
    for (int l = 1; l < kD; ++l) power[l] = power[l - 1] * shift;
    for (int l = 0; l < kD; ++l) {
      const bool weight = l % 3 < kS, value = l < kE && l % 3 < kT;
      if (!weight && !value) continue;
      const double* binomial = kBinomials.c[l];
      double da = 0, de = 0;
      for (int q = 0; q <= l; ++q) {
        const double f = binomial[q] * power[l - q];
        if (weight) da += f * am[q];
        if (value) de += f * em[q];
      }
      if (weight) D[l] += da;
      if (value) E[l] += de;
    }
  }
  // w = 1 − 3σ (d/h)³ + 3 (d/h)⁶ − σ (d/h)⁹ on this side.
  const double v3 = inv_h * inv_h * inv_h;
  const double c[4] = {1, -3 * sigma * v3, 3 * v3 * v3, -sigma * v3 * v3 * v3};
  for (int p = 0; p < 4; ++p) {
    for (int l = 0; l < kS; ++l) m->s[l] += c[p] * D[3 * p + l];
    for (int l = 0; l < kT; ++l) m->t[l] += c[p] * E[3 * p + l];
  }
}

}  // namespace

void BlockMoments::add_points(int64_t a, int64_t b, double z, double inv_h, int degree, PolynomialSums* m,
                              double* squares) const {
  // (Squares to degree 2 would need Σ rw² t⁶ d³ and d⁴, which no caller asks for: degree 2 takes them point by point.)
  if (squares && degree == 0) return add_points_of<0, true>(x_, y_, rw_, a, b, z, inv_h, m, squares);
  if (squares) return add_points_of<1, true>(x_, y_, rw_, a, b, z, inv_h, m, squares);
  if (degree == 0) return add_points_of<0, false>(x_, y_, rw_, a, b, z, inv_h, m, nullptr);
  if (degree == 1) return add_points_of<1, false>(x_, y_, rw_, a, b, z, inv_h, m, nullptr);
  add_points_of<2, false>(x_, y_, rw_, a, b, z, inv_h, m, nullptr);
}

void BlockMoments::add_blocks(int64_t first, int64_t end, double z, double h, double sigma, int degree,
                              PolynomialSums* m) const {
  if (first >= end) return;
  const double inv_h = 1 / h;
  if (degree == 0) return add_blocks_of<0>(centre_.data(), moments_.data(), first, end, z, inv_h, sigma, m);
  if (degree == 1) return add_blocks_of<1>(centre_.data(), moments_.data(), first, end, z, inv_h, sigma, m);
  add_blocks_of<2>(centre_.data(), moments_.data(), first, end, z, inv_h, sigma, m);
}

void BlockMoments::add_side(int64_t a, int64_t b, double z, double h, double sigma, PolynomialSums* m,
                            int degree) const {
  if (a >= b) return;
  const double inv_h = 1 / h;
  const int64_t first = block_ ? (a + block_ - 1) / block_ : 0, end = block_ ? b / block_ : 0;
  if (first >= end) {
    add_points(a, b, z, inv_h, degree, m);
    return;
  }
  add_points(a, first * block_, z, inv_h, degree, m);
  add_points(end * block_, b, z, inv_h, degree, m);
  add_blocks(first, end, z, h, sigma, degree, m);
}

}  // namespace ka
