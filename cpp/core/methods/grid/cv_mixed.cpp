// Leave-one-out CV of a mixed regression on grids (cv_mixed.h): the groups' points sorted by x once, binned per group
// at each bandwidth's grid, mixed by the discrete factors, convolved (cv_parts.h) and read point by point.
#include "methods/grid/cv_mixed.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/local_solve.h"
#include "engine/neighbours.h"
#include "methods/grid/cv_parts.h"
#include "methods/grid/query.h"
#include "methods/plan.h"

namespace ka {

MixedGridCv::MixedGridCv(const Fit& f, const Categories& c, double tolerance) : fit_(f), c_(c), tolerance_(tolerance) {
  Problem& p = fit_.problem;
  p.kernel.bandwidth = &h_;
  const int64_t n = p.keys.rows;
  if (!(tolerance > 0) || p.queries.cols != 1 || p.heads != 1 || n < 2 || !queries_are_keys(p) || p.masks.any() ||
      p.kernel.kind == KernelKind::Cauchy || p.kernel.kind == KernelKind::Softmax ||
      f.estimator == Estimator::LocalQuadratic || check(p, true) != Status::Ok ||
      check_categories(c, n, n, false) != Status::Ok)
    return;
  const float* omega = f.observation_weights;
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (int64_t j = 0; j < n; ++j) {
    const float v = p.keys.row(j)[0];
    const double w = omega ? double(omega[j]) : 1.0;
    if (!std::isfinite(v) || !(w >= 0) || !std::isfinite(w)) return;  // the exact criterion knows what they give
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    total_ += w;
    counted_ += w > 0;
  }
  lo_ = lo;
  range_ = double(hi) - double(lo);
  if (!(range_ > 0) || counted_ < 2) return;

  QueryGroups groups(c.keys, n, c.count, c.levels);
  if (!groups.ok()) return;
  groups_ = groups.count();
  const int64_t width = p.values.cols;
  Scratch<int32_t> group_of(n);
  Scratch<double> key(counted_);
  Scratch<int64_t> order(counted_), place(counted_);
  if (!group_of.ok() || !key.ok() || !order.ok() || !place.ok() || !x_.reset_zeroed(counted_) ||
      !y_.reset_zeroed(counted_ * width) || !w_.reset_zeroed(omega ? counted_ : 0) || !group_.reset_zeroed(counted_) ||
      !codes_.reset_zeroed(groups_ * c.count) || !first_.reset_zeroed(groups_ + 1) ||
      !members_.reset_zeroed(counted_) || !group_weight_.reset_zeroed(groups_))
    return;
  for (int64_t g = 0; g < groups_; ++g) {
    const int64_t* members = groups.members(g);
    std::copy(c.keys + members[0] * c.count, c.keys + (members[0] + 1) * c.count, codes_.get() + g * c.count);
    for (int64_t r = 0; r < groups.size(g); ++r) group_of.get()[members[r]] = int32_t(g);
  }
  // The counted points in order of x (ties in any order: the sums only round apart).
  int64_t k = 0;
  for (int64_t j = 0; j < n; ++j)
    if (!omega || omega[j] > 0) {
      place.get()[k] = j;
      key.get()[k++] = double(p.keys.row(j)[0]);
    }
  order_by(key.get(), order.get(), counted_);
  for (int64_t s = 0; s < counted_; ++s) {
    const int64_t j = place.get()[order.get()[s]];
    const int32_t g = group_of.get()[j];
    x_.get()[s] = p.keys.row(j)[0];
    std::copy(p.values.row(j), p.values.row(j) + width, y_.get() + s * width);
    if (omega) w_.get()[s] = omega[j];
    group_.get()[s] = g;
    ++first_.get()[g + 1];
    group_weight_.get()[g] += omega ? double(omega[j]) : 1.0;
  }
  for (int64_t g = 0; g < groups_; ++g) first_.get()[g + 1] += first_.get()[g];
  Scratch<int64_t> next(groups_);
  if (!next.ok()) return;
  std::copy(first_.get(), first_.get() + groups_, next.get());
  for (int64_t s = 0; s < counted_; ++s) members_.get()[next.get()[group_.get()[s]]++] = s;
  // The exact rows' problem: the sorted points as keys and queries, each held out.
  p.keys = p.queries = ConstMatrix{x_.get(), counted_, 1, 1};
  p.values = ConstMatrix{y_.get(), counted_, width, width};
  p.masks = Masks{};
  p.masks.leave_one_out = true;
  p.empty = EmptyPolicy::NaN;
  suits_ = true;
}

Result MixedGridCv::score(float h, const double* lambda, double* score, bool* served) {
  *served = false;
  if (!suits_) return {};
  const int64_t cells = plan_grid_cv_cells(range_, fit_.problem.kernel.kind, h, counted_, tolerance_);
  const int64_t width = fit_.problem.values.cols, channels = 1 + width, nodes = cells + 1, K = groups_;
  if (cells == 0 || double(K) * double(counted_) > double(kMixedGridWork)) return {};
  *served = true;
  h_ = h;
  const KernelKind kind = fit_.problem.kernel.kind;
  const bool linear = fit_.estimator == Estimator::LocalLinear, weighted = fit_.observation_weights;
  const int64_t stride = (linear ? 3 : 1) + width * (linear ? 2 : 1), count = c_.count;
  const Axis x = cv_axis(lo_, range_, cells, kind, h);
  const double scale = double(cells) / range_;
  // Point s's cell e and offset u ∈ [0, 1] across it, the same for its binning and its reading.
  const auto locate = [&](int64_t s, int64_t* e) {
    const double t = (double(x_.get()[s]) - lo_) * scale;
    *e = std::clamp<int64_t>(int64_t(std::floor(t)), 0, cells - 1);
    return t - double(*e);
  };

  // The discrete factors W(g, g') and, per group in turn, its mixed bins (channel-major: Σω, then Σω·y per column).
  const int64_t group_bins = channels * nodes;
  Scratch<double> mixed(group_bins), factors(K * K);
  Scratch<float> key_weights;  // ω_j·W(g, g_j) per sorted point, made for a group's first exact row
  if (!mixed.ok() || !factors.ok()) return {Status::OutOfMemory};
  for (int64_t g = 0; g < K; ++g)
    for (int64_t o = 0; o < K; ++o) {
      double f = 1;
      for (int32_t d = 0; d < count; ++d)
        f *= discrete_factor(c_.kernels[d], c_.levels[d], lambda[d], codes_.get()[g * count + d],
                             codes_.get()[o * count + d]);
      factors.get()[g * K + o] = f;
    }

  // Adds group o's points, linearly binned with weights factor·ω, to bins b (each group's run is in order of x, so the
  // bins are written in order too).
  const auto bin_group = [&](int64_t o, double factor, double* b) {
    for (int64_t r = first_.get()[o]; r < first_.get()[o + 1]; ++r) {
      const int64_t s = members_.get()[r];
      int64_t e;
      const double u = locate(s, &e), w = factor * (weighted ? double(w_.get()[s]) : 1.0);
      b[e] += w * (1 - u);
      b[e + 1] += w * u;
      for (int64_t col = 0; col < width; ++col) {
        const double wy = w * double(y_.get()[s * width + col]);
        b[(1 + col) * nodes + e] += wy * (1 - u);
        b[(1 + col) * nodes + e + 1] += wy * u;
      }
    }
  };
  // Where each group weighs every other group by one value off_g (one unordered column, or λ = 0), its bins are
  // off_g·(every point's) + (W(g, g) − off_g)·(its own points'): 2n points binned a score instead of K·n.
  Scratch<double> off(K), all;
  if (!off.ok()) return {Status::OutOfMemory};
  bool two_valued = true, any_off = false;
  for (int64_t g = 0; g < K; ++g) {
    off.get()[g] = K > 1 ? factors.get()[g * K + (g == 0 ? 1 : 0)] : 0.0;
    for (int64_t o = 0; o < K; ++o) two_valued = two_valued && (o == g || factors.get()[g * K + o] == off.get()[g]);
    any_off = any_off || off.get()[g] != 0;
  }
  if (two_valued && any_off) {
    if (!all.reset_zeroed(group_bins)) return {Status::OutOfMemory};
    for (int64_t o = 0; o < K; ++o) bin_group(o, 1.0, all.get());
  }

  double sum = 0;
  Scratch<double> moments, slopes;
  ExactRowWork work(linear ? 2 : 1, width);
  if (!work.ok()) return {Status::OutOfMemory};
  for (int64_t g = 0; g < K; ++g) {
    const double* W = factors.get() + g * K;
    double reach_weight = 0;  // Σ_j ω_j·W(g, g_j): the total weight the group's points see
    if (two_valued) {
      const double o = off.get()[g];
      if (o != 0)
        for (int64_t k = 0; k < group_bins; ++k) mixed.get()[k] = o * all.get()[k];
      else
        std::fill(mixed.get(), mixed.get() + group_bins, 0.0);
      bin_group(g, W[g] - o, mixed.get());
      for (int64_t k = 0; k < K; ++k) reach_weight += W[k] * group_weight_.get()[k];
    } else {
      std::fill(mixed.get(), mixed.get() + group_bins, 0.0);
      for (int64_t o = 0; o < K; ++o) {
        if (!(W[o] > 0)) continue;
        reach_weight += W[o] * group_weight_.get()[o];
        bin_group(o, W[o], mixed.get());
      }
    }
    if (const Status st = cv_moments(kind, h, x, mixed.get(), nodes, width, linear, &moments, &slopes);
        st != Status::Ok)
      return {st};
    const double* at_node = moments.get() + x.L * stride;
    const double served_above = served_share(x.fft, linear) * reach_weight, own = W[g];
    const OwnShare share(kind, x);  // the point's own share of its moments (grid/query.h)
    bool weights_made = false;
    for (int64_t r = first_.get()[g]; r < first_.get()[g + 1]; ++r) {
      const int64_t s = members_.get()[r];
      int64_t e;
      const double u = locate(s, &e), w = weighted ? double(w_.get()[s]) : 1.0, lw = own * w * share.s0(u);
      const double* at = at_node + e * stride;
      const double* slope = slopes.get() + e * stride;
      const double s0 = at[0] + u * slope[0] - lw;
      const double s1 = linear ? at[1] + u * slope[1] : 0,
                   s2 = linear ? at[2] + u * slope[2] - own * w * share.s2(u) : 0;
      if (s0 > served_above && (!linear || guard_free(s0, s1, s2))) {
        for (int64_t col = 0; col < width; ++col) {
          const int64_t k = (linear ? 3 : 1) + col * (linear ? 2 : 1);
          const double y = double(y_.get()[s * width + col]), t0 = at[k] + u * slope[k] - lw * y;
          const double fit = linear ? linear_fit(s0, s1, s2, t0, at[k + 1] + u * slope[k + 1]) : t0 / s0;
          sum += w * (y - fit) * (y - fit);
        }
        continue;
      }
      // The textbook solve over the keys in reach, each weighing ω_j·W(g, g_j); a singular design scores +inf.
      if (!weights_made) {
        if (!key_weights.reset_zeroed(counted_)) return {Status::OutOfMemory};
        for (int64_t j = 0; j < counted_; ++j)
          key_weights.get()[j] = float((weighted ? double(w_.get()[j]) : 1.0) * W[group_.get()[j]]);
        weights_made = true;
      }
      if (!exact_local_row(fit_.problem, linear ? 1 : 0, key_weights.get(), s, work.rows, work.mean, nullptr, true)) {
        *score = std::numeric_limits<double>::infinity();
        return {};
      }
      for (int64_t col = 0; col < width; ++col) {
        const double d = double(y_.get()[s * width + col]) - work.mean[col];
        sum += w * d * d;
      }
    }
  }
  *score = std::isnan(sum) || !(total_ > 0) ? std::numeric_limits<double>::infinity() : sum / total_;
  return {};
}

}  // namespace ka
