// Brent's minimiser of a function of one variable over a bracket (Brent 1973, ch. 5), as the bandwidth searches
// use it.
#pragma once

namespace ka {

// Brent's minimiser over [a, b]: parabolic steps through the three best points, golden-section steps when a parabola
// is untrustworthy, until the bracket is narrower than `tol`. On the smooth, nearly quadratic CV curve in log h it
// needs about half the evaluations of golden section alone. Returns the best x. One copy for every objective: f is
// called through a pointer, once per evaluation (each a whole CV fit).
double brent_with(double (*call)(const void*, double), const void* objective, double a, double b, double tol);
// brent_with from an interior point x of [a, b] whose value fx is known (a scan point's): its first step is a golden
// section from x, where brent_with's first evaluation is the golden section point of [a, b].
double brent_with(double (*call)(const void*, double), const void* objective, double a, double x, double fx, double b,
                  double tol);

// brent_with for any callable f(x) -> double.
template <class F>
double brent(const F& f, double a, double b, double tol) {
  return brent_with([](const void* o, double x) { return (*static_cast<const F*>(o))(x); }, &f, a, b, tol);
}
template <class F>
double brent_from(const F& f, double a, double x, double fx, double b, double tol) {
  return brent_with([](const void* o, double x) { return (*static_cast<const F*>(o))(x); }, &f, a, x, fx, b, tol);
}

}  // namespace ka
