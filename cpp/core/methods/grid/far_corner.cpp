// The fit beyond one corner of a 2-D Gaussian sample as a function of the two distances (far_corner.h).
#include "methods/grid/far_corner.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/local_solve.h"
#include "engine/online_softmax.h"
#include "methods/grid/query.h"

namespace ka {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kGuessMargin = 1.0;
// A cell serves its rows where the fit it interpolates at its centre is within this share of the tolerance (times
// range(y)) of the fit from the exact means there (FarCorner::cell_holds).
constexpr double kCellCheck = 0.1;

}  // namespace

bool FarCorner::keep(const double* edge, const bool* low, const double* h, double eps, double total, int64_t keys,
                     double omega_max, double y_range, int64_t width) {
  const bool same = std::equal(edge, edge + 2, edge_) && std::equal(low, low + 2, low_) && std::equal(h, h + 2, h_);
  if (reach_[0] >= 0 && same && eps == eps_ && total == total_ && y_range == y_range_ && width == width_) return true;
  y_range_ = y_range;
  tolerance_ = eps / kPivotFloor;
  const double ln2 = 0.6931471805599453;  // as SortedKeys::skip: 25 + log₂ n bits, in natural log
  skip_ = std::min(126.0, 25 + std::log(double(std::max<int64_t>(keys, 1))) / ln2) * ln2;
  omega_max_ = omega_max;
  std::copy(edge, edge + 2, edge_);
  std::copy(low, low + 2, low_);
  std::copy(h, h + 2, h_);
  eps_ = eps;
  total_ = total;
  width_ = width;
  reach_[0] = reach_[1] = -1;
  wanted_[0] = wanted_[1] = 0;
  keys_.count = 0;
  log_gather_ = log_guess_ = std::log(4 * double(std::max<int64_t>(keys, 1)) / eps) + 8;
  ok_ = nodes_.reset(kTiltNodes, kTiltNodes * stride()) && checked_.reset_zeroed(kTiltNodes * kTiltNodes * 2);
  return false;
}

void FarCorner::held(double r1, double r2) {
  const bool more = reach_[0] >= 0 && (r1 > reach_[0] || r2 > reach_[1]);
  reach_[0] = r1;
  reach_[1] = r2;
  wanted_[0] = wanted_[1] = 0;
  if (more)  // nodes made with fewer keys: made again
    ok_ = nodes_.reset(kTiltNodes, kTiltNodes * stride()) && checked_.reset_zeroed(kTiltNodes * kTiltNodes * 2);
}

double FarCorner::reach_for(double s) const {
  return tilt_cut(tilt_node(std::max<int64_t>(tilt_cell(s), 0)), log_gather_);
}

const double* FarCorner::node(int64_t k1, int64_t k2) {
  double* row = nodes_.make(k1);
  if (!row) return nullptr;
  double* v = row + k2 * stride();
  if (v[stride() - 1] != 0) return v;  // made: 1 usable, −1 not
  const double s[2] = {tilt_node(k1), tilt_node(k2)};
  Status st = Status::Ok;
  v[stride() - 1] = exact_at(s, v, &st) ? 1 : -1;
  return st == Status::Ok ? v : nullptr;
}

bool FarCorner::exact_at(const double* s, double* v, Status* status) {
  const int64_t W = width_;
  double M[4][4], Y[8][3][3];
  if (W > 8) return false;
  // The first pass's cut: the last node's exponent with a margin (e¹ of weight), which spares most nodes a second pass.
  const double guess = log_guess_ + kGuessMargin;
  double cut[2] = {std::min(reach_[0], tilt_cut(s[0], guess)), std::min(reach_[1], tilt_cut(s[1], guess))};
  bool enough = false;
  Scratch<double> power(keys_.count);  // each key's log-tilt, then its shifted weight
  if (!power.ok()) {
    *status = Status::OutOfMemory;
    return false;
  }
  for (int pass = 0; pass < 4 && !enough; ++pass) {
    const int64_t matter = std::upper_bound(keys_.t1.get(), keys_.t1.get() + keys_.count, cut[0]) - keys_.t1.get();
    double top = -std::numeric_limits<double>::infinity();  // the largest log-tilt of a key with weight: the shift
    for (int64_t j = 0; j < matter; ++j) {
      const double t1 = keys_.t1.get()[j], t2 = keys_.t2.get()[j];
      power.get()[j] = t2 <= cut[1] ? -t1 * (s[0] + t1 / 2) - t2 * (s[1] + t2 / 2) : -kInf;
      if (keys_.w.get()[j] > 0) top = std::max(top, power.get()[j]);
    }
    if (!std::isfinite(top)) {  // no key of weight within the cut: all the keys held, then more of them
      if (cut[0] < reach_[0] || cut[1] < reach_[1]) {
        std::copy(reach_, reach_ + 2, cut);
        continue;
      }
      for (int d = 0; d < 2; ++d) wanted_[d] = std::max(wanted_[d], 4 * std::max(reach_[d], 0.01));
      break;
    }
    std::fill(&M[0][0], &M[0][0] + 16, 0.0);
    std::fill(&Y[0][0][0], &Y[0][0][0] + 8 * 9, 0.0);
    for (int64_t j = 0; j < matter; ++j) {
      if (power.get()[j] == -kInf) continue;
      const double t1 = keys_.t1.get()[j], t2 = keys_.t2.get()[j];
      const double w = double(keys_.w.get()[j]) * std::exp(power.get()[j] - top);
      const double p1[4] = {w, w * t1, w * t1 * t1, w * t1 * t1 * t1}, p2[4] = {1, t2, t2 * t2, t2 * t2 * t2};
      for (int a = 0; a < 4; ++a)  // a + b ≤ 4: the entries the means and their derivatives read
        for (int b = 0; b + a <= 4 && b < 4; ++b) M[a][b] += p1[a] * p2[b];
      for (int64_t c = 0; c < W; ++c) {
        const double y = double(keys_.y.get()[j * W + c]);
        for (int a = 0; a < 3; ++a)
          for (int b = 0; b + a <= 3 && b < 3; ++b) Y[c][a][b] += y * p1[a] * p2[b];
      }
    }
    // In the shifted units the keys left out weigh at most 2W·e^{−top}·e^{−(s·τ_c + τ_c²/2)} (far_corner.h).
    const double L = std::log(2 * total_ / (eps_ * M[0][0])) - top;
    log_guess_ = L;
    const double need[2] = {tilt_cut(s[0], L), tilt_cut(s[1], L)};
    enough = need[0] <= cut[0] && need[1] <= cut[1];
    if (need[0] > reach_[0] || need[1] > reach_[1]) {  // beyond the keys held: asked for (far2d.cpp), else exactly
      for (int d = 0; d < 2; ++d) wanted_[d] = std::max(wanted_[d], need[d]);
      break;
    }
    for (int d = 0; d < 2; ++d) cut[d] = std::max(cut[d], need[d]);
  }
  if (!enough) return false;
  const double A = M[0][0];
  const double m1 = M[1][0] / A, m2 = M[0][1] / A, m12 = M[1][1] / A;
  // Value and derivatives of E[g] for g = τ₁ᵃτ₂ᵇ (times y_c where c ≥ 0), written at entry q.
  const auto put = [&](int64_t q, int64_t c, int a, int b) {
    const auto e = [&](int x, int y) { return (c < 0 ? M[x][y] : Y[c][x][y]) / A; };
    const double g = e(a, b), g1 = e(a + 1, b), g2 = e(a, b + 1), g12 = e(a + 1, b + 1);
    double* out = v + 4 * q;
    out[0] = g;
    out[1] = -(g1 - m1 * g);
    out[2] = -(g2 - m2 * g);
    out[3] = g12 - m1 * g2 - m2 * g1 - m12 * g + 2 * m1 * m2 * g;
  };
  put(0, -1, 1, 0);
  put(1, -1, 0, 1);
  put(2, -1, 2, 0);
  put(3, -1, 1, 1);
  put(4, -1, 0, 2);
  for (int64_t c = 0; c < W; ++c) {
    put(5 + 3 * c, c, 0, 0);
    put(6 + 3 * c, c, 1, 0);
    put(7 + 3 * c, c, 0, 1);
  }
  return true;
}

void FarCorner::interpolate(const double* const* at, int64_t k1, int64_t k2, double s1, double s2, double* q) const {
  const double a1 = tilt_node(k1), d1 = tilt_node(k1 + 1) - a1, a2 = tilt_node(k2), d2 = tilt_node(k2 + 1) - a2;
  const Hermite x(std::clamp((s1 - a1) / d1, 0.0, 1.0)), y(std::clamp((s2 - a2) / d2, 0.0, 1.0));
  // The bicubic Hermite weights of each corner's value, ∂₁, ∂₂ and ∂₁₂ (scaled by the cell's sides); at[2i + j] is the
  // node (k₁ + i, k₂ + j).
  const double v1[2] = {x.v0, x.v1}, t1[2] = {x.d0 * d1, x.d1 * d1}, v2[2] = {y.v0, y.v1},
               t2[2] = {y.d0 * d2, y.d1 * d2};
  for (int64_t m = 0; m < quantities(); ++m) {
    double sum = 0;
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j) {
        const double* e = at[2 * i + j] + 4 * m;
        sum += v1[i] * v2[j] * e[0] + t1[i] * v2[j] * e[1] + v1[i] * t2[j] * e[2] + t1[i] * t2[j] * e[3];
      }
    q[m] = sum;
  }
}

bool FarCorner::solve(double s1, double s2, const double* q, Estimator estimator, double* mean) const {
  // The moments about the query in bandwidths, u_d = s_d + τ_d (a column's sign leaves the intercept as it is), in
  // kPowers order: 1, u₁, u₂, u₁², u₁u₂, u₂².
  const double S[6] = {1,
                       s1 + q[0],
                       s2 + q[1],
                       s1 * s1 + 2 * s1 * q[0] + q[2],
                       s1 * s2 + s1 * q[1] + s2 * q[0] + q[3],
                       s2 * s2 + 2 * s2 * q[1] + q[4]};
  const bool linear = estimator == Estimator::LocalLinear;
  double a[9], l[9], g[3] = {1, 0, 0};
  bool guarded = false;
  if (linear) {
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 3; ++c) a[r * 3 + c] = S[product_power(r, c, 2)];
    guarded = first_column_of_inverse(a, 3, l, g);
  }
  for (int64_t c = 0; c < width_; ++c) {
    const double yv = q[5 + 3 * c], t[3] = {yv, s1 * yv + q[6 + 3 * c], s2 * yv + q[7 + 3 * c]};
    mean[c] = linear ? fitted_value(g, t, 3, 1) : yv;
  }
  return guarded;
}

bool FarCorner::cell_holds(const double* const* at, int64_t k1, int64_t k2, Estimator estimator) {
  uint8_t& mark = checked_.get()[(k1 * kTiltNodes + k2) * 2 + (estimator == Estimator::LocalLinear)];
  if (mark == 0) {
    const double centre[2] = {(tilt_node(k1) + tilt_node(k1 + 1)) / 2, (tilt_node(k2) + tilt_node(k2 + 1)) / 2};
    double exact[4 * (5 + 3 * 8)], q[5 + 3 * 8], by_table[8], by_keys[8];
    Status st = Status::Ok;
    bool holds = exact_at(centre, exact, &st);
    if (holds) {
      interpolate(at, k1, k2, centre[0], centre[1], q);
      solve(centre[0], centre[1], q, estimator, by_table);
      for (int64_t m = 0; m < quantities(); ++m) q[m] = exact[4 * m];
      solve(centre[0], centre[1], q, estimator, by_keys);
      for (int64_t c = 0; c < width_; ++c)
        holds = holds && std::fabs(by_table[c] - by_keys[c]) <= kCellCheck * tolerance_ * y_range_;
    }
    mark = holds ? 1 : 2;
  }
  return mark == 1;
}

bool FarCorner::fit(double s1, double s2, Estimator estimator, float* mean, bool* guarded) {
  *guarded = false;
  if (!ok_ || width_ > 8) return false;
  const int64_t k1 = tilt_cell(s1), k2 = tilt_cell(s2);
  if (k1 < 0 || k2 < 0) return false;
  const double* at[4];
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 2; ++j) {
      at[2 * i + j] = node(k1 + i, k2 + j);
      if (!at[2 * i + j] || at[2 * i + j][stride() - 1] < 0) return false;
    }
  if (!cell_holds(at, k1, k2, estimator)) return direct(s1, s2, estimator, mean, guarded);
  double q[5 + 3 * 8], fitted[8];
  interpolate(at, k1, k2, s1, s2, q);
  *guarded = solve(s1, s2, q, estimator, fitted);
  for (int64_t c = 0; c < width_; ++c) mean[c] = mean_to_float(fitted[c]);
  return true;
}

bool FarCorner::direct(double s1, double s2, Estimator estimator, float* mean, bool* guarded) {
  // As FarSide::direct: the row's own log-tilts, the keys more than the skip below the largest left out, over the
  // keys held within the cut where the tilt alone falls that far (grown until no key held within it is larger).
  const double* t1 = keys_.t1.get();
  const double* t2 = keys_.t2.get();
  const auto exponent = [&](int64_t j) { return -t1[j] * (s1 + t1[j] / 2) - t2[j] * (s2 + t2[j] / 2); };
  double cut[2] = {std::min(reach_[0], tilt_cut(s1, skip_)), std::min(reach_[1], tilt_cut(s2, skip_))};
  for (int pass = 0; pass < 4; ++pass) {
    const int64_t matter = std::upper_bound(t1, t1 + keys_.count, cut[0]) - t1;
    double top = -kInf;
    for (int64_t j = 0; j < matter; ++j)
      if (t2[j] <= cut[1] && keys_.w.get()[j] > 0)
        top = std::max(top, exponent(j) + std::log(double(keys_.w.get()[j])));
    if (!std::isfinite(top)) {
      if (cut[0] >= reach_[0] && cut[1] >= reach_[1]) return false;
      std::copy(reach_, reach_ + 2, cut);
      continue;
    }
    const double L = skip_ + std::log(omega_max_) - top;
    const double need[2] = {tilt_cut(s1, L), tilt_cut(s2, L)};
    if (need[0] > cut[0] || need[1] > cut[1]) {
      if (need[0] > reach_[0] || need[1] > reach_[1]) {  // beyond the keys held: asked for (far2d.cpp)
        for (int d = 0; d < 2; ++d) wanted_[d] = std::max(wanted_[d], need[d]);
        return false;
      }
      for (int d = 0; d < 2; ++d) cut[d] = std::max(cut[d], need[d]);
      continue;
    }
    DirectRow row;
    for (int64_t j = 0; j < matter; ++j) {
      const double e = exponent(j) - top;
      if (!(t2[j] <= cut[1]) || !(e >= -skip_)) continue;
      const double z[3] = {1, s1 + t1[j], s2 + t2[j]};
      row.add(double(keys_.w.get()[j]) * std::exp(e), z, keys_.y.get() + j * width_, width_);
    }
    row.fit(estimator, width_, mean, guarded);
    return true;
  }
  return false;
}

}  // namespace ka
