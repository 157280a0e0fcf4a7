#include "stats/cv_band_screen.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "stats/cv_band_window.h"

namespace ka {

BandScreen::BandScreen(const Problem& sorted, const Criterion& c) : problem_(sorted), estimator_(c.estimator) {
  const int64_t n = sorted.keys.rows;
  if (n < kBandScreenMinPoints || c.observation_weights || c.exclude > 0 || c.score != Score::LeaveOneOut ||
      sorted.masks.any())
    return;
  const int64_t m = kBandScreenRows;
  if (!rows_.reset_zeroed(m) || !reference_.reset_zeroed(m) || !trial_.reset_zeroed(m)) return;
  for (int64_t k = 0; k < m; ++k) rows_.get()[k] = int64_t((double(k) + 0.5) * double(n) / double(m));
  problem_.masks.leave_one_out = true;
  problem_.empty = EmptyPolicy::NaN;
  const float one = 1;
  problem_.kernel.bandwidth = &one;
  active_ = bandwidth_detail::band_window_residuals(problem_, estimator_, rows_.get(), 0, nullptr);  // applies?
  problem_.kernel.bandwidth = nullptr;
  for (int64_t i = 0; active_ && i < n; ++i) rounding_ = std::max(rounding_, std::fabs(double(sorted.values.data[i])));
  rounding_ *= std::ldexp(1.0, -16);
}

bool BandScreen::residuals(float h, double* out) {
  problem_.kernel.bandwidth = &h;
  const bool done = bandwidth_detail::band_window_residuals(problem_, estimator_, rows_.get(), kBandScreenRows, out);
  problem_.kernel.bandwidth = nullptr;
  return done;
}

bool BandScreen::set_reference(float h) {
  if (!active_) return false;
  double* r = reference_.get();
  referenced_ = residuals(h, r);
  for (int64_t k = 0; referenced_ && k < kBandScreenRows; ++k) referenced_ = std::isfinite(r[k]);
  active_ = referenced_;
  return referenced_;
}

double BandScreen::lower_difference(float h) {
  const double unknown = std::numeric_limits<double>::quiet_NaN();
  double* d = trial_.get();
  if (!referenced_ || !residuals(h, d)) return unknown;
  const int64_t m = kBandScreenRows;
  double mean = 0;
  for (int64_t k = 0; k < m; ++k) {
    if (d[k] == std::numeric_limits<double>::infinity()) return d[k];  // a singular design: CV(h) is +inf
    d[k] -= reference_.get()[k];
    mean += d[k];
  }
  mean /= double(m);
  double squares = 0;
  for (int64_t k = 0; k < m; ++k) squares += (d[k] - mean) * (d[k] - mean);
  const double lower = mean - kBandScreenDeviations * std::sqrt(squares / double(m - 1) / double(m));
  return std::isnan(lower) ? unknown : lower;
}

}  // namespace ka
