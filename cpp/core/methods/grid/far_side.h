// A 2-D Gaussian fit beyond one side of the sample (beyond its box along one axis, within it along the other), as a
// function of the distance and of the other coordinate: the grid model's rows there read it in O(1) instead of an
// exact fit over the keys in their reach (banded_rows.cpp), after a table made once per bandwidth.
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_fit.h"
#include "methods/grid/far_tilt.h"
#include "methods/grid/plan.h"

namespace ka {

// The keys within some reach behind one edge of a 2-D sample, by τ (bandwidths behind the edge along the far axis)
// ascending: τ, the other coordinate v, the values (width each) and ω.
struct SideKeys {
  int64_t count = 0;
  Scratch<double> tau;
  Scratch<float> v, y, w;
};

// The row at s = D/h beyond the edge and v along the other axis weighs key j by ω_j·e^{−sτ_j − τ_j²/2}·K((v_j − v)/h_o)
// (far_tilt.h): for each s a 1-D Gaussian smoothing along the other axis of tilted per-key quantities. Each node s_k
// bins them (ω·tilt times 1, τ, τ², τ³, y, yτ, yτ²) linearly onto `other` (an axis over the sample's range along the
// other axis, finer than the grid's by kSideRefine) and convolves them (convolve_moments, 1-D) into the sums at every
// output node of that axis — Σw·{1, u, u²}, Σw·τ·{1, u, u²}, Σw·τ²·{1, u}, Σw·τ³, and per column Σw·y·{1, u},
// Σw·y·τ·{1, u}, Σw·y·τ² — over the keys within the node's cut (below). A row interpolates the sums linearly along v
// (as the grid does) at the two nodes around s, forms the tilted means and their derivatives in s there, interpolates
// those by cubic Hermite and solves the same 3 × 3 system as the exact fit, guard included (local_solve.h).
//
// The cut: at node s, the keys beyond τ_c weigh together at most W·e^{−sτ_c − τ_c²/2} (W the sample's Σω), which is
// kept below ε times the row's weight at every output node within the sample's range (the sums Σw there are lower
// bounds of it): τ_c = tilt_cut(s, ln(2W/(ε·min Σw))). Nodes are made with the keys held (the caller gathers them up to
// reach_for(s)); an output node that would need keys beyond those is marked, and rows there run exactly.
constexpr int64_t kSideRefine = 2;
constexpr int64_t kSideBlock = 8;
constexpr int64_t kSideBlocks = (kTiltNodes + kSideBlock - 1) / kSideBlock;

class FarSide {
 public:
  // Forgets the keys and the nodes unless they were made for this edge (its value along the far axis, `low` side),
  // far bandwidth h, other axis, ε, total and `width` columns; returns whether it kept them.
  // `keys`: the sample's size; omega_max its largest observation weight (1 without).
  bool keep(int64_t far_axis, double edge, bool low, double h, const Axis& other, double eps, double total,
            int64_t keys, double omega_max, int64_t width);
  // The reach (bandwidths behind the edge) the keys must cover for rows from s on, and the reach held now.
  double reach_for(double s) const;
  double reach() const { return reach_; }
  SideKeys& keys() { return keys_; }
  // Holds the keys gathered to this reach; the nodes made with fewer are made again.
  void held(double reach);
  // The largest reach a row asked for beyond the keys held (0: none).
  double wanted() const { return wanted_; }

  // The row at s beyond the edge and v along the other axis: writes `width` means and returns true, with *guarded as
  // the solve's guard says; false where v lies outside the sample's range, s beyond the last node, a node around it
  // would need keys beyond those held or has no weight at v, or memory was short (the caller fits the row exactly).
  bool fit(double s, double v, Estimator estimator, float* mean, bool* guarded);

  // Entries per output node: the sums named above, in that order (9 + 5·width).
  int64_t sums() const { return 9 + 5 * width_; }

 private:
  // The row fitted directly over the keys held within its reach, exact Gaussian along v, leaving out what the exact
  // rows leave out (keys more than 25 + log₂ n bits below the largest weight): where the nodes around it cannot serve
  // it (far beyond, where the tilt leaves a few keys at the edge that the taps along v do not reach; or a local-linear
  // row the bins' error would reach through its solve), O(k) for the k keys within the cut; false where those reach
  // beyond the keys held.
  bool direct(double s, double v, Estimator estimator, float* mean, bool* guarded);
  // Makes node k's sums at every output node if not yet; false where memory was short.
  bool node(int64_t k);
  // Node k's sums at output node e: nodes are stored in blocks of kSideBlock consecutive nodes, the block's nodes side
  // by side at each output node, so that the rows of a chart's columns beyond an edge (one position, several
  // distances) and a row's two nodes read neighbouring memory (measured natively: the rows missed the cache on their
  // first read of a node, 37 % of their time, with each node apart). Null where the block is not made.
  double* entry(int64_t k, int64_t e) const;
  bool usable(const double* at) const { return at[0] > 0; }

  double edge_ = 0, h_ = 0, eps_ = 0, total_ = 0, reach_ = -1;
  // The cut's exponent (far_side.h): the guess the keys are gathered for, and the last node's, which the next starts
  // from.
  double log_gather_ = 0, log_guess_ = 0, wanted_ = 0;
  double skip_ = 0, omega_max_ = 1;  // direct(): the exact rows' skip (nats) and the largest ω
  bool low_ = true, ok_ = false;
  int64_t width_ = 0, far_axis_ = 0;
  Axis other_;
  SideKeys keys_;
  LazyRows nodes_;         // blocks of kSideBlock nodes: E × kSideBlock × sums() each
  Scratch<uint8_t> made_;  // per node: made
};

}  // namespace ka
