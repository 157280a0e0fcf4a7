// Table-free sin, cos, tan (math.h): Taylor series on a reduced range, evaluated by Horner's rule.
#include "base/math.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace ka::math {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// π/2 as three parts, the first two of 33 bits (k·part exact for |k| < 2^20), and 2/π.
constexpr double kHalfPi1 = 0x1.921fb544p+0, kHalfPi2 = 0x1.0b4611a6p-34, kHalfPi3 = 0x1.3198a2e037073p-69;
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
constexpr double kQuarterPi = 0.78539816339744831;

// sin and cos of r + t for |r| <= π/4 (a little beyond is as accurate) and a tail |t| <= ulp(r): Taylor series to
// r^17 and r^16, whose next terms are below 1e-19 there; the tail enters to first order (cos r ≈ 1, sin r ≈ r).
double sin_kernel(double r, double t) {
  const double z = r * r;
  const double p =
      -1.0 / 6 +
      z * (1.0 / 120 +
           z * (-1.0 / 5040 + z * (1.0 / 362880 + z * (-1.0 / 39916800 +
                                                       z * (1.0 / 6227020800 + z * (-1.0 / 1307674368000 +
                                                                                    z * (1.0 / 355687428096000)))))));
  return r + (r * (z * p) + t * (1 - 0.5 * z));
}
double cos_kernel(double r, double t) {
  const double z = r * r, half = 0.5 * z;
  const double p =
      1.0 / 24 +
      z * (-1.0 / 720 +
           z * (1.0 / 40320 +
                z * (-1.0 / 3628800 + z * (1.0 / 479001600 + z * (-1.0 / 87178291200 + z * (1.0 / 20922789888000))))));
  const double w = 1 - half;
  return w + (((1 - w) - half) + (z * z * p - r * t));  // (1 − w) − half: what rounding 1 − half lost
}

// a + b = sum + error exactly (Knuth's two-sum).
double two_sum(double a, double b, double* error) {
  const double sum = a + b, b_part = sum - a;
  *error = (a - (sum - b_part)) + (b - b_part);
  return sum;
}

// x = r + t + q·π/2 with |r| <= π/4 (about) and t the tail of r: returns r, sets *tail and *quadrant (q mod 4). Each
// pass subtracts the nearest multiple of π/2 in three parts (the first product and difference exact, the other two
// kept in the tail); arguments beyond 2^20·π/2 take further passes on what the first one's rounding left.
double reduce(double x, double* tail, int* quadrant) {
  uint32_t q = 0;
  double t = 0;
  for (int pass = 0; pass < 40 && !(std::fabs(x) <= kQuarterPi * (1 + 0x1p-20)); ++pass) {
    const double k = std::nearbyint(x * kTwoOverPi);
    double e2, e3;
    const double y = two_sum(x - k * kHalfPi1, -k * kHalfPi2, &e2);
    x = two_sum(y, -k * kHalfPi3, &e3);
    t = e2 + e3;
    q += uint32_t(int64_t(k - 4 * std::floor(0.25 * k)));  // k mod 4, exact at any magnitude
  }
  *tail = t;
  *quadrant = int(q & 3);
  return x;
}

}  // namespace

void sin_cos(double x, double* s, double* c) {
  if (!std::isfinite(x)) {
    *s = *c = kNaN;
    return;
  }
  if (x == 0) {
    *s = x;
    *c = 1;
    return;
  }
  int q;
  double t;
  const double r = reduce(x, &t, &q);
  const double sr = sin_kernel(r, t), cr = cos_kernel(r, t);
  switch (q) {
    case 0: *s = sr, *c = cr; break;
    case 1: *s = cr, *c = -sr; break;
    case 2: *s = -sr, *c = -cr; break;
    default: *s = -cr, *c = sr; break;
  }
}

double sin(double x) {
  if (!std::isfinite(x)) return kNaN;
  if (x == 0) return x;  // keeps −0
  int q;
  double t;
  const double r = reduce(x, &t, &q);
  const double v = q & 1 ? cos_kernel(r, t) : sin_kernel(r, t);
  return q & 2 ? -v : v;
}

double cos(double x) {
  if (!std::isfinite(x)) return kNaN;
  int q;
  double t;
  const double r = reduce(x, &t, &q);
  const double v = q & 1 ? sin_kernel(r, t) : cos_kernel(r, t);
  return (q == 1 || q == 2) ? -v : v;
}

double tan(double x) {
  if (!std::isfinite(x)) return kNaN;
  if (x == 0) return x;
  int q;
  double t;
  const double r = reduce(x, &t, &q);
  const double sr = sin_kernel(r, t), cr = cos_kernel(r, t);
  return q & 1 ? -cr / sr : sr / cr;
}

}  // namespace ka::math
