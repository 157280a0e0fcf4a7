// The fit beyond one side of a 2-D Gaussian sample as a function of the distance and the other coordinate
// (far_side.h).
#include "methods/grid/far_side.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/local_solve.h"
#include "engine/online_softmax.h"
#include "methods/grid/convolution.h"
#include "methods/grid/query.h"

namespace ka {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// The largest amplification of the bins' error a local-linear row read from the table may have (as serve.cpp's
// kEdgeAmplification for the grid's own rows outside the box).
constexpr double kSideAmplification = 5.5;

// Where each sum sits in a node's entry (far_side.h): Σw·{1, u, u²}, Σw·τ·{1, u, u²}, Σw·τ²·{1, u}, Σw·τ³, then per
// column c at 9 + 5c: Σw·y·{1, u}, Σw·y·τ·{1, u}, Σw·y·τ².
enum Sum { kA, kU, kU2, kT, kTU, kTU2, kT2, kT2U, kT3 };
enum YSum { kY, kYU, kYT, kYTU, kYT2 };

// The tilted means at one node from its sums there (linearly interpolated along v): the values a row interpolates in
// s, [E τ, E τ², E u, E τu, E u², then per column E y, E yτ, E yu], and their derivatives in s, −Cov(τ, ·).
void means_of(const double* x, int64_t width, double* value, double* slope) {
  const double inv = 1 / x[kA];
  const auto e = [&](int64_t k) { return x[k] * inv; };
  const double t = e(kT);
  const auto put = [&](int64_t k, double v, double v_tau) {  // E g and E τg
    value[k] = v;
    slope[k] = -(v_tau - t * v);
  };
  put(0, t, e(kT2));
  put(1, e(kT2), e(kT3));
  put(2, e(kU), e(kTU));
  put(3, e(kTU), e(kT2U));
  put(4, e(kU2), e(kTU2));
  for (int64_t c = 0; c < width; ++c) {
    const auto ey = [&](int64_t k) { return x[9 + 5 * c + k] * inv; };
    put(5 + 3 * c, ey(kY), ey(kYT));
    put(6 + 3 * c, ey(kYT), ey(kYT2));
    put(7 + 3 * c, ey(kYU), ey(kYTU));
  }
}

}  // namespace

bool FarSide::keep(int64_t far_axis, double edge, bool low, double h, const Axis& other, double eps, double total,
                   int64_t keys, double omega_max, int64_t width) {
  const bool same_axis = other.lo == other_.lo && other.hi == other_.hi && other.nodes == other_.nodes &&
                         other.h == other_.h && other.L == other_.L;
  if (reach_ >= 0 && same_axis && far_axis == far_axis_ && edge == edge_ && low == low_ && h == h_ && eps == eps_ &&
      total == total_ && width == width_)
    return true;
  far_axis_ = far_axis;
  edge_ = edge;
  low_ = low;
  h_ = h;
  other_ = other;
  eps_ = eps;
  total_ = total;
  width_ = width;
  reach_ = -1;
  wanted_ = 0;
  keys_.count = 0;
  // The first guess of the cut's exponent: every output node holding at least e^−8 of an average key's weight.
  log_gather_ = log_guess_ = std::log(2 * double(std::max<int64_t>(keys, 1)) / eps) + 8;
  const double ln2 = 0.6931471805599453;  // as SortedKeys::skip: 25 + log₂ n bits, in natural log
  skip_ = std::min(126.0, 25 + std::log(double(std::max<int64_t>(keys, 1))) / ln2) * ln2;
  omega_max_ = omega_max;
  ok_ = nodes_.reset(kSideBlocks, other_.E * kSideBlock * sums()) && made_.reset_zeroed(kTiltNodes);
  return false;
}

void FarSide::held(double reach) {
  const bool more = reach_ >= 0 && reach > reach_;
  reach_ = reach;
  wanted_ = 0;
  if (more)  // nodes made with fewer keys: made again
    ok_ = nodes_.reset(kSideBlocks, other_.E * kSideBlock * sums()) && made_.reset_zeroed(kTiltNodes);
}

double FarSide::reach_for(double s) const {
  const int64_t k = tilt_cell(s);
  return tilt_cut(tilt_node(std::max<int64_t>(k, 0)), log_gather_);
}

double* FarSide::entry(int64_t k, int64_t e) const {
  double* block = nodes_.made(k / kSideBlock);
  return block ? block + (e * kSideBlock + k % kSideBlock) * sums() : nullptr;
}

bool FarSide::node(int64_t k) {
  if (made_.get()[k]) return true;
  if (!nodes_.make(k / kSideBlock)) return false;
  const Axis& ax = other_;
  const int64_t G = ax.nodes, E = ax.E, cols = 2 + 2 * width_;
  const NodeMoments la(true, 1, cols, false), lb(true, 1, width_, false);  // 1-D local-linear moments, no squares
  const int64_t stride_a = la.stride(), stride_b = lb.stride();
  // Binned: count (ω·tilt), cols [τ², τ³, y per column, yτ² per column]; then count τ·ω·tilt with cols y·τ.
  Scratch<double> count(G), count_t(G), sums_a(G * cols), sums_b(G * width_), mom_a(E * stride_a), mom_b(E * stride_b);
  if (!count.ok() || !count_t.ok() || !sums_a.ok() || !sums_b.ok() || !mom_a.ok() || !mom_b.ok()) return false;
  const double s = tilt_node(k);
  double cut = std::min(reach_, tilt_cut(s, log_guess_ + 1.0));  // the last node's exponent, a margin of e¹: one pass
  const int64_t first = ax.L, last = ax.L + G;  // the output nodes over the sample's range: the rows' v
  for (int pass = 0; pass < 3; ++pass) {
    std::fill(count.get(), count.get() + G, 0.0);
    std::fill(count_t.get(), count_t.get() + G, 0.0);
    std::fill(sums_a.get(), sums_a.get() + G * cols, 0.0);
    std::fill(sums_b.get(), sums_b.get() + G * width_, 0.0);
    const int64_t matter = std::upper_bound(keys_.tau.get(), keys_.tau.get() + keys_.count, cut) - keys_.tau.get();
    for (int64_t j = 0; j < matter; ++j) {
      const double tau = keys_.tau.get()[j];
      const double w = double(keys_.w.get()[j]) * std::exp(-tau * (s + tau / 2));
      const double at = std::clamp((double(keys_.v.get()[j]) - ax.lo) / ax.step, 0.0, double(G - 1));
      const int64_t b = std::min<int64_t>(int64_t(at), G - 2);
      const double hi = at - double(b), share[2] = {1 - hi, hi};
      for (int64_t side = 0; side < 2; ++side) {
        const double ws = w * share[side];
        const int64_t cell = b + side;
        count.get()[cell] += ws;
        count_t.get()[cell] += ws * tau;
        double* row = sums_a.get() + cell * cols;
        row[0] += ws * tau * tau;
        row[1] += ws * tau * tau * tau;
        for (int64_t c = 0; c < width_; ++c) {
          const double y = double(keys_.y.get()[j * width_ + c]);
          row[2 + c] += ws * y;
          row[2 + width_ + c] += ws * y * tau * tau;
          sums_b.get()[cell * width_ + c] += ws * y * tau;
        }
      }
    }
    if (convolve_moments(KernelKind::Gaussian, &ax, 1, cols, true, false, count.get(), count.get(), sums_a.get(),
                         mom_a.get()) != Status::Ok ||
        convolve_moments(KernelKind::Gaussian, &ax, 1, width_, true, false, count_t.get(), count_t.get(), sums_b.get(),
                         mom_b.get()) != Status::Ok)
      return false;
    // The weight each row within the sample's range keeps at least: the cut it needs (far_side.h).
    double least = std::numeric_limits<double>::infinity();
    for (int64_t e = first; e < last; ++e) least = std::min(least, mom_a.get()[e * stride_a]);
    const double need = least > 0 ? tilt_cut(s, std::log(2 * total_ / (eps_ * least))) : reach_;
    if (least > 0) log_guess_ = std::log(2 * total_ / (eps_ * least));  // the next node's first guess
    if (need <= cut || cut >= reach_) break;
    cut = std::min(reach_, need);
  }
  for (int64_t e = 0; e < E; ++e) {
    const double* a = mom_a.get() + e * stride_a;
    const double* b = mom_b.get() + e * stride_b;
    double* x = entry(k, e);
    x[kA] = a[0];
    x[kU] = a[1];
    x[kU2] = a[2];
    x[kT] = b[0];
    x[kTU] = b[1];
    x[kTU2] = b[2];
    x[kT2] = a[la.t(0)];
    x[kT2U] = a[la.t(0) + 1];
    x[kT3] = a[la.t(1)];
    for (int64_t c = 0; c < width_; ++c) {
      double* y = x + 9 + 5 * c;
      y[kY] = a[la.t(2 + c)];
      y[kYU] = a[la.t(2 + c) + 1];
      y[kYT] = b[lb.t(c)];
      y[kYTU] = b[lb.t(c) + 1];
      y[kYT2] = a[la.t(2 + width_ + c)];
    }
    // A node whose weight here is too small for the keys held, or for the taps' reach along v (keys beyond it weigh
    // at most W·e^{−reach²/2}), to meet the tolerance: its rows are fitted directly (direct()).
    const double log_need = x[kA] > 0 ? std::log(2 * total_ / (eps_ * x[kA])) : kInf;
    const double taps = double(ax.L) * ax.step / ax.h;
    if (!(tilt_cut(s, log_need) <= reach_ && log_need <= taps * taps / 2)) x[kA] = 0;
  }
  made_.get()[k] = 1;
  return true;
}

bool FarSide::fit(double s, double v, Estimator estimator, float* mean, bool* guarded) {
  *guarded = false;
  const Axis& ax = other_;
  if (!ok_) return false;  // the nodes' table could not be had
  if (!(v >= ax.lo && v <= ax.hi)) return false;
  const int64_t k = tilt_cell(s);
  if (k < 0) return false;
  const double at = (v - ax.lo) / ax.step + double(ax.L);
  const int64_t e = std::min<int64_t>(int64_t(at), ax.E - 2);
  const double fr = at - double(e);
  const int64_t count = 5 + 3 * width_, n_sums = sums();
  double value[2][5 + 3 * 8], slope[2][5 + 3 * 8], x[9 + 5 * 8];
  if (width_ > 8) return false;  // more value columns than the stack holds: exactly
  for (int64_t side = 0; side < 2; ++side) {
    if (!node(k + side)) return false;
    const double* lo = entry(k + side, e);
    const double* hi = entry(k + side, e + 1);
    if (!usable(lo) || (fr > 0 && !usable(hi))) return direct(s, v, estimator, mean, guarded);
    for (int64_t m = 0; m < n_sums; ++m) x[m] = lo[m] + fr * (hi[m] - lo[m]);
    means_of(x, width_, value[side], slope[side]);
  }
  const double s0 = tilt_node(k), step = tilt_node(k + 1) - s0;
  const Hermite b(std::clamp((s - s0) / step, 0.0, 1.0));
  double q[5 + 3 * 8];
  for (int64_t m = 0; m < count; ++m)
    q[m] = b.v0 * value[0][m] + b.d0 * step * slope[0][m] + b.v1 * value[1][m] + b.d1 * step * slope[1][m];
  // The moments about the query in bandwidths (s + τ along the far axis, u along the other; a column's sign leaves the
  // intercept as it is), in kPowers order with x₁'s column first, as the exact fit's (its guard acts column by column):
  // 1, u₁, u₂, u₁², u₁u₂, u₂².
  const double far_1 = s + q[0], far_2 = s * s + 2 * s * q[0] + q[1], cross = s * q[2] + q[3];
  const bool first = far_axis_ == 0;
  const double S[6] = {1,     first ? far_1 : q[2], first ? q[2] : far_1, first ? far_2 : q[4],
                       cross, first ? q[4] : far_2};
  const bool linear = estimator == Estimator::LocalLinear;
  if (linear) {
    // The bins along v err by O((spacing/h)²) relative to the weights; local-linear's solve amplifies that by about
    // (1 + |E u|)/pivot, the pivot of u once τ is fitted (the variance of u left after its regression on τ): where it
    // exceeds what the grid allows its own rows (kEdgeAmplification, serve.cpp), the row is fitted directly.
    const double var_t = q[1] - q[0] * q[0], var_u = q[4] - q[2] * q[2], cov = q[3] - q[0] * q[2];
    const double pivot = var_t > 0 ? var_u - cov * cov / var_t : var_u;
    if (!(pivot > 0) || (1 + std::fabs(q[2])) / pivot > kSideAmplification)
      return direct(s, v, estimator, mean, guarded);
  }
  double a[9], l[9], g[3] = {1, 0, 0};
  if (linear) {
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 3; ++c) a[r * 3 + c] = S[product_power(r, c, 2)];
    *guarded = first_column_of_inverse(a, 3, l, g);
  }
  for (int64_t c = 0; c < width_; ++c) {
    const double y = q[5 + 3 * c], along_far = s * y + q[6 + 3 * c], along_other = q[7 + 3 * c];
    const double t[3] = {y, first ? along_far : along_other, first ? along_other : along_far};
    mean[c] = mean_to_float(linear ? fitted_value(g, t, 3, 1) : y);
  }
  return true;
}

}  // namespace ka

namespace ka {

bool FarSide::direct(double s, double v, Estimator estimator, float* mean, bool* guarded) {
  // The row's own log-weights, e^{−sτ − τ²/2 − u²/2} with u = (v_j − v)/h_o, shifted by the largest: no distance
  // underflows them. As the exact rows do (SortedKeys::window), the keys whose log-weight falls more than the skip
  // (25 + log₂ n bits) below the largest are left out: those beyond the cut where the tilt alone falls that far below
  // the largest key's weight, which grows until no key held within it is larger.
  const double* tau = keys_.tau.get();
  const auto exponent = [&](int64_t j) {
    const double u = (double(keys_.v.get()[j]) - v) / other_.h;
    return -tau[j] * (s + tau[j] / 2) - u * u / 2;
  };
  double cut = std::min(reach_, tilt_cut(s, skip_));
  for (int pass = 0; pass < 4; ++pass) {
    const int64_t matter = std::upper_bound(tau, tau + keys_.count, cut) - tau;
    double top = -kInf;
    for (int64_t j = 0; j < matter; ++j)
      if (keys_.w.get()[j] > 0) top = std::max(top, exponent(j) + std::log(double(keys_.w.get()[j])));
    if (!std::isfinite(top)) {
      if (cut >= reach_) return false;
      cut = reach_;
      continue;
    }
    // ω ≤ omega_max_: a key beyond the cut weighs at most ω_max·e^{−(sτ + τ²/2)}.
    const double need = tilt_cut(s, skip_ + std::log(omega_max_) - top);
    if (need > cut) {
      if (need > reach_) {  // beyond the keys held: asked for (far2d.cpp), else the row runs exactly
        wanted_ = std::max(wanted_, need);
        return false;
      }
      cut = need;
      continue;
    }
    DirectRow row;
    for (int64_t j = 0; j < matter; ++j) {
      const double e = exponent(j) - top;
      if (!(e >= -skip_)) continue;
      const double far = s + tau[j], other = (double(keys_.v.get()[j]) - v) / other_.h;  // x₁'s column first
      const double z[3] = {1, far_axis_ == 0 ? far : other, far_axis_ == 0 ? other : far};
      row.add(double(keys_.w.get()[j]) * std::exp(e), z, keys_.y.get() + j * width_, width_);
    }
    row.fit(estimator, width_, mean, guarded);
    return true;
  }
  return false;
}

}  // namespace ka
