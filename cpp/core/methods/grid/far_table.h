// A 1-D Gaussian fit beyond one end of the sample, as a function of the distance: the rows beyond the grid's reach
// (far.cpp) read it in O(1) instead of fitting the keys near the end row by row.
#pragma once
#include <cmath>
#include <cstdint>

#include "base/scratch.h"
#include "engine/local_fit.h"

namespace ka {

// The keys within some reach of one end of a 1-D sample, sorted by their distance t behind it (ties at the end
// first): x, their values (width each) and ω in that order.
struct EndKeys {
  int64_t count = 0;
  Scratch<double> behind;  // t_j ascending
  Scratch<float> x, y, w;
};

// How far behind an end the keys still weigh in for a Gaussian row a distance D beyond it (bandwidth h): a key t
// behind the end weighs r(t) = e^{−t(2D + t)/2h²} relative to the end's keys, so those beyond t_cut, where the mass
// left, at most W·r(t_cut) for the sample's total weight W, falls to ε·ω_end (the end keys' weight), change the fit
// by less than ε relative (far.cpp says how ε follows from the tolerance). 0 where only the end's keys matter.
// far_log is ln(W/(ε·ω_end)), which a caller with many rows computes once.
inline double far_log(double total, double eps, double end_weight) { return std::log(total / (eps * end_weight)); }
inline double far_reach(double D, double h, double log_ratio) {
  if (!(log_ratio > 0)) return 0.0;
  const double c = 2 * h * h * log_ratio;
  return c / (std::sqrt(D * D + c) + D);  // √(D² + c) − D without cancellation
}

// The fit of a Gaussian row at s = D/h bandwidths beyond one end, from the keys behind it. With τ = t/h, every key
// weighs ω·e^{−sτ − τ²/2} times a factor common to the row, which cancels, so the fit depends on s only through the
// tilted means μ_p = E[τ^p] and ν_p = E[y·τ^p] (p ≤ 1 for the fit; Nadaraya–Watson reads ν₀ alone): local-linear's
// moments about the query, in bandwidths, are 1, s + μ₁, s² + 2sμ₁ + μ₂ and ν₀, s·ν₀ + ν₁. The table holds these at
// nodes s_k = e^{k·kFarStep} (k ≥ kFarFirst), with their exact derivatives in s (d E[g]/ds = −Cov(g, τ)), each computed
// the first time a row needs it over the keys within far_reach of that node (exactly the exact fit's keys there), and a
// row interpolates them by cubic Hermite between the nodes around s: an error of about (Δs)⁴/384 times their fourth
// derivative, which for a tilt is a cumulant of τ of order s⁻⁵ (y: of range(y)·s⁻⁴), so at a 5 % step below 1e-7 of
// range(y) — and then solves, guard included (local_solve.h). A model keeps its table for its bandwidth.
constexpr double kFarStep = 0.05;
constexpr int64_t kFarFirst = -60;  // the first node's k: s from e^-3 ≈ 0.05 (rows nearer the end: exactly)
constexpr int64_t kFarNodes = 540;  // s up to e^24

class FarTable {
 public:
  // Forgets the keys and the nodes unless they were made for this end (its value, side), bandwidth, ε, total, the
  // end keys' weight and `width` columns; returns whether it kept them.
  bool keep(double end, bool low, double h, double eps, double total, double end_weight, int64_t width);
  // The reach the keys must cover for rows from s on (far_reach at the node below s), and the keys held now.
  double reach_for(double s) const;
  double reach() const { return reach_; }
  // The keys: the caller gathers into them those within some reach (sorted by t), then says which reach; the nodes
  // already made stay valid (each reads only the keys within its own reach).
  EndKeys& keys() { return keys_; }
  void held(double reach) { reach_ = reach; }

  // The row at s = D/h beyond the end: writes `width` means and returns true, with *guarded as the solve's guard
  // says; false where s lies outside the nodes (below e^-3), or the scratch for nodes was not available.
  bool fit(double s, Estimator estimator, float* mean, bool* guarded);

 private:
  // The node k (s = e^{k·kFarStep}, stored at k − kFarFirst): [μ₁, μ₂, μ₁', μ₂', then per column ν₀, ν₁, ν₀', ν₁'],
  // made now if not yet.
  const double* node(int64_t k);
  int64_t stride() const { return 4 + 4 * width_; }

  double end_ = 0, h_ = 0, eps_ = 0, total_ = 0, end_weight_ = 0, reach_ = -1, log_ratio_ = 0;
  bool low_ = true;
  int64_t width_ = 0;
  EndKeys keys_;
  Scratch<double> nodes_;  // kFarNodes × stride()
  Scratch<double> at_;     // kFarNodes: each node's s
  Scratch<uint8_t> made_;  // kFarNodes
};

}  // namespace ka
