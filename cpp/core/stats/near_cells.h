// Each point's nearest points in a 2-D sample, on rings of cells (planar_spreads and NearestBound, cv_scan_bound.h).
#pragma once
#include <cstdint>

#include "base/scratch.h"
#include "base/views.h"

namespace ka {

// The rings of cells a point visits at most before its caller sweeps along x₁ instead (cv_scan_bound.h).
constexpr int64_t kMaxRings = 64;

// A 2-D sample (every coordinate finite) bucketed on square cells of about two points each over its box, in units of
// `start`, for each point's nearest points (planar_spreads, NearestBound): a sweep along x₁ alone visits about 2·D·n
// points a point (0.8 s of a 10⁵-point search; 6.9 s for NearestBound at 10⁶), the rings of cells a few.
class NearCells {
 public:
  NearCells(ConstMatrix x, const double* start);
  bool ok() const { return ok_; }
  // The squared distance of points j and k in units of start.
  double distance2(int64_t j, int64_t k) const {
    const double u = (double(x_.row(j)[0]) - double(x_.row(k)[0])) * inverse_[0],
                 v = (double(x_.row(j)[1]) - double(x_.row(k)[1])) * inverse_[1];
    return u * u + v * v;
  }
  // Calls take(j) for the other points j, ring by ring of cells from k's own, until every point not yet visited lies
  // farther than bound() (a squared distance); false where the cells cannot tell (crowded cells, or the bound beyond
  // kMaxRings rings): the caller then sweeps along x₁, as over every point.
  template <class Take, class Bound>
  bool visit(int64_t k, const Take& take, const Bound& bound) const {
    const auto ring_cell = [&](int64_t c0, int64_t c1) {
      if (c0 < 0 || c1 < 0 || c0 >= cells_[0] || c1 >= cells_[1]) return;
      const int64_t c = c0 + cells_[0] * c1;
      for (int64_t m = first_.get()[c]; m < first_.get()[c + 1]; ++m)
        if (member_.get()[m] != k) take(member_.get()[m]);
    };
    const int64_t k0 = cell_of_.get()[k] % cells_[0], k1 = cell_of_.get()[k] / cells_[0];
    for (int64_t r = 0; bucketed_ && r <= kMaxRings; ++r) {  // the ring of cells r away from the point's own
      if (r == 0) ring_cell(k0, k1);
      for (int64_t t = -r; r > 0 && t <= r; ++t) {
        ring_cell(k0 + t, k1 - r);
        ring_cell(k0 + t, k1 + r);
        if (t > -r && t < r) {
          ring_cell(k0 - r, k1 + t);
          ring_cell(k0 + r, k1 + t);
        }
      }
      // Every point not yet visited lies beyond r whole cells along an axis (less a rounding's share).
      const double beyond = double(r) * side_ * (1 - 1e-9);
      if (bound() < beyond * beyond || (r >= cells_[0] && r >= cells_[1])) return true;
    }
    return false;
  }

 private:
  // Counts and indices bounded in double before they become integers (one axis's range can be 10^170 sides; NaN goes
  // to the bound).
  static int64_t index(double v, int64_t top) { return v >= 0 && v < double(top) ? int64_t(v) : v >= 0 ? top : 0; }
  int64_t axis_cell(int64_t k, int d) const {
    return index((double(x_.row(k)[d]) - lo_[d]) * inverse_[d] / side_, cells_[d] - 1);
  }
  ConstMatrix x_;
  int64_t n_;
  double inverse_[2], lo_[2] = {0, 0}, side_ = 1;
  int64_t cells_[2] = {1, 1};
  bool ok_ = false, bucketed_ = false;
  Scratch<int64_t> cell_of_, first_, member_;
};

}  // namespace ka
