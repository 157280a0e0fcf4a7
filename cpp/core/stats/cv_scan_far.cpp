// The expansion bound of the upward CV scan (cv_scan_far.h).
#include "stats/cv_scan_far.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ka {

namespace {

constexpr double kEpsilon = std::numeric_limits<double>::epsilon() / 2;  // the unit roundoff
constexpr double kTail = 1e-10;

bool applies(const Problem& p, const Criterion& c) {
  return p.kernel.kind == KernelKind::Gaussian && c.estimator == Estimator::NadarayaWatson &&
         c.score == Score::LeaveOneOut && !(c.exclude > 0) && !c.observation_weights && !p.masks.any() &&
         p.keys.cols == 1 && p.keys.rows >= 2 && p.values.rows == p.keys.rows && p.values.cols >= 1;
}

// The least p with T^p/p! / (1 − T/(p+1)) <= kTail and T < p + 1 (0 if none up to kMaxTerms), and that tail.
int terms_for(double t, double* tail) {
  double power = 1;  // T^p / p!
  for (int p = 1; p <= ExpansionBound::kMaxTerms; ++p) {
    power *= t / p;
    if (t < p + 1) {
      *tail = power / (1 - t / (p + 1));
      if (*tail <= kTail) return p;
    }
  }
  return 0;
}

}  // namespace

ExpansionBound::ExpansionBound(const Problem& p, const Criterion& c, bool wanted) {
  if (!wanted || !applies(p, c)) return;
  const int64_t n = p.keys.rows, width = p.values.cols;
  n_ = n;
  width_ = width;
  if (!x_.reset_zeroed(n) || !y_.reset_zeroed(n * width) || !absolute_.reset_zeroed(width)) {
    status_ = Status::OutOfMemory;
    return;
  }
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (int64_t i = 0; i < n; ++i) {
    const double v = double(p.keys.row(i)[0]);
    if (!std::isfinite(v)) return;
    low = std::min(low, v);
    high = std::max(high, v);
  }
  const double centre = low + (high - low) / 2;
  for (int64_t i = 0; i < n; ++i) x_.get()[i] = double(p.keys.row(i)[0]) - centre;
  for (int64_t col = 0; col < width; ++col) {
    double mean = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = double(p.values.row(i)[col]);
      if (!std::isfinite(v)) return;
      mean += v;
    }
    mean /= double(n);
    double absolute = 0;
    for (int64_t i = 0; i < n; ++i) {
      y_.get()[i * width + col] = double(p.values.row(i)[col]) - mean;
      absolute += std::fabs(y_.get()[i * width + col]);
    }
    absolute_.get()[col] = absolute;
  }
  active_ = true;
}

double ExpansionBound::lower_bound(double h) const {
  if (!active_ || !(h > 0) || !std::isfinite(h)) return 0;
  const int64_t n = n_, width = width_, columns = width + 1;  // column 0: the weights' sum
  const double* x = x_.get();
  const double* y = y_.get();
  double reach = 0;  // T = max u²
  for (int64_t j = 0; j < n; ++j) reach = std::max(reach, (x[j] / h) * (x[j] / h));
  double tail = 0;
  const int p = terms_for(reach, &tail);
  if (p == 0) return 0;
  // a_k(u) = e^(−u²/2) u^k / √k! for every point at once (term k from term k − 1), k outer: the loops over points
  // are independent (vectorised). The moments M_k = Σ_j a_k(u_j) ỹ_j, then the sums Σ_k a_k(u_i) M_k.
  Scratch<double> u(n), a(n), sums(n * columns), moments(columns);
  if (!u.ok() || !a.ok() || !sums.ok() || !moments.ok()) return 0;
  double *ut = u.get(), *at = a.get(), *st = sums.get(), *mt = moments.get();
  const auto first = [&] {
    for (int64_t j = 0; j < n; ++j) {
      ut[j] = x[j] / h;
      at[j] = std::exp(-ut[j] * ut[j] / 2);
    }
  };
  const auto next = [&](int k) {
    const double scale = 1 / std::sqrt(double(k));
    for (int64_t j = 0; j < n; ++j) at[j] *= ut[j] * scale;
  };
  std::fill(st, st + n * columns, 0.0);  // column-major: sums[col · n + i]
  // Per term: its moments over the sources, then its share of every target's sums (the targets are the sources).
  // Four partial sums a moment: any order of summation is within the rounding the bound allows.
  const auto moment = [&](const double* weight, int64_t stride) {
    double part[4] = {0, 0, 0, 0};
    int64_t j = 0;
    for (; j + 4 <= n; j += 4)
      for (int l = 0; l < 4; ++l) part[l] += at[j + l] * (weight ? weight[(j + l) * stride] : 1.0);
    for (; j < n; ++j) part[0] += at[j] * (weight ? weight[j * stride] : 1.0);
    return (part[0] + part[1]) + (part[2] + part[3]);
  };
  for (int k = 0; k < p; ++k) {
    if (k == 0)
      first();
    else
      next(k);
    mt[0] = moment(nullptr, 0);
    for (int64_t col = 0; col < width; ++col) mt[col + 1] = moment(y + col, width);
    for (int64_t col = 0; col < columns; ++col) {
      double* sc = st + col * n;
      const double m = mt[col];
      for (int64_t i = 0; i < n; ++i) sc[i] += at[i] * m;
    }
  }
  // The rounding (cv_scan_far.h): n + p for the two sums' lengths, 12 per term for each pair's factors, 8T for the
  // weights' exponents; doubled.
  const double relative = tail + 2 * (double(n) + 12 * p + 8 * reach + 16) * kEpsilon;
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    // The held-out point's own term is exactly 1 (its weight) and ỹ_i.
    const double d = st[i] - 1;
    const double d_error = double(n) * relative + 2 * kEpsilon * (std::fabs(st[i]) + 1);
    const double d_low = d - d_error, d_high = d + d_error;
    if (!(d_low > 0)) continue;  // the fit's weights may vanish: nothing shown for this point
    for (int64_t col = 0; col < width; ++col) {
      const double yi = y[i * width + col];
      const double sum = st[(col + 1) * n + i], v = sum - yi;
      const double v_error = absolute_.get()[col] * relative + 2 * kEpsilon * (std::fabs(sum) + std::fabs(yi));
      const double v_low = v - v_error, v_high = v + v_error;
      // f = v/d over the box [v_low, v_high] × [d_low, d_high], d > 0.
      const double f_low = v_low >= 0 ? v_low / d_high : v_low / d_low;
      const double f_high = v_high >= 0 ? v_high / d_low : v_high / d_high;
      // The residual ỹ_i − f lies in [yi − f_high, yi − f_low] (each end off by its rounding, taken back here).
      const double slack = 4 * kEpsilon * (std::fabs(yi) + std::max(std::fabs(f_low), std::fabs(f_high)));
      const double low = yi - f_high - slack, high = yi - f_low + slack;
      const double e = low > 0 ? low : high < 0 ? -high : 0;
      total += e * e;
    }
  }
  return total / double(n) * (1 - 4 * double(n + 4) * kEpsilon);
}

}  // namespace ka
