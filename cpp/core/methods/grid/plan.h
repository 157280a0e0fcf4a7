// The grid's own cost model and accuracy rules (grid.h): how far a kernel's taps reach, when a pass of the
// convolutions runs by FFT, whether a grid costs less than the exact fit, which rows it serves, and the layout of one
// axis. What methods/plan.h decides with and grid_local_fit and GridCv lay their grids out by.
#pragma once
#include <cstdint>

#include "engine/local_fit.h"
#include "kernel/kernels.h"
#include "methods/grid/grid.h"

namespace ka {

// How many bandwidths away a kernel's weight falls below 1e-13 of its peak (the taps stop there); 0 for Cauchy,
// whose tail never does (its taps span the whole grid).
double reach_of(KernelKind kind);

// Whether a pass over `rows` rows of `nodes` bins by 2L + 1 taps costs less by FFT than directly (plan.cpp): along
// the first axis's lines (`lines`), whose direct pass runs in SIMD, or down the second's columns; `box`: only the
// outputs a query inside the box reads, whose transforms are shorter (convolution_size, fft.h).
bool fft_pays(double rows, double nodes, double L, bool lines = true, bool box = false);

// Whether the convolutions on `nodes` nodes per axis (spacing `step`, bandwidth h along that axis) of a `dims`-D
// grid cost less than the exact fit of n points at themselves (plan.cpp says how each is counted).
bool convolutions_pay(KernelKind kind, int64_t nodes, int64_t dims, double h, double step, int64_t n);
// The convolutions' cost (in taps, as convolutions_pay counts them) that convolutions_pay compares, and what a 1-D
// leave-one-out CV of `points` points spread over `range` costs exactly on a search's sorted sample, where each
// held-out point visits only the keys within the kernel's reach (plan.cpp).
double grid_cost(KernelKind kind, int64_t nodes, int64_t dims, double h, double step, bool box = false);
double exact_cv_cost(KernelKind kind, double h, double range, int64_t points);
// What a 2-D leave-one-out CV of `points` points spread over the box range[0] × range[1] costs exactly on a search's
// sample in cells (cv_planar.h), in exact_cv_cost's pairs: each held-out point visits the keys within the kernel's
// reach along both axes, plus kPlanarRowKeys keys' worth.
constexpr double kPlanarRowKeys = 430;
double exact_planar_cost(KernelKind kind, const float* h, const double* range, int64_t points);
// Whether a 2-D local-linear leave-one-out CV score of the sample x (bandwidths h) costs less on a grid of `nodes`
// nodes per axis than exactly (exact_planar_cost). Measured (plan.cpp): a tap of the grid's nine local-linear
// channels costs about kLinearGridTap of those pairs.
constexpr double kLinearGridTap = 8;
bool grid_cv_pays_2d(const SampleExtent& x, KernelKind kind, int64_t nodes, const float* h);

// The weights the grid serves a row with must carry at least this share of the sample's total weight; below it
// (a query beyond the data, an isolated point in leave-one-out) the row is computed exactly. The direct sums round
// relative to a row's own terms. An FFT rounds relative to the largest output of the whole line it transforms,
// at every node, empty ones too: about 1e-16·log₂N of it (measured up to 2e-15 of Σ|bins|·max|tap| at N = 8,192),
// and the moments' largest outputs are at most the total weight (the taps peak at K(0) = 1). A served row's S₀ then
// rounds by at most ~2e-5 of itself (typically far less: the errors of a transform add like a random walk), as do
// its T's relative to max |y| (hence Nadaraya–Watson's fit). A negative or NaN S₀ (FFT noise where there is no
// weight) fails the same test. Local-linear amplifies its moments' errors up to 1/kPivotFloor = 100 times
// (local_fit.h): by FFT it asks 100 times the share for the same bound. Rows below 1e-8 of the total are those with
// hardly a neighbour within a few bandwidths, so few of them run exactly (at 10⁷ points: S₀ < 0.1).
constexpr double kServedShare = 1e-10;
inline double served_share(bool by_fft, bool linear) {
  return by_fft && linear ? kServedShare / kPivotFloor : kServedShare;
}

// Whether the grid's moments give a fit's derivative (gradient.h): local-linear's slope is a row of the same solve,
// for every kernel with a grid; Nadaraya–Watson's derivative weighs each key by ∂ln K/∂q, a moment of the grid only
// where it is linear in the offset (the Gaussian's (x − q)/h²). Elsewhere the derivative runs exactly.
inline bool grid_serves_gradient(KernelKind kind, Estimator estimator) {
  return estimator == Estimator::LocalLinear || kind == KernelKind::Gaussian;
}

// One axis of the grid: input nodes at lo + g·step (g < nodes), output nodes extended by the kernel's reach of L
// taps on each side (E = nodes + 2L), offsets measured in bandwidths, u = m·step/h; `fft`: convolve runs this
// axis's pass by FFT (fft_pays for the rows it has).
struct Axis {
  double lo = 0, hi = 0, step = 1, h = 1;
  int64_t nodes = 1, L = 0, E = 1;
  bool fft = false;
  bool capped = false;  // L was cut to `nodes`: the taps span the box, not the kernel's reach
  // The output nodes the moments hold: `held` from `first_held` (0: all E). A 2-D fit of the sample at itself holds
  // the box's alone (lay_axes), where the margins were up to two thirds of the nodes (at 10⁵ points, 41 MB of 55).
  int64_t first_held = 0, held = 0;
  int64_t held_nodes() const { return held > 0 ? held : E; }
};

// A grid node's moments (convolve_moments; the exact engine's MomentLayout, engine/shifted_sums.h, orders its sums the
// same way), stride() entries: S = Σ K·ω·uᵏ for the p2 powers up to degree 2 (local-linear) or 0 in kPowers order
// (convolution.h), then per column of y T = Σ K·ω·y·uᵏ for the p1 powers up to degree 1 or 0, then, only with
// `squares` (standard errors, effective keys), B = Σ K²·ω²·uᵏ for the p2 powers: a CV score or a fit's means hold
// none (in 2-D local-linear 9 entries a node instead of 15; at 10⁵ points a model's grid of 2¹⁹ nodes 54 MB, not 90).
struct NodeMoments {
  int64_t p2 = 1, p1 = 1, width = 0;
  bool squares = false;
  NodeMoments(bool linear, int64_t dims, int64_t width_, bool squares_)
      : p2(linear ? (dims == 2 ? 6 : 3) : 1), p1(linear ? 1 + dims : 1), width(width_), squares(squares_) {}
  int64_t t(int64_t col) const { return p2 + col * p1; }
  int64_t b() const { return p2 + width * p1; }
  int64_t stride() const { return b() + (squares ? p2 : 0); }
};

// Where the moments of output node (e₁, e₂) lie, in nodes from the first held: axis 2 fastest (1-D: e₂ = 0), as a
// CV score's points come (strips along x₁, each sorted along x₂: cv_planar.h), so that each reads the nodes next
// to the last one's, and as the column passes write them.
inline int64_t held_node(const Axis& x1, const Axis& x2, int64_t e1, int64_t e2) {
  return (e2 - x2.first_held) + x2.held_nodes() * (e1 - x1.first_held);
}

}  // namespace ka
