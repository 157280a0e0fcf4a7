// A small limited-memory BFGS minimiser (Nocedal & Wright 2006, Algorithms 7.4–7.5) with simple bounds handled by
// projection, as in projected quasi-Newton methods (Bertsekas 1982; a light form of L-BFGS-B, Byrd et al. 1995):
// variables held at a bound by the gradient are frozen for the iteration, the two-loop recursion runs on the free
// ones, and the backtracking line search follows the projected path P(x + t·d) under the Armijo condition
// f(P(x + t·d)) <= f(x) + 1e-4 · g·(P(x + t·d) − x). Header-only, no allocation beyond one Scratch block.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/scratch.h"

namespace ka {

struct LbfgsOptions {
  int32_t memory = 6;                   // (s, y) pairs kept
  int32_t max_iterations = 100;         // accepted steps
  double gradient_tolerance = 1e-5;     // stop when max |projected gradient| <= this · max(|f|, 1e-300)
  double improvement_tolerance = 1e-9;  // stop when an accepted step lowers f by less than this · |f|
};

// Why the minimiser stopped. Failed: the objective was not finite at the start. Aborted: the objective returned NaN
// (the caller's own stop: a cancellation or an error it keeps).
enum class LbfgsStop : int32_t { Gradient, Improvement, Iterations, LineSearch, Failed, Aborted, OutOfMemory };

// Minimises f over the box lower <= x <= upper (n variables; a bound may be ±inf), starting from x (projected into
// the box first) and writing the last accepted point back into x. `evaluate(x, threshold, g)` returns f(x) (+inf
// where undefined) and, when f(x) <= threshold, also writes the gradient into g: the line search passes its Armijo
// bound, so rejected trial points cost no gradient (the start is passed +inf). Returning NaN aborts. `f` receives
// f at the returned x; `iterations` the accepted steps.
template <class Evaluate>
LbfgsStop lbfgs_box(int64_t n, double* x, const double* lower, const double* upper, Evaluate&& evaluate,
                    const LbfgsOptions& o, double* f_out, int32_t* iterations = nullptr) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const int64_t m = std::max<int32_t>(o.memory, 1);
  // g, trial x, trial g, direction, then m pairs (s, y), then m scalars rho, alpha.
  Scratch<double> work(4 * n + 2 * m * n + 2 * m);
  if (!work.ok()) return LbfgsStop::OutOfMemory;
  double* g = work.get();
  double* xt = g + n;
  double* gt = xt + n;
  double* d = gt + n;
  double* S = d + n;
  double* Y = S + m * n;
  double* rho = Y + m * n;
  double* alpha = rho + m;
  const auto dot = [n](const double* a, const double* b) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
    return s;
  };
  // Frozen: at a bound, with the gradient pointing out of the box (a descent step would leave it).
  const auto frozen = [&](int64_t i, const double* grad) {
    return (x[i] <= lower[i] && grad[i] > 0) || (x[i] >= upper[i] && grad[i] < 0);
  };
  if (iterations) *iterations = 0;
  for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], lower[i], upper[i]);
  double f = evaluate(x, kInf, g);
  *f_out = f;
  if (std::isnan(f)) return LbfgsStop::Aborted;
  if (!std::isfinite(f)) return LbfgsStop::Failed;
  int64_t pairs = 0, newest = -1;  // a ring of the last `pairs` pairs, the newest at index `newest`
  for (int32_t iter = 0; iter < o.max_iterations; ++iter) {
    double largest = 0;
    for (int64_t i = 0; i < n; ++i) largest = std::max(largest, frozen(i, g) ? 0.0 : std::fabs(g[i]));
    if (largest <= o.gradient_tolerance * std::max(std::fabs(f), 1e-300)) return LbfgsStop::Gradient;
    // Two-loop recursion on the free variables: d = −H·g, H the L-BFGS inverse-Hessian estimate.
    for (int64_t i = 0; i < n; ++i) d[i] = frozen(i, g) ? 0 : g[i];
    for (int64_t k = 0; k < pairs; ++k) {
      const int64_t at = (newest - k + m) % m;
      alpha[at] = rho[at] * dot(S + at * n, d);
      for (int64_t i = 0; i < n; ++i) d[i] -= alpha[at] * Y[at * n + i];
    }
    // H0 = γ·I with γ = sᵀy / yᵀy of the newest pair; without pairs a step of at most 1 in the largest variable.
    const double gamma = pairs ? 1 / (rho[newest] * dot(Y + newest * n, Y + newest * n)) : 1 / largest;
    for (int64_t i = 0; i < n; ++i) d[i] *= gamma;
    for (int64_t k = pairs - 1; k >= 0; --k) {
      const int64_t at = (newest - k + m) % m;
      const double beta = rho[at] * dot(Y + at * n, d);
      for (int64_t i = 0; i < n; ++i) d[i] += (alpha[at] - beta) * S[at * n + i];
    }
    for (int64_t i = 0; i < n; ++i) {
      d[i] = frozen(i, g) ? 0 : -d[i];
      if ((x[i] <= lower[i] && d[i] < 0) || (x[i] >= upper[i] && d[i] > 0)) d[i] = 0;  // it could not move that way
    }
    if (!(dot(d, g) < 0)) {  // the estimate lost positive curvature on the free set: restart from steepest descent
      pairs = 0;
      for (int64_t i = 0; i < n; ++i) d[i] = frozen(i, g) ? 0 : -g[i] / largest;
    }
    // Backtracking along the projected path: halve t (or cut it to the minimiser of the quadratic through f(x),
    // the slope and f(x_t), within [0.1, 0.5]·t) until the Armijo condition holds.
    double t = 1, ft = kInf;
    bool accepted = false;
    for (int tries = 0; tries < 30 && !accepted; ++tries) {
      bool moved = false;
      for (int64_t i = 0; i < n; ++i) {
        xt[i] = std::clamp(x[i] + t * d[i], lower[i], upper[i]);
        moved = moved || xt[i] != x[i];
      }
      if (!moved) break;
      double slope = 0;
      for (int64_t i = 0; i < n; ++i) slope += g[i] * (xt[i] - x[i]);
      if (!(slope < 0)) {  // the projection bent the step away from descent: a shorter one bends less
        t *= 0.5;
        continue;
      }
      const double threshold = f + 1e-4 * slope;
      ft = evaluate(xt, threshold, gt);
      if (std::isnan(ft)) return LbfgsStop::Aborted;
      if (ft <= threshold) {
        accepted = true;
        break;
      }
      const double cut = std::isfinite(ft) ? -slope / (2 * (ft - f - slope)) : 0.1;
      t *= std::clamp(cut, 0.1, 0.5);
    }
    if (!accepted) return LbfgsStop::LineSearch;  // no decrease along the direction: x is as good as f can tell
    if (iterations) *iterations = iter + 1;
    // The new pair, kept only with positive curvature (so that H stays positive definite).
    const int64_t next = (newest + 1) % m;
    double sy = 0, ss = 0, yy = 0;
    for (int64_t i = 0; i < n; ++i) {
      S[next * n + i] = xt[i] - x[i];
      Y[next * n + i] = gt[i] - g[i];
      sy += S[next * n + i] * Y[next * n + i];
      ss += S[next * n + i] * S[next * n + i];
      yy += Y[next * n + i] * Y[next * n + i];
    }
    if (sy > 1e-10 * std::sqrt(ss * yy)) {
      rho[next] = 1 / sy;
      newest = next;
      pairs = std::min(pairs + 1, m);
    } else if (pairs == m) {
      --pairs;  // the slot written was the oldest pair's
    }
    const double before = f;
    std::copy(xt, xt + n, x);
    std::copy(gt, gt + n, g);
    f = *f_out = ft;
    if (before - f <= o.improvement_tolerance * std::fabs(f)) return LbfgsStop::Improvement;
  }
  return LbfgsStop::Iterations;
}

}  // namespace ka
