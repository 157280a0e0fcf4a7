// What the 2-D far tables share (far_side.h, far_corner.h): a Gaussian row a distance D = s·h beyond an edge of the
// sample along an axis weighs a key τ = t/h behind that edge by e^{−(s + τ)²/2} = e^{−s²/2}·e^{−sτ − τ²/2}; the first
// factor is common to the row and cancels in every fit, so the row sees the keys through the tilt e^{−sτ − τ²/2}, a
// smooth function of s that the tables sample at nodes in s and interpolate by cubic Hermite from exact derivatives
// (d E[g]/ds = −Cov(τ, g) under the tilted weights), as the 1-D far table does (far_table.h), whose header this one
// reads for the scratch types.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdlib>

#include "methods/grid/far_table.h"

namespace ka {

// Nodes in s: s₀ = 0, then s_k = e^{(k − 1 + kTiltFirst)·kTiltStep}, from e^−3 to e^24 (a row just beyond an edge, s
// below e^−3, interpolates between 0 and the first). The step is four times the 1-D table's (far_table.h): a 2-D node
// costs a pass over the keys in its reach (a side's also its convolution), and a padded chart's rows fall in a cell
// each near the edge, so the nodes' count is the first call's cost. The cubic Hermite error, about (Δs)⁴/384 times a
// fourth derivative that for a tilt is a cumulant of τ of order s⁻⁵, is then about 1e-4/s bandwidths in the means
// (4e-7/s at the 1-D table's 5 %): the tests (grid_model_far2d_test.cpp) measure the fits from 0.3 to 10⁴ h out within
// 1e-3 of range(y) of float64's.
constexpr double kTiltStep = 0.2;
constexpr int64_t kTiltFirst = -15;
constexpr int64_t kTiltNodes = 1 + 27 * 5 + 1;  // s₀ = 0, then e^−3 … e^24
// The nodes' positions, computed once (a row reads four to eight of them).
struct TiltNodes {
  double at[kTiltNodes];
  TiltNodes() {
    at[0] = 0;
    for (int64_t k = 1; k < kTiltNodes; ++k) at[k] = std::exp(double(k - 1 + kTiltFirst) * kTiltStep);
  }
};
inline double tilt_node(int64_t k) {
  static const TiltNodes nodes;
  return nodes.at[k];
}
// The node below s ≥ 0 (its cell is [s_k, s_{k+1}]), or −1 beyond the last cell.
inline int64_t tilt_cell(double s) {
  if (!(s >= 0)) return -1;
  if (s < tilt_node(1)) return 0;
  int64_t k = int64_t(std::floor(std::log(s) / kTiltStep)) - kTiltFirst + 1;
  if (k >= 1 && tilt_node(k) > s) --k;  // the logarithm's rounding at a node
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
