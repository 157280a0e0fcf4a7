// The fit beyond one end of a 1-D Gaussian sample as a function of the distance (far_table.h).
#include "methods/grid/far_table.h"

#include <algorithm>

#include "engine/local_solve.h"
#include "engine/online_softmax.h"

namespace ka {

bool FarTable::keep(double end, bool low, double h, double eps, double total, double end_weight, int64_t width) {
  if (reach_ >= 0 && end == end_ && low == low_ && h == h_ && eps == eps_ && total == total_ &&
      end_weight == end_weight_ && width == width_)
    return true;
  end_ = end;
  low_ = low;
  h_ = h;
  eps_ = eps;
  total_ = total;
  end_weight_ = end_weight;
  width_ = width;
  reach_ = -1;
  log_ratio_ = far_log(total, eps, end_weight);
  keys_.count = 0;
  if (!made_.reset_zeroed(kFarNodes) || !nodes_.reset_zeroed(kFarNodes * stride()) || !at_.reset_zeroed(kFarNodes)) {
    made_.reset_zeroed(0);
    return false;
  }
  for (int64_t k = 0; k < kFarNodes; ++k) at_.get()[k] = std::exp(double(k + kFarFirst) * kFarStep);
  return false;
}

double FarTable::reach_for(double s) const {
  const double k = std::max(std::floor(std::log(s) / kFarStep), double(kFarFirst));
  return far_reach(std::exp(k * kFarStep) * h_, h_, log_ratio_);
}

const double* FarTable::node(int64_t k) {
  double* v = nodes_.get() + (k - kFarFirst) * stride();
  if (made_.get()[k - kFarFirst]) return v;
  const double s = at_.get()[k - kFarFirst];
  const double cut = far_reach(s * h_, h_, log_ratio_);
  const int64_t matter =
      std::upper_bound(keys_.behind.get(), keys_.behind.get() + keys_.count, cut) - keys_.behind.get();
  // Σw·τ^p (p ≤ 3) and Σw·y·τ^p (p ≤ 2) over the keys in the node's reach, w = ω·e^{−sτ − τ²/2}.
  double m[4] = {0, 0, 0, 0};
  std::fill(v, v + stride(), 0.0);
  double* nu = v + 4;  // per column: Σw·y, Σw·y·τ, Σw·y·τ² while summing
  for (int64_t j = 0; j < matter; ++j) {
    const double tau = keys_.behind.get()[j] / h_;
    const double w = double(keys_.w.get()[j]) * std::exp(-tau * (s + tau / 2));
    m[0] += w;
    m[1] += w * tau;
    m[2] += w * tau * tau;
    m[3] += w * tau * tau * tau;
    for (int64_t c = 0; c < width_; ++c) {
      const double y = double(keys_.y.get()[j * width_ + c]);
      nu[4 * c] += w * y;
      nu[4 * c + 1] += w * y * tau;
      nu[4 * c + 2] += w * y * tau * tau;
    }
  }
  const double mu1 = m[1] / m[0], mu2 = m[2] / m[0], mu3 = m[3] / m[0];
  v[0] = mu1;
  v[1] = mu2;
  v[2] = -(mu2 - mu1 * mu1);
  v[3] = -(mu3 - mu2 * mu1);
  for (int64_t c = 0; c < width_; ++c) {
    double* e = nu + 4 * c;
    const double nu0 = e[0] / m[0], nu1 = e[1] / m[0], nu2 = e[2] / m[0];
    e[0] = nu0;
    e[1] = nu1;
    e[2] = -(nu1 - nu0 * mu1);
    e[3] = -(nu2 - nu1 * mu1);
  }
  made_.get()[k - kFarFirst] = 1;
  return v;
}

bool FarTable::fit(double s, Estimator estimator, float* mean, bool* guarded) {
  *guarded = false;
  if (!made_.get() || !(s > 0)) return false;
  const int64_t k = int64_t(std::floor(std::log(s) / kFarStep));
  if (k < kFarFirst || k + 1 - kFarFirst >= kFarNodes) return false;
  const double s0 = at_.get()[k - kFarFirst], s1 = at_.get()[k + 1 - kFarFirst];
  const double* a = node(k);
  const double* b = node(k + 1);
  // Cubic Hermite on [s0, s1] from the values and derivatives at both ends.
  const double step = s1 - s0, x = std::clamp((s - s0) / step, 0.0, 1.0), x2 = x * x, x3 = x2 * x;
  const double h00 = 2 * x3 - 3 * x2 + 1, h10 = x3 - 2 * x2 + x, h01 = 3 * x2 - 2 * x3, h11 = x3 - x2;
  const auto at = [&](int64_t value, int64_t slope) {
    return h00 * a[value] + h10 * step * a[slope] + h01 * b[value] + h11 * step * b[slope];
  };
  const double mu1 = at(0, 2), mu2 = at(1, 3);
  double moments[4] = {1, s + mu1, 0, s * s + 2 * s * mu1 + mu2}, l[4], g[2] = {1, 0};
  const bool linear = estimator == Estimator::LocalLinear;
  if (linear) *guarded = first_column_of_inverse(moments, 2, l, g);
  for (int64_t c = 0; c < width_; ++c) {
    const double nu0 = at(4 + 4 * c, 6 + 4 * c), nu1 = at(5 + 4 * c, 7 + 4 * c);
    const double t[2] = {nu0, s * nu0 + nu1};
    mean[c] = mean_to_float(linear ? fitted_value(g, t, 2, 1) : nu0);
  }
  return true;
}

}  // namespace ka
