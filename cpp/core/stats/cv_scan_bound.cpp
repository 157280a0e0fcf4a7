// The nearest-neighbour lower bound of the CV scan (cv_scan_bound.h).
#include "stats/cv_scan_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ka {
namespace {

bool applies(const Problem& p, const Criterion& c) {
  return p.kernel.kind == KernelKind::Gaussian && c.estimator == Estimator::NadarayaWatson &&
         c.score == Score::LeaveOneOut && !c.observation_weights && !p.masks.any() && p.keys.rows >= 2 &&
         p.values.rows == p.keys.rows;
}

}  // namespace

NearestBound::NearestBound(const Problem& p, const Criterion& c, const double* start)
    : n_(p.keys.rows),
      width_(p.values.cols),
      gap_(applies(p, c) ? n_ : 0),
      ratio_(applies(p, c) ? n_ : 0),
      residual_(applies(p, c) ? n_ * width_ : 0),
      range_(applies(p, c) ? width_ : 0) {
  const int64_t n = n_, dims = p.keys.cols, width = width_;
  if (!applies(p, c)) return;
  const double inf = std::numeric_limits<double>::infinity();
  Scratch<int64_t> order(n);
  Scratch<double> x1(n);
  if (!order.ok() || !x1.ok() || !gap_.ok() || !ratio_.ok() || !residual_.ok() || !range_.ok()) {
    status_ = Status::OutOfMemory;
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t d = 0; d < dims; ++d)
      if (!std::isfinite(p.keys.row(i)[d])) return;
    for (int64_t col = 0; col < width; ++col)
      if (!std::isfinite(p.values.row(i)[col])) return;
  }
  for (int64_t col = 0; col < width; ++col) {
    double low = inf, high = -inf;
    for (int64_t i = 0; i < n; ++i) {
      low = std::min(low, double(p.values.row(i)[col]));
      high = std::max(high, double(p.values.row(i)[col]));
    }
    range_.get()[col] = high - low;
  }
  // Nearest points by a sweep along x₁ (sorted): a point farther along x₁ alone than the second distance found so far
  // cannot change D1 or D2.
  int64_t* o = order.get();
  for (int64_t i = 0; i < n; ++i) o[i] = i;
  std::sort(o, o + n, [&](int64_t a, int64_t b) { return p.keys.row(a)[0] < p.keys.row(b)[0]; });
  for (int64_t k = 0; k < n; ++k) x1.get()[k] = double(p.keys.row(o[k])[0]);
  const double r = c.exclude, scale1 = 1 / start[0];
  Scratch<double> nearest_sum(width);
  if (!nearest_sum.ok()) {
    status_ = Status::OutOfMemory;
    return;
  }
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = o[k];
    const float* xi = p.keys.row(i);
    double d1 = inf, d2 = inf;
    int64_t m = 0;
    const auto visit = [&](int64_t j) {
      double dd = 0;
      for (int64_t d = 0; d < dims; ++d) {
        const double u = (double(p.keys.row(j)[d]) - double(xi[d])) / start[d];
        dd += u * u;
      }
      if (dd < d1) {
        d2 = d1;
        d1 = dd;
        m = 1;
        for (int64_t col = 0; col < width; ++col) nearest_sum.get()[col] = double(p.values.row(j)[col]);
      } else if (dd == d1) {
        ++m;
        for (int64_t col = 0; col < width; ++col) nearest_sum.get()[col] += double(p.values.row(j)[col]);
      } else if (dd < d2) {
        d2 = dd;
      }
    };
    for (const int64_t dir : {int64_t(-1), int64_t(1)}) {
      for (int64_t at = k + dir; at >= 0 && at < n; at += dir) {
        const double along = (x1.get()[at] - x1.get()[k]) * scale1;
        if (along * along > d2) break;
        if (r > 0 && std::fabs(x1.get()[at] - x1.get()[k]) <= r) continue;  // blocked CV's band
        visit(o[at]);
      }
    }
    if (m == 0) return;  // a held-out point without admissible points: CV is +inf everywhere, no bound
    // |A_i|: every point but i and, with a band, those within r of it along x₁.
    int64_t admissible = n - 1;
    if (r > 0) {
      const double* lo = std::lower_bound(x1.get(), x1.get() + n, x1.get()[k] - r);
      const double* hi = std::upper_bound(x1.get(), x1.get() + n, x1.get()[k] + r);
      admissible = n - int64_t(hi - lo);
    }
    gap_.get()[i] = d2 - d1;  // +inf when every admissible point is at D1: the fit is their mean at every s
    // Twice the bound's ratio: the engine's float32 bandwidth and sums may weigh the far points a little more.
    ratio_.get()[i] = 2 * double(admissible - m) / double(m);
    for (int64_t col = 0; col < width; ++col)
      residual_.get()[i * width + col] = std::fabs(double(p.values.row(i)[col]) - nearest_sum.get()[col] / double(m));
  }
  active_ = true;
}

double NearestBound::lower_bound(double s) const {
  if (!active_ || !(s > 0)) return 0;
  double sum = 0;
  for (int64_t i = 0; i < n_; ++i) {
    const double rho = std::exp(-gap_.get()[i] / (2 * s * s));
    const double share = std::min(1.0, ratio_.get()[i] * rho);
    for (int64_t col = 0; col < width_; ++col) {
      const double e = residual_.get()[i * width_ + col] - range_.get()[col] * share;
      if (e > 0) sum += e * e;
    }
  }
  return sum / double(n_);
}

}  // namespace ka
