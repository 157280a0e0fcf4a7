// The nearest-neighbour lower bound of the CV scan (cv_scan_bound.h).
#include "stats/cv_scan_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <new>
#include <numeric>

#include "engine/key_reach.h"
#include "engine/local_solve.h"
#include "engine/neighbours.h"
#include "stats/near_cells.h"

namespace ka {
namespace {

bool applies(const Problem& p, const Criterion& c, int64_t min_dims) {
  return p.kernel.kind == KernelKind::Gaussian && c.estimator == Estimator::NadarayaWatson &&
         c.score == Score::LeaveOneOut && !c.observation_weights && !p.masks.any() && p.keys.rows >= 2 &&
         p.keys.cols >= min_dims && p.values.rows == p.keys.rows;
}

}  // namespace

NearestBound::NearestBound(const Problem& p, const Criterion& c, const double* start, int64_t min_dims)
    : n_(p.keys.rows),
      width_(p.values.cols),
      gap_(applies(p, c, min_dims) ? n_ : 0),
      ratio_(applies(p, c, min_dims) ? n_ : 0),
      residual_(applies(p, c, min_dims) ? n_ * width_ : 0),
      range_(applies(p, c, min_dims) ? width_ : 0),
      far_(applies(p, c, min_dims) ? n_ : 0),
      mean_residual_(applies(p, c, min_dims) ? n_ * width_ : 0),
      sd_(applies(p, c, min_dims) ? n_ * width_ : 0) {
  const int64_t n = n_, dims = p.keys.cols, width = width_;
  if (!applies(p, c, min_dims)) return;
  const double inf = std::numeric_limits<double>::infinity();
  Scratch<int64_t> order(n);
  Scratch<double> x1(n);
  Scratch<double> sums(2 * (n + 1) * width), lows(dims), highs(dims);  // prefix sums of y and y² in x₁ order
  if (!order.ok() || !x1.ok() || !gap_.ok() || !ratio_.ok() || !residual_.ok() || !range_.ok() || !far_.ok() ||
      !mean_residual_.ok() || !sd_.ok() || !sums.ok() || !lows.ok() || !highs.ok()) {
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
  for (int64_t i = 0; i < n; ++i) x1.get()[i] = double(p.keys.row(i)[0]);  // exact: the floats' order
  if (sorted_by_first_coordinate(p.keys))  // a search's sorted sample: its own order, as order_by would give it
    std::iota(o, o + n, int64_t(0));
  else
    order_by(x1.get(), o, n);
  for (int64_t k = 0; k < n; ++k) x1.get()[k] = double(p.keys.row(o[k])[0]);
  for (int64_t d = 0; d < dims; ++d) {
    lows.get()[d] = inf;
    highs.get()[d] = -inf;
    for (int64_t i = 0; i < n; ++i) {
      lows.get()[d] = std::min(lows.get()[d], double(p.keys.row(i)[d]));
      highs.get()[d] = std::max(highs.get()[d], double(p.keys.row(i)[d]));
    }
  }
  // sums[(k · width + col) · 2 + {0, 1}]: Σ y and Σ y² over the first k points in x₁ order.
  double* ps = sums.get();
  std::fill(ps, ps + 2 * width, 0.0);
  Scratch<double> centre(width);
  if (!centre.ok()) {
    status_ = Status::OutOfMemory;
    return;
  }
  for (int64_t col = 0; col < width; ++col) {
    double total = 0;
    for (int64_t i = 0; i < n; ++i) total += double(p.values.row(i)[col]);
    centre.get()[col] = total / double(n);
  }
  for (int64_t k = 0; k < n; ++k)
    for (int64_t col = 0; col < width; ++col) {
      const double v = double(p.values.row(o[k])[col]) - centre.get()[col];
      const int64_t at = ((k + 1) * width + col) * 2, was = (k * width + col) * 2;
      ps[at] = ps[was] + v;
      ps[at + 1] = ps[was + 1] + v * v;
    }
  const double r = c.exclude, scale1 = 1 / start[0];
  Scratch<double> nearest_sum(width);
  if (!nearest_sum.ok()) {
    status_ = Status::OutOfMemory;
    return;
  }
  // In 2-D without a band, the nearest two by rings of cells (NearCells); else, or where the cells cannot tell, by
  // the sweep along x₁.
  std::unique_ptr<NearCells> cells(dims == 2 && !(r > 0) ? new (std::nothrow) NearCells(p.keys, start) : nullptr);
  if (cells && !cells->ok()) cells.reset();
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
    if (!cells || !cells->visit(i, visit, [&] { return d2; })) {
      d1 = d2 = inf;
      m = 0;
      for (const int64_t dir : {int64_t(-1), int64_t(1)}) {
        for (int64_t at = k + dir; at >= 0 && at < n; at += dir) {
          const double along = (x1.get()[at] - x1.get()[k]) * scale1;
          if (along * along > d2) break;
          if (r > 0 && std::fabs(x1.get()[at] - x1.get()[k]) <= r) continue;  // blocked CV's band
          visit(o[at]);
        }
      }
    }
    if (m == 0) return;  // a held-out point without admissible points: CV is +inf everywhere, no bound
    // |A_i|: every point but i and, with a band, those within r of it along x₁.
    int64_t admissible = n - 1, band_lo = k, band_hi = k + 1;  // band: sorted positions [band_lo, band_hi)
    if (r > 0) {
      band_lo = std::lower_bound(x1.get(), x1.get() + n, x1.get()[k] - r) - x1.get();
      band_hi = std::upper_bound(x1.get(), x1.get() + n, x1.get()[k] + r) - x1.get();
      admissible = n - (band_hi - band_lo);
    }
    // The far bound's ingredients: Dmax_i over the bounding box, and ȳ_i, sd_i over A_i by the prefix sums.
    double reach = 0;
    for (int64_t d = 0; d < dims; ++d) {
      const double u = std::max(double(xi[d]) - lows.get()[d], highs.get()[d] - double(xi[d])) / start[d];
      reach += u * u;
    }
    far_.get()[i] = reach;
    for (int64_t col = 0; col < width; ++col) {
      const auto total = [&](int64_t a, int64_t b, int which) {
        return ps[(b * width + col) * 2 + which] - ps[(a * width + col) * 2 + which];
      };
      const double sum = total(0, n, 0) - total(band_lo, band_hi, 0);
      const double sq = total(0, n, 1) - total(band_lo, band_hi, 1);
      const double mean = sum / double(admissible);
      // Sums of y centred on its global mean; the sd raised by 1e-6 of the range against their rounding.
      const double variance = std::max(0.0, sq / double(admissible) - mean * mean);
      sd_.get()[i * width + col] = std::sqrt(variance) + 1e-6 * range_.get()[col];
      mean_residual_.get()[i * width + col] = std::fabs(double(p.values.row(i)[col]) - centre.get()[col] - mean);
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

namespace ka {

double NearestBound::lower_bound_far(double s) const {
  if (!active_ || !(s > 0)) return 0;
  double sum = 0;
  for (int64_t i = 0; i < n_; ++i) {
    const double a = std::exp(-far_.get()[i] / (2 * s * s));
    // Twice the bound's spread, as in lower_bound; a == 0 (every weight may vanish) gives no bound.
    const double spread = a > 0 ? (1 - a) / a : std::numeric_limits<double>::infinity();
    for (int64_t col = 0; col < width_; ++col) {
      const double e =
          mean_residual_.get()[i * width_ + col] - std::min(range_.get()[col], spread * sd_.get()[i * width_ + col]);
      if (e > 0) sum += e * e;
    }
  }
  return sum / double(n_);
}

}  // namespace ka

namespace ka {

void SingularProbe::keep(double spread[kProbes], double v, int64_t k) {
  // The kProbes points of largest spread (ties to the earlier point), kept in decreasing order by insertion.
  int64_t r = count_;
  if (r == kProbes && !(v > spread[kProbes - 1])) return;
  if (r == kProbes) --r;
  for (; r > 0 && v > spread[r - 1]; --r) {
    spread[r] = spread[r - 1];
    rows_[r] = rows_[r - 1];
  }
  spread[r] = v;
  rows_[r] = k;
  count_ = std::min(count_ + 1, kProbes);
}

SingularProbe::SingularProbe(const Problem& sorted, const Criterion& c, const double* start) : problem_(sorted) {
  const int64_t n = sorted.keys.rows, dims = sorted.keys.cols;
  if (c.estimator != Estimator::LocalLinear || c.score != Score::LeaveOneOut || c.observation_weights ||
      c.exclude > 0 || dims > 2 || (dims == 2 && !start) || n < 4 || sorted.masks.any() ||
      !sorted_by_first_coordinate(sorted.keys))
    return;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t d = 0; d < dims; ++d)
      if (!std::isfinite(sorted.keys.row(j)[d])) return;
  if (dims == 2) {
    if (!choose_planar(start)) {
      status_ = Status::OutOfMemory;
      return;
    }
  } else {
    // Per run of equal x (one probe row each: the design depends on x alone), the two smallest distances to the
    // values of x its held-out point's keys take: 0 where the run has more than one point, then the two runs either
    // side. A design whose keys at one value of x outweigh every other by far is singular, ties or not: counted by
    // point, two tied neighbours gave D2 = D1 and hid such rows (a 10⁶-point search spent 9 s scoring one +inf).
    const auto at = [&](int64_t j) { return double(sorted.keys.row(j)[0]); };
    const auto run_end = [&](int64_t a) {
      int64_t b = a + 1;
      while (b < n && at(b) == at(a)) ++b;
      return b;
    };
    const double none = std::numeric_limits<double>::quiet_NaN();
    double spread[kProbes], before = none, before2 = none;
    // Runs [a, b), [b, c) and the one from c: each run's end found once.
    for (int64_t a = 0, b = run_end(0), c = b < n ? run_end(b) : n; a < n; a = b, b = c, c = c < n ? run_end(c) : n) {
      const double v = at(a);
      double d1 = std::numeric_limits<double>::infinity(), d2 = d1;
      const auto add = [&](double d) {
        if (d < d1) {
          d2 = d1;
          d1 = d;
        } else if (d < d2) {
          d2 = d;
        }
      };
      if (b - a > 1) add(0);
      for (const double w : {before, before2, b < n ? at(b) : none, c < n ? at(c) : none})
        if (!std::isnan(w)) add(std::fabs(w - v));
      keep(spread, std::isfinite(d2) ? d2 * d2 - d1 * d1 : 0, a);
      before2 = before;
      before = v;
    }
  }
  problem_.queries = problem_.keys;
  problem_.masks = Masks{};
  problem_.masks.leave_one_out = true;
  active_ = true;
}

bool planar_spreads(ConstMatrix x, const double* start, double* spread) {
  const int64_t n = x.rows;
  const NearCells cells(x, start);
  if (!cells.ok()) return false;
  for (int64_t k = 0; k < n; ++k) {
    double d[3] = {std::numeric_limits<double>::infinity(), d[0], d[0]};
    const auto take = [&](int64_t j) {
      const double dd = cells.distance2(j, k);
      if (dd >= d[2]) return;
      d[2] = dd;
      if (d[2] < d[1]) std::swap(d[1], d[2]);
      if (d[1] < d[0]) std::swap(d[0], d[1]);
    };
    if (!cells.visit(k, take, [&] {
          return d[2];
        })) {  // outward along x₁ (the sample's order) until x₁'s term alone exceeds D3²
      d[0] = d[1] = d[2] = std::numeric_limits<double>::infinity();
      const double a = double(x.row(k)[0]), inverse = 1 / start[0];
      for (const int64_t dir : {int64_t(-1), int64_t(1)})
        for (int64_t j = k + dir; j >= 0 && j < n; j += dir) {
          const double u = (double(x.row(j)[0]) - a) * inverse;
          if (u * u > d[2]) break;
          take(j);
        }
    }
    spread[k] = std::isfinite(d[2]) ? d[2] - d[0] : 0;
  }
  return true;
}

// The 2-D choice: the points of largest D3² − D1² (planar_spreads). Returns false without memory.
bool SingularProbe::choose_planar(const double* start) {
  const int64_t n = problem_.keys.rows;
  Scratch<double> spreads(n);
  if (!spreads.ok() || !planar_spreads(problem_.keys, start, spreads.get())) return false;
  double spread[kProbes];
  for (int64_t k = 0; k < n; ++k) keep(spread, spreads.get()[k], k);
  return true;
}

bool SingularProbe::singular(const float* h) const {
  if (!active_) return false;
  Problem p = problem_;
  p.kernel.bandwidth = h;
  const int64_t width = p.values.cols, np = 1 + p.keys.cols;
  ExactRowWork work(np, width);
  if (!work.ok()) return false;
  for (int64_t r = 0; r < count_; ++r)
    if (!exact_local_row(p, 1, nullptr, rows_[r], work.rows, work.mean, nullptr, true)) return true;
  return false;
}

}  // namespace ka
