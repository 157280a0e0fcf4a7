// Blocked CV's residuals on a grid (cv_band.h).
#include "methods/grid/cv_band.h"

#include <algorithm>
#include <cmath>

#include "methods/grid/binning.h"
#include "methods/grid/convolution.h"
#include "methods/grid/plan.h"

namespace ka {
namespace {

// As cv.cpp's: serve only points whose pivot needs no floor.
inline bool pivot_free(double s0, double s1, double s2) { return s2 - s1 / s0 * s1 >= kPivotFloor * s2; }

}  // namespace

bool band_residuals(const BandPass& b, double* sum) {
  const int64_t width = b.width, s_count = b.linear ? 3 : 1, t_count = b.linear ? 2 : 1;
  const int64_t fine = int64_t(1) << kFinestLevel;
  // The band's keys are looked up on cells about as many as the points (finer ones would be mostly empty).
  int scan_shift = 0;
  while ((fine >> scan_shift) > 2 * b.points && scan_shift < kFinestLevel) ++scan_shift;
  const int64_t scan_cells = fine >> scan_shift;
  const double per_scan = double(scan_cells) / b.range, per_cell = double(b.cells) / b.range, h = double(b.h);
  const auto scan_cell = [&](double v) {
    return int64_t(std::clamp(std::floor((v - b.lo) * per_scan), 0.0, double(scan_cells - 1)));
  };
  // Keys beyond the kernel's reach weigh nothing the grid holds: the band is searched no farther.
  const double reach = std::min(b.r, reach_of(b.kind) * h);
  double* band_s = b.band;
  double* band_t = b.band + 3;
  double acc = 0;
  for (int64_t e = 0; e < b.cells; ++e) {
    const double* at = b.at_node + e * b.stride;
    const double* slope = b.slopes + e * b.stride;
    for (int64_t i = b.start[e << b.shift], end = b.start[(e + 1) << b.shift]; i < end; ++i) {
      const double xi = double(b.x[i]), low = xi - b.r, high = xi + b.r;
      // The cells that may hold the band, one more each side for the rounding of the cell a point was put in.
      const int64_t g0 = std::max<int64_t>(scan_cell(xi - reach) - 1, 0),
                    g1 = std::min<int64_t>(scan_cell(xi + reach) + 1, scan_cells - 1);
      std::fill(band_s, band_s + s_count, 0.0);
      std::fill(band_t, band_t + t_count * width, 0.0);
      for (int64_t j = b.start[g0 << scan_shift], j_end = b.start[(g1 + 1) << scan_shift]; j < j_end; ++j) {
        const double xj = double(b.x[j]), d = xj - xi;
        if (!(xj >= low && xj <= high) || std::fabs(d) > reach) continue;  // outside the band (as cv_score's)
        const double k = (b.w ? double(b.w[j]) : 1.0) * kernel_weight(b.kind, b.h, d), u = d / h;
        band_s[0] += k;
        if (b.linear) {
          band_s[1] += k * u;
          band_s[2] += k * u * u;
        }
        for (int64_t c = 0; c < width; ++c) {
          const double ky = k * double(b.y[j * width + c]);
          band_t[c * t_count] += ky;
          if (b.linear) band_t[c * t_count + 1] += ky * u;
        }
      }
      const double u = (xi - b.lo) * per_cell - double(e);
      const auto moment = [&](int64_t k) { return at[k] + u * slope[k]; };
      const double s0 = moment(0) - band_s[0];
      if (!(s0 > b.served_above)) return false;
      const double s1 = b.linear ? moment(1) - band_s[1] : 0, s2 = b.linear ? moment(2) - band_s[2] : 0;
      if (b.linear && !pivot_free(s0, s1, s2)) return false;
      const double omega = b.w ? double(b.w[i]) : 1.0;
      for (int64_t c = 0; c < width; ++c) {
        const int64_t k = s_count + c * t_count;
        const double t0 = moment(k) - band_t[c * t_count];
        double fit = t0 / s0;
        if (b.linear) {
          const double q = s1 / s0, t1 = moment(k + 1) - band_t[c * t_count + 1];
          const double pivot = s2 - q * s1;  // >= kPivotFloor·s2: only a zero s2 leaves it 0 (no slope)
          if (pivot > 0) fit += q * (q * t0 - t1) / pivot;
        }
        const double y = double(b.y[i * width + c]);
        acc += omega * (y - fit) * (y - fit);
      }
    }
  }
  *sum += acc;
  return true;
}

}  // namespace ka
