// The plug-in rule's binned estimates (plugin.h): linear binning of (x, y) on an equally spaced grid, and local
// polynomial fits at the grid's nodes with Gaussian weights on the binned data (Wand & Jones 1995, §5.8; KernSmooth's
// rlbin.f, locpoly.f, sdiag.f and sstdiag.f define the same quantities).
//
// Not the grid method's binning (methods/grid/binning.h): that one bins the engine's float32 sample on the nodes its
// plan chooses; this one bins double x and y on dpill's M nodes over [a, b] with R's rule for the end points
// (a point at b goes wholly to the last node; points outside are dropped or put on the end nodes), so the counts are
// R's to the last bit.
#pragma once
#include <cstdint>

namespace ka {

// Linear binning on M nodes a + g·step, step = (b − a)/(M − 1): a point at a + (g + r)·step, 0 <= r < 1, adds 1 − r
// to counts[g] and r to counts[g + 1], and (1 − r)·y, r·y to sums. R's rounding: t = (x − a)/step + 1 is computed
// first (1-based), g = ⌊t⌋ − 1, r = t − ⌊t⌋, and x = b takes g = M − 2, r = 1. Points with g outside [0, M − 1)
// are dropped when `truncate` (counted in `dropped`, their y summed into `dropped_sum`), else added whole to the end
// node on their side.
struct RegressionBins {
  double* counts = nullptr;  // M entries, zeroed by the caller
  double* sums = nullptr;    // M entries, zeroed by the caller
  int64_t nodes = 0;         // M >= 2
  double lo = 0, hi = 0;     // a < b
  int64_t dropped = 0;
  double dropped_sum = 0;
  double step() const { return (hi - lo) / double(nodes - 1); }
};
// Bins points [first, end) into `bins` (added to what they hold).
void bin_regression(const double* x, const double* y, int64_t first, int64_t end, bool truncate, RegressionBins* bins);

// The local fits at node g use the nodes g + d, |d| <= L = ⌊4h/step⌋ (within the grid), with weights
// counts[g + d]·exp(−(d·step/h)²/2): a weighted least-squares polynomial in x − node g. Only nodes holding data
// (counts ≠ 0) are fitted; a fit is singular when fewer nodes with data than its degree + 1 lie in its window.

enum class BinnedFit { Ok, Singular, OutOfMemory };

// Σ_{g = first … last, counts[g] ≠ 0} m̂''(node g)² counts[g], m̂'' twice the x² coefficient of the local cubic at
// bandwidth h. Singular when one of those fits is.
BinnedFit binned_curvature(const RegressionBins& bins, double h, int64_t first, int64_t last, double* sum);

// The local-linear fits m̂ at bandwidth h, at every node holding data: residual = Σ_g (m̂_g² counts[g] − 2 m̂_g sums[g]),
// self = Σ_g S_gg counts[g] and self_squared = Σ_g (SSᵀ)_gg counts[g], where S is the binned smoother (m̂ = S·sums):
// S_gg = [W⁻¹]₀₀ and (SSᵀ)_gg = [W⁻¹ V W⁻¹]₀₀ for the window's weighted moment matrices W (weights w) and V
// (weights w²). Singular when one of the fits is.
struct LinearParts {
  double residual = 0, self = 0, self_squared = 0;
};
BinnedFit binned_linear_parts(const RegressionBins& bins, double h, LinearParts* parts);

}  // namespace ka
