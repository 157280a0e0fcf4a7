// What the 2-D far tables share (far_side.h, far_corner.h): a Gaussian row a distance D = s·h beyond an edge of the
// sample along an axis weighs a key τ = t/h behind that edge by e^{−(s + τ)²/2} = e^{−s²/2}·e^{−sτ − τ²/2}; the first
// factor is common to the row and cancels in every fit, so the row sees the keys through the tilt e^{−sτ − τ²/2}, a
// smooth function of s that the tables sample at nodes in s and interpolate by cubic Hermite from exact derivatives
// (d E[g]/ds = −Cov(τ, g) under the tilted weights), as the 1-D far table does (far_table.h), whose header this one
// reads for the scratch types.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "engine/local_solve.h"
#include "engine/online_softmax.h"
#include "methods/grid/far_table.h"

namespace ka {

// Nodes in s: evenly kTiltEven apart from 0 to kTiltSwitch, then 20 % apart (kTiltStep in ln s) up to e^24. Near the
// edge the tilted means are smooth in s with derivatives of order 1 (the tilt is nearly the Gaussian itself), so even
// steps of 0.5 err by about 0.5⁴/384 ≈ 1.6e-4 times a fourth derivative of order 1; farther out a fourth derivative is
// a cumulant of τ of order s⁻⁵ and the 20 % steps err by about 1e-4/s bandwidths in the means (the 1-D table,
// far_table.h, steps 5 %). A 2-D node costs a pass over the keys in its reach (a side's also a convolution), and a
// padded chart's rows near an edge fall in a cell each, so the nodes' count is a first call's cost: at 10⁶ points and
// h = 0.05, a 100 × 100 lattice padded 10 % made its tables in 3.2 s natively with 20 % steps from e^−3, 1.3 s with
// even steps of 0.3, 0.8 s with 0.5 (the model's fit: 0.5-0.7 s). The tests (grid_model_far2d_test.cpp) measure the
// fits 0.3 to 10⁴ h out within 1e-3 of range(y) of float64's (at most 3.2e-4 seen), and a corner checks each cell it
// serves (FarCorner::cell_holds).
constexpr double kTiltStep = 0.2;
constexpr double kTiltSwitch = 2.5;
constexpr double kTiltEven = kTiltStep * kTiltSwitch;  // the even step, continuous with the logarithmic one
constexpr int64_t kTiltEvenNodes = 5;                  // s = 0, 0.5, …, 2; then 2.5·e^(0.2m)
constexpr int64_t kTiltNodes = kTiltEvenNodes + 116;   // up to 2.5·e^(0.2·115) ≈ e^23.9
// The nodes' positions, computed once (a row reads four to eight of them).
struct TiltNodes {
  double at[kTiltNodes];
  TiltNodes() {
    for (int64_t k = 0; k < kTiltNodes; ++k)
      at[k] =
          k < kTiltEvenNodes ? double(k) * kTiltEven : kTiltSwitch * std::exp(double(k - kTiltEvenNodes) * kTiltStep);
  }
};
inline double tilt_node(int64_t k) {
  static const TiltNodes nodes;
  return nodes.at[k];
}
// The node below s ≥ 0 (its cell is [s_k, s_{k+1}]), or −1 beyond the last cell.
inline int64_t tilt_cell(double s) {
  if (!(s >= 0)) return -1;
  int64_t k = s < kTiltSwitch ? int64_t(s / kTiltEven)
                              : kTiltEvenNodes + int64_t(std::floor(std::log(s / kTiltSwitch) / kTiltStep));
  k = std::min<int64_t>(k, kTiltNodes - 1);
  if (k > 0 && tilt_node(k) > s) --k;  // the division's or the logarithm's rounding at a node
  if (k + 1 < kTiltNodes && tilt_node(k + 1) <= s) ++k;
  return k + 1 < kTiltNodes ? k : -1;
}

// How far behind the edge, in bandwidths, keys still weigh in for a row s bandwidths beyond it: the τ where the
// tilt's exponent sτ + τ²/2 reaches L (√(s² + 2L) − s without cancellation); 0 where L ≤ 0.
inline double tilt_cut(double s, double L) { return L > 0 ? 2 * L / (std::sqrt(s * s + 2 * L) + s) : 0.0; }

// The cubic Hermite basis at x ∈ [0, 1]: value at 0, slope at 0, value at 1, slope at 1.
struct Hermite {
  double v0, d0, v1, d1;
  explicit Hermite(double x) {
    const double x2 = x * x, x3 = x2 * x;
    v0 = 2 * x3 - 3 * x2 + 1;
    d0 = x3 - 2 * x2 + x;
    v1 = 3 * x2 - 2 * x3;
    d1 = x3 - x2;
  }
};

// A row a table cannot vouch for, fitted directly over the keys it holds (FarSide::direct, FarCorner::direct): the
// weighted design Σ w·z·zᵀ with z = (1, u₁, u₂) and Σ w·z·y per column of y (at most 8), then the engine's guarded
// solve, Nadaraya–Watson's mean from its first entries.
struct DirectRow {
  double A[9] = {}, t[3 * 8] = {};
  void add(double w, const double (&z)[3], const float* y, int64_t width) {
    for (int64_t r = 0; r < 3; ++r) {
      for (int64_t c = 0; c < 3; ++c) A[r * 3 + c] += w * z[r] * z[c];
      for (int64_t c = 0; c < width; ++c) t[c * 3 + r] += w * z[r] * double(y[c]);
    }
  }
  void fit(Estimator estimator, int64_t width, float* mean, bool* guarded) const {
    const bool linear = estimator == Estimator::LocalLinear;
    double l[9], g[3] = {1 / A[0], 0, 0};
    if (linear) *guarded = first_column_of_inverse(A, 3, l, g);
    for (int64_t c = 0; c < width; ++c) mean[c] = mean_to_float(fitted_value(g, t + 3 * c, linear ? 3 : 1, 1));
  }
};

// Rows of `length` doubles allocated zeroed the first time they are asked for (a table's nodes, made lazily: a call
// pays only for the distances its rows ask for); null where memory is short.
class LazyRows {
 public:
  LazyRows() = default;
  LazyRows(const LazyRows&) = delete;
  LazyRows& operator=(const LazyRows&) = delete;
  ~LazyRows() { reset(0, 0); }
  // Forgets every row; room for `rows` rows of `length`. False where memory is short.
  bool reset(int64_t rows, int64_t length) {
    for (int64_t k = 0; k < rows_; ++k) std::free(row_.get()[k]);
    rows_ = 0;
    length_ = length;
    if (!row_.reset_zeroed(rows)) return false;
    rows_ = rows;
    return true;
  }
  double* made(int64_t k) const { return row_.get()[k]; }  // null: not made yet
  double* make(int64_t k) {
    if (!row_.get()[k]) row_.get()[k] = static_cast<double*>(std::calloc(size_t(length_), sizeof(double)));
    return row_.get()[k];
  }

 private:
  int64_t rows_ = 0, length_ = 0;
  Scratch<double*> row_;
};

}  // namespace ka
