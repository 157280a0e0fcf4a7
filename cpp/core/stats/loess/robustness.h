// The robustness steps of loess's family = "symmetric" (Cleveland 1979; Cleveland & Grosse 1991, §3), as R's
// lowesw and lowesp compute them.
#pragma once
#include <cstdint>

namespace ka::loess {

// Bisquare weights from residuals e (R's lowesw): with c = 6·median|e| (the mean of the two middle values for even
// n), w = 1 where |e| <= 0.001·c, (1 − (e/c)²)² where |e| <= 0.999·c, 0 beyond; all 1 when c is below the smallest
// normal double. out: n entries.
void robustness_weights(const double* residuals, int64_t n, double* out);

// The pseudovalues whose residuals give the symmetric family's residual scale (R's lowesp): with r = y − ŷ,
// m = median(|r|·√prior), c = (6m)²/5 and S = Σ (1 − r²·prior/c)·√robust, ỹ = ŷ + (n/S)·robust·r. out: n entries.
void pseudovalues(const double* y, const double* fitted, const double* prior, const double* robust, int64_t n,
                  double* out);

}  // namespace ka::loess
