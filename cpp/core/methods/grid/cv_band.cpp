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

// The band's sums for one value column (the common case), in locals: S_a (a < 1 + 2·Linear) into s, T_a into t,
// over the sorted points [j0, j1) that lie in the band [x_i − r, x_i + r] and within `reach` of x_i.
template <bool Linear, bool Weighted>
void band_sums(const BandPass& b, int64_t j0, int64_t j1, double xi, double reach, double* s, double* t) {
  const double low = xi - b.r, high = xi + b.r, inv_h = 1 / double(b.h);
  const bool gaussian = b.kind == KernelKind::Gaussian, series = 0.5 * (reach * inv_h) * (reach * inv_h) <= 0.01;
  double s0 = 0, s1 = 0, s2 = 0, t0 = 0, t1 = 0;
  for (int64_t j = j0; j < j1; ++j) {
    const double xj = double(b.x[j]), d = xj - xi;
    if (!(xj >= low && xj <= high) || std::fabs(d) > reach) continue;  // outside the band (as cv_score's)
    // The Gaussian's weight exp(−v²/2) inline (kernels.h's formula); where v²/2 <= 0.01 over the whole band (most of
    // a search's bandwidths: the band is a few spacings) by its series to the 4th power, 8e-13 relative at most.
    const double v = d * inv_h, z = 0.5 * v * v;
    const double kernel = !gaussian ? kernel_weight(b.kind, b.h, d)
                          : series  ? 1 - z * (1 - z * (0.5 - z * (1.0 / 6 - z * (1.0 / 24))))
                                    : std::exp(-z);
    const double k = (Weighted ? double(b.w[j]) : 1.0) * kernel, ky = k * double(b.y[j]);
    s0 += k;
    t0 += ky;
    if (Linear) {
      s1 += k * v;
      s2 += k * v * v;
      t1 += ky * v;
    }
  }
  s[0] = s0;
  t[0] = t0;
  if (Linear) {
    s[1] = s1;
    s[2] = s2;
    t[1] = t1;
  }
}

}  // namespace

bool band_residuals(const BandPass& b, double* sum) {
  const int64_t width = b.width, s_count = b.linear ? 3 : 1, t_count = b.linear ? 2 : 1;
  const int64_t fine = int64_t(1) << b.finest;
  // The band's keys are looked up on cells about as many as the points (finer ones would be mostly empty).
  int scan_shift = 0;
  while ((fine >> scan_shift) > 2 * b.points && scan_shift < b.finest) ++scan_shift;
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
      const int64_t j0 = b.start[g0 << scan_shift], j1 = b.start[(g1 + 1) << scan_shift];
      if (width == 1) {
        (b.linear ? (b.w ? band_sums<true, true> : band_sums<true, false>)
                  : (b.w ? band_sums<false, true> : band_sums<false, false>))(b, j0, j1, xi, reach, band_s, band_t);
      } else {
        std::fill(band_s, band_s + s_count, 0.0);
        std::fill(band_t, band_t + t_count * width, 0.0);
        for (int64_t j = j0; j < j1; ++j) {
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
