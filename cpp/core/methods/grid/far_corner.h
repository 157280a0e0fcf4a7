// A 2-D Gaussian fit beyond a corner of the sample (beyond its box along both axes), as a function of the two
// distances: the grid model's rows there read it in O(1) after nodes made once per bandwidth.
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_fit.h"
#include "methods/grid/far_tilt.h"

namespace ka {

// The keys within some reach behind both edges of a corner (τ_d bandwidths behind the edge along axis d), by τ₁
// ascending, their values (width each) and ω.
struct CornerKeys {
  int64_t count = 0;
  Scratch<double> t1, t2;
  Scratch<float> y, w;
};

// A row s_d = D_d/h_d beyond the corner along each axis weighs key j by ω_j·e^{−s₁τ₁ − τ₁²/2 − s₂τ₂ − τ₂²/2}
// (far_tilt.h, along both axes): its fit depends on (s₁, s₂) through the tilted means E[τ₁ᵃτ₂ᵇ] (a + b ≤ 2) and
// E[y·τ₁ᵃτ₂ᵇ] (a + b ≤ 1). Each node (s₁, s₂) on the tilt nodes' lattice sums, exactly over the keys within its cut,
// ω·tilt·τ₁ᵃτ₂ᵇ (a, b ≤ 3) and ω·tilt·y·τ₁ᵃτ₂ᵇ (a, b ≤ 2), shifted by the largest log-tilt of a key with weight so that
// no distance underflows them, and keeps those means with their derivatives ∂/∂s₁, ∂/∂s₂ and ∂²/∂s₁∂s₂ (the tilt's
// cumulants: −Cov(τ_d, g) and the third joint central moment of τ₁, τ₂, g); a row interpolates them by bicubic Hermite
// in the cell around (s₁, s₂), then solves as the exact fit does, guard included. The cut: keys beyond τ_d,c along
// either axis weigh together at most 2W·e^{−(s_d·τ_d,c + τ_d,c²/2)} (W the sample's Σω), kept below ε times the node's
// weight (a lower bound of the row's): τ_d,c = tilt_cut(s_d, ln(2W/(ε·Σw))), found in at most three passes; a node that
// would need keys beyond those held is marked, and rows around it run exactly.
class FarCorner {
 public:
  // Forgets the keys and nodes unless made for these edges (e₁, e₂ and their sides), bandwidths, ε, total, keys and
  // `width` columns; returns whether it kept them.
  // `keys`: the sample's size; omega_max its largest observation weight (1 without); `y_range`: max y − min y over
  // it (the tolerance's scale, cell_holds).
  bool keep(const double* edge, const bool* low, const double* h, double eps, double total, int64_t keys,
            double omega_max, double y_range, int64_t width);
  // The reach (bandwidths behind the edge along axis d) the keys must cover for rows from s on; the reaches held.
  double reach_for(double s) const;
  const double* reach() const { return reach_; }
  CornerKeys& keys() { return keys_; }
  // Holds the keys gathered to these reaches; the nodes that needed more are made again.
  void held(double r1, double r2);
  // The largest reach a node asked for beyond those held (0: none).
  const double* wanted() const { return wanted_; }

  // The row at (s₁, s₂): writes `width` means and returns true, with *guarded as the solve's guard says; false beyond
  // the last nodes, where a node around it would need keys beyond those held, or memory was short.
  bool fit(double s1, double s2, Estimator estimator, float* mean, bool* guarded);

  // The interpolated quantities: E τ₁, E τ₂, E τ₁², E τ₁τ₂, E τ₂², then per column E y, E yτ₁, E yτ₂.
  int64_t quantities() const { return 5 + 3 * width_; }

 private:
  // Node (k₁, k₂): per quantity its value and derivatives (∂₁, ∂₂, ∂₁₂), then a last entry 1 where it is usable;
  // made now if not yet; null where memory was short.
  const double* node(int64_t k1, int64_t k2);
  int64_t stride() const { return 4 * quantities() + 1; }
  // The quantities with their derivatives at (s₁, s₂) from the keys held within the cut, into v (4 per quantity);
  // false where the cut reaches beyond the keys held (wanted_ says how far) or memory was short (*status).
  bool exact_at(const double* s, double* v, Status* status);
  // The bicubic Hermite interpolation in cell (k₁, k₂) at (s₁, s₂) of its corners' nodes `at` into q.
  void interpolate(const double* const* at, int64_t k1, int64_t k2, double s1, double s2, double* q) const;
  // The fit (width means) from the quantities q at (s₁, s₂); returns whether the guard acted.
  bool solve(double s1, double s2, const double* q, Estimator estimator, double* mean) const;
  // Whether cell (k₁, k₂) serves its rows, checked once per estimator: at its centre, the fit from the interpolated
  // quantities against the fit from the exact ones, within kCellCheck times the tolerance times range(y). A cell where
  // the tilt's weight moves between distant groups of keys (a wedge-shaped sample beyond its empty corner, or far out,
  // where one key or another nearest the corner takes all the weight) fails, and its rows are fitted directly.
  bool cell_holds(const double* const* at, int64_t k1, int64_t k2, Estimator estimator);
  // The row fitted directly over the keys held, as FarSide::direct: O(k) for the k keys within its cut; false where
  // those reach beyond the keys held (wanted_ says how far).
  bool direct(double s1, double s2, Estimator estimator, float* mean, bool* guarded);

  double edge_[2] = {0, 0}, h_[2] = {0, 0}, eps_ = 0, total_ = 0, reach_[2] = {-1, -1};
  double log_gather_ = 0, log_guess_ = 0, wanted_[2] = {0, 0};  // as FarSide's
  bool low_[2] = {true, true}, ok_ = false;
  int64_t width_ = 0;
  CornerKeys keys_;
  LazyRows nodes_;            // row k₁: kTiltNodes nodes k₂ of stride() each
  Scratch<uint8_t> checked_;  // per cell and estimator: 0 not checked, 1 serves, 2 runs exactly
  double y_range_ = 0, tolerance_ = 0, skip_ = 0, omega_max_ = 1;
};

}  // namespace ka
