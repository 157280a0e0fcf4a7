// Cleveland's (1979) LOWESS scatterplot smoother, computed as R's lowess() computes it (its C routine clowess):
// robust local-linear fits with tricube weights over the nearest ⌊f·n⌋ points, and bisquare robustness weights.
//   Cleveland, W. S. (1979). Robust locally weighted regression and smoothing scatterplots. JASA 74(368), 829–836.
#pragma once
#include <cstdint>

#include "base/status.h"

namespace ka {

struct LowessOptions {
  double frac = 2.0 / 3.0;  // the span f, in (0, 1]
  int32_t iterations = 3;   // robustness iterations after the first fit, >= 0
  double delta = 0;         // >= 0, in units of x: fits closer than this to the previous fit are interpolated
  int32_t threads = 1;      // fits of one pass run on up to this many threads (ignored where threads cannot start)
};

// With the points sorted by x (stably: ties keep their input order, as R's order() does) and n >= 2:
//   k = max(2, min(n, ⌊f·n + 1e-7⌋)) points per fit. The fit at x_i uses the window of k consecutive points
//   [l, l + k) with the smallest l such that x_i − x_l <= x_{l+k} − x_i (l <= n − k), and
//   h = max(x_i − x_l, x_{l+k−1} − x_i). Tricube weights with R's cut-offs:
//     w_j = r_j · { 1 if |x_j − x_i| <= 0.001 h;  (1 − (|x_j − x_i|/h)³)³ if <= 0.999 h;  0 beyond },
//   over the window and any points tied with x_i beyond it (which matter only when h = 0), r_j the robustness
//   weights (1 in the first pass). If Σw = 0 the fit is y_i itself. Otherwise, with x̄ = Σw x / Σw and
//   c = Σw (x − x̄)² / Σw, the fit is the weighted mean of y plus, when h > 0 and √c > 0.001·range(x), the
//   slope term (x_i − x̄)·Σw (x − x̄) y / (c·Σw): the local-linear fit at x_i.
// delta: after a fit at x_i, the points with x <= x_i + delta are not fitted: those tied with x_i take its value,
//   the next fit is at the last of them (or the next point), and the ones between are interpolated linearly.
// Robustness: after each pass but the last, e = y − ŷ, s = 6·median|e|; if s < 1e-7·mean|e| the iterations stop
//   (the fit is already exact); else r_j = 1 if |e_j| <= 0.001 s, (1 − (e_j/s)²)² if <= 0.999 s, 0 beyond.
//   iterations + 1 passes at most.
// x, y: n values each, in any order, finite. fitted: n doubles, the smoothed values in the input's order.
// robustness_weights: n doubles (or null), the r_j that the final pass used, in the input's order (all 1 when
// iterations = 0 or the first pass was already exact). n = 1: fitted = y, weight 1.
// Returns BadShape for n < 1, BadArgument for frac outside (0, 1], iterations < 0, delta < 0 or not finite, or a
// non-finite x or y; OutOfMemory if scratch (about 9n doubles) cannot be allocated. Inputs are not modified.
Status lowess(const double* x, const double* y, int64_t n, const LowessOptions& options, double* fitted,
              double* robustness_weights);

}  // namespace ka
