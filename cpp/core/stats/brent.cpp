// Brent's minimiser (brent.h).
#include "stats/brent.h"

#include <cmath>

namespace ka {

namespace {
constexpr double kGolden = 0.3819660112501051;  // 2 − φ
}  // namespace

double brent_with(double (*call)(const void*, double), const void* objective, double a, double b, double tol) {
  const double x = a + kGolden * (b - a);
  return brent_with(call, objective, a, x, call(objective, x), b, tol);
}

double brent_with(double (*call)(const void*, double), const void* objective, double a, double x, double fx, double b,
                  double tol) {
  const auto f = [&](double at) { return call(objective, at); };
  double w = x, v = x, fw = fx, fv = fx;
  double step = 0, last_step = 0;
  while (b - a > tol) {
    const double mid = 0.5 * (a + b), eps = 0.25 * tol;
    bool parabolic = false;
    if (std::fabs(last_step) > eps) {
      // Vertex of the parabola through (x, fx), (w, fw), (v, fv).
      const double r = (x - w) * (fx - fv), q0 = (x - v) * (fx - fw);
      double p = (x - v) * q0 - (x - w) * r, q = 2 * (q0 - r);
      if (q > 0) p = -p;
      q = std::fabs(q);
      // Accept only a step that stays inside the bracket and shrinks faster than the one before last.
      if (std::fabs(p) < std::fabs(0.5 * q * last_step) && p > q * (a - x) && p < q * (b - x)) {
        last_step = step;
        step = p / q;
        parabolic = true;
        if (x + step - a < 2 * eps || b - (x + step) < 2 * eps) step = x < mid ? eps : -eps;
      }
    }
    if (!parabolic) {
      last_step = (x < mid ? b : a) - x;
      step = kGolden * last_step;
    }
    const double u = std::fabs(step) >= eps ? x + step : x + (step > 0 ? eps : -eps);
    const double fu = f(u);
    if (fu <= fx) {
      (u < x ? b : a) = x;
      v = w;
      fv = fw;
      w = x;
      fw = fx;
      x = u;
      fx = fu;
    } else {
      (u < x ? a : b) = u;
      if (fu <= fw || w == x) {
        v = w;
        fv = fw;
        w = u;
        fw = fu;
      } else if (fu <= fv || v == x || v == w) {
        v = u;
        fv = fu;
      }
    }
  }
  return x;
}

}  // namespace ka
