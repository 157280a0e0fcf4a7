// Exact and approximate statistics of loess fits, and Student's t quantile (statistics.h). The approximation's
// constants are Cleveland & Grosse's, as R's ehg141 and ehg176 tabulate them.
#include "stats/loess/statistics.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/scratch.h"

namespace ka::loess {
namespace {

// (c1, c2, c3) of the δ formula, by [δ1 or δ2][degree 1 or 2][dimension 1 … 4] (R's ehg141 table, in its order).
constexpr double kDeltaCoefficients[2][2][4][3] = {{{{.2971620, .3802660, .5886043},
                                                     {.4263766, .3346498, .6271053},
                                                     {.5241198, .3484836, .6687687},
                                                     {.6338795, .4076457, .7207693}},
                                                    {{.1611761, .3091323, .4401023},
                                                     {.2939609, .3580278, .5555741},
                                                     {.3972390, .4171278, .6293196},
                                                     {.4675173, .4699070, .6674802}}},
                                                   {{{.2848308, .2254512, .2914126},
                                                     {.5393624, .2517230, .3898970},
                                                     {.7603231, .2969113, .4740130},
                                                     {.9664956, .3629838, .5348889}},
                                                    {{.2075670, .2822574, .2369957},
                                                     {.3911566, .2981154, .3623232},
                                                     {.5508869, .3501989, .4371032},
                                                     {.7002667, .4291632, .4930370}}}};

// The correction g(z) of the δ formula: a 1-D loess surface R stores as a k-d tree (ehg176), here as its vertices
// in increasing z with their values and slopes, between which it is the cubic Hermite interpolant.
constexpr int kCorrectionVertices = 10;
constexpr double kCorrection[kCorrectionVertices][3] = {
    {-0.005, -9.0572e-2, 4.4844},  {0.1204, 9.5807e-2, -0.7978},  {0.2017, 2.6152e-2, -0.7286},
    {0.2815, -3.1926e-2, -0.4457}, {0.3705, -5.3718e-2, -0.3495}, {0.4536, -6.4170e-2, 3.2813e-2},
    {0.5591, -5.8387e-2, 0.1611},  {0.7132, -2.0636e-2, 0.3350},  {0.8751, 4.0172e-2, -4.1032e-2},
    {1.005, -1.0856e-2, -0.7736}};

double correction(double z) {
  int i = 0;  // the interval [v_i, v_{i+1}] holding z; at a vertex, the one to its left (R's descent)
  while (i + 2 < kCorrectionVertices && z > kCorrection[i + 1][0]) ++i;
  const double* a = kCorrection[i];
  const double* b = kCorrection[i + 1];
  const double w = b[0] - a[0], h = (z - a[0]) / w;
  const double phi0 = (1 - h) * (1 - h) * (1 + 2 * h), phi1 = h * h * (3 - 2 * h);
  const double psi0 = h * (1 - h) * (1 - h), psi1 = h * h * (h - 1);
  return phi0 * a[1] + phi1 * b[1] + (psi0 * a[2] + psi1 * b[2]) * w;
}

// x^p for x in [0, 1] by exp and log, which the modules link already (std::pow links 4 kB of tables).
double power(double x, double p) { return x > 0 ? std::exp(p * std::log(x)) : 0; }

// ln Γ(x), x > 0: shifted up to x >= 15 by the recurrence, then Stirling's series to the x⁻⁹ term (error below
// 1e-16 relative there). Only the t quantile needs it (std::lgamma links musl's 3 kB).
double log_gamma(double x) {
  double shift = 0;
  for (; x < 15; x += 1) shift -= std::log(x);
  const double r = 1 / x, r2 = r * r;
  const double series = r * (1.0 / 12 - r2 * (1.0 / 360 - r2 * (1.0 / 1260 - r2 * (1.0 / 1680 - r2 / 1188))));
  return shift + (x - 0.5) * std::log(x) - x + 0.91893853320467274178 + series;
}

int columns_of_degree(int degree, int32_t dims) { return degree == 1 ? dims + 1 : (dims + 2) * (dims + 1) / 2; }

// R's ehg141 for one degree (1 or 2).
void deltas_of_degree(double trace, int64_t n, int degree, int32_t tau, int32_t dims, double* delta1, double* delta2) {
  const double corx = std::sqrt(tau / double(n));
  double z = (std::sqrt(tau / trace) - corx) / (1 - corx);
  z = std::min(1.0, std::max(0.0, z));
  const double c4 = std::exp(correction(z));
  const int d = std::min<int32_t>(dims, 4) - 1;
  double* out[2] = {delta1, delta2};
  for (int which = 0; which < 2; ++which) {
    const double* c = kDeltaCoefficients[which][degree - 1][d];
    *out[which] = double(n) - trace * std::exp(c[0] * power(z, c[1]) * power(1 - z, c[2]) * c4);
  }
}

// The regularised incomplete beta function I_x(a, b) by its continued fraction (modified Lentz), on the side of
// x where it converges fast.
double incomplete_beta(double x, double a, double b) {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const bool flip = x > (a + 1) / (a + b + 2);
  if (flip) std::swap(a, b), x = 1 - x;
  const double front =
      std::exp(log_gamma(a + b) - log_gamma(a) - log_gamma(b) + a * std::log(x) + b * std::log(1 - x)) / a;
  constexpr double tiny = 1e-300;
  double c = 1, d = 1 - (a + b) * x / (a + 1);
  d = 1 / (std::fabs(d) < tiny ? tiny : d);
  double f = d;
  const auto step = [&](double num) {
    d = 1 + num * d;
    c = 1 + num / c;
    d = 1 / (std::fabs(d) < tiny ? tiny : d);
    if (std::fabs(c) < tiny) c = tiny;
    f *= d * c;
    return d * c;
  };
  for (int m = 1; m <= 500; ++m) {
    step(m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)));
    if (std::fabs(step(-(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))) - 1) < 1e-16) break;
  }
  const double v = front * f;
  return flip ? 1 - v : v;
}

}  // namespace

double approximate_trace(int32_t tau, int32_t dims, double span) {
  const double g = (-0.08125 * dims + 0.13) * dims + 1.05;
  double trace[2];
  for (int degree = 1; degree <= 2; ++degree)
    trace[degree - 1] = columns_of_degree(degree, dims) * (1 + std::max(0.0, (g - span) / span));
  const int a = columns_of_degree(1, dims), b = columns_of_degree(2, dims);
  const double alpha = double(tau - a) / double(b - a);
  return (1 - alpha) * trace[0] + alpha * trace[1];
}

void approximate_deltas(double trace, int64_t n, int32_t dims, int32_t tau, double* delta1, double* delta2) {
  double d1[2], d2[2];
  for (int degree = 1; degree <= 2; ++degree)
    deltas_of_degree(trace, n, degree, tau, dims, &d1[degree - 1], &d2[degree - 1]);
  const int a = columns_of_degree(1, dims), b = columns_of_degree(2, dims);
  const double alpha = double(tau - a) / double(b - a);
  *delta1 = (1 - alpha) * d1[0] + alpha * d1[1];
  *delta2 = (1 - alpha) * d2[0] + alpha * d2[1];
}

Status exact_statistics(const double* L, int64_t n, double* trace, double* delta1, double* delta2) {
  Scratch<double> m_buffer(n * n), mm_buffer(n * n);
  if (!m_buffer.ok() || !mm_buffer.ok()) return Status::OutOfMemory;
  double *m = m_buffer.get(), *mm = mm_buffer.get();
  double t = 0, d1 = 0;
  for (int64_t i = 0; i < n; ++i) {
    t += L[i * n + i];
    for (int64_t j = 0; j < n; ++j) {
      const double v = (i == j ? 1.0 : 0.0) - L[i * n + j];
      m[i * n + j] = v;
      d1 += v * v;
    }
  }
  // (I − L)(I − L)ᵀ, symmetric: rows i >= j, mirrored.
  for (int64_t i = 0; i < n; ++i) {
    const double* ri = m + i * n;
    for (int64_t j = 0; j <= i; ++j) {
      const double* rj = m + j * n;
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += ri[k] * rj[k];
      mm[i * n + j] = mm[j * n + i] = s;
    }
  }
  double d2 = 0;
  for (int64_t i = 0; i < n * n; ++i) d2 += mm[i] * mm[i];
  *trace = t;
  *delta1 = d1;
  *delta2 = d2;
  return Status::Ok;
}

double student_t_quantile(double p, double df) {
  if (!(p > 0 && p < 1 && df > 0)) return std::nan("");
  if (p == 0.5) return 0;
  // For t > 0, P(T > t) = I_x(df/2, 1/2)/2 with x = df/(df + t²), increasing in x: bisect x to the last bit. The
  // tail probability is taken from p directly on each side, so that a p near 0 keeps its digits.
  const double target = p < 0.5 ? 2 * p : 2 * (1 - p);
  double lo = 0, hi = 1;
  for (;;) {
    const double mid = 0.5 * (lo + hi);
    if (!(mid > lo && mid < hi)) break;
    if (incomplete_beta(mid, df / 2, 0.5) < target)
      lo = mid;
    else
      hi = mid;
  }
  const double x = 0.5 * (lo + hi), t = std::sqrt(df * (1 - x) / x);
  return p < 0.5 ? -t : t;
}

}  // namespace ka::loess
