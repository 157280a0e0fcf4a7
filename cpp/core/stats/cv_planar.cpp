// The 2-D sample in cells for the exact leave-one-out pass (cv_planar.h).
#include "stats/cv_planar.h"

#include <algorithm>
#include <cmath>

#include "engine/key_reach.h"
#include "engine/key_tile.h"
#include "engine/neighbours.h"

namespace ka {

PlanarSample::PlanarSample(const Problem& sample, const float* observation_weights)
    : n_(sample.keys.rows),
      per_(std::max<int64_t>(kKeyTile, int64_t(std::ceil(std::sqrt(double(kKeyTile) * double(n_)))))),
      order_(n_),
      cell_(n_),
      x_(2 * n_),
      y_(n_ * sample.values.cols),
      weights_(observation_weights ? n_ : 0),
      strip_lo_((n_ + per_ - 1) / per_),
      strip_hi_((n_ + per_ - 1) / per_) {
  const int64_t n = n_, width = sample.values.cols;
  Scratch<double> along(n);
  Scratch<int64_t> by_x1(n);
  if (!order_.ok() || !cell_.ok() || !x_.ok() || !y_.ok() || !weights_.ok() || !strip_lo_.ok() || !strip_hi_.ok() ||
      !along.ok() || !by_x1.ok() || sample.keys.cols != 2 || sample.queries.rows != n)
    return;
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(sample.keys.row(i)[0]) || !std::isfinite(sample.keys.row(i)[1])) return;
  for (int64_t i = 0; i < n; ++i) along.get()[i] = double(sample.keys.row(i)[0]);
  order_by(along.get(), by_x1.get(), n);  // a sample sorted by x₁ keeps its order
  for (int64_t first = 0, s = 0; first < n; first += per_, ++s) {
    const int64_t count = std::min(per_, n - first);
    const int64_t* rows = by_x1.get() + first;
    for (int64_t k = 0; k < count; ++k) along.get()[k] = double(sample.keys.row(rows[k])[1]);
    int64_t* o = order_.get() + first;
    order_by(along.get(), o, count);
    for (int64_t k = 0; k < count; ++k) o[k] = rows[o[k]];
    strip_lo_.get()[s] = double(sample.keys.row(rows[0])[0]);
    strip_hi_.get()[s] = double(sample.keys.row(rows[count - 1])[0]);
  }
  for (int64_t c = 0; c < n; ++c) {
    const int64_t i = order_.get()[c];
    cell_.get()[i] = c;
    std::copy(sample.keys.row(i), sample.keys.row(i) + 2, x_.get() + 2 * c);
    std::copy(sample.values.row(i), sample.values.row(i) + width, y_.get() + c * width);
    if (observation_weights) weights_.get()[c] = observation_weights[i];
  }
  ok_ = true;
}

// The window of cell rows [c0, c1) (consecutive rows of strip `s`): D² = F² + reach2 in bandwidths (F the farthest
// of their strip neighbours, cv_planar.h), the keys of every strip in reach along x₁ whose x₂ lies within D
// bandwidths of the rows' box, copied into `w` (own[c − c0]: row c's place there). Returns the keys copied.
int64_t PlanarSample::gather(int64_t s, int64_t c0, int64_t c1, const float* h, double reach2, bool weighted,
                             Window& w) const {
  const int64_t n = n_, width = w.width, strips = (n + per_ - 1) / per_, strip_end = std::min(n, (s + 1) * per_);
  const float* x = x_.get();
  const auto u2 = [&](int64_t a, int64_t b) {  // squared distance of cell rows a and b, in bandwidths
    const double u = (double(x[2 * a]) - double(x[2 * b])) / h[0],
                 v = (double(x[2 * a + 1]) - double(x[2 * b + 1])) / h[1];
    return u * u + v * v;
  };
  double lo[2] = {x[2 * c0], x[2 * c0 + 1]}, hi[2] = {lo[0], lo[1]}, far = 0;
  for (int64_t c = c0; c < c1; ++c) {
    for (int d = 0; d < 2; ++d) {
      lo[d] = std::min(lo[d], double(x[2 * c + d]));
      hi[d] = std::max(hi[d], double(x[2 * c + d]));
    }
    // The nearer of the point's neighbours along the strip: no farther than its nearest key.
    double f = c > s * per_ ? u2(c, c - 1) : HUGE_VAL;
    if (c + 1 < strip_end) f = std::min(f, u2(c, c + 1));
    far = std::max(far, f);
  }
  const double D = std::sqrt(far + reach2);
  const double from[2] = {lo[0] - D * h[0], lo[1] - D * h[1]}, to[2] = {hi[0] + D * h[0], hi[1] + D * h[1]};
  int64_t m = 0;
  for (int64_t t = 0; t < strips; ++t) {
    if (strip_hi_.get()[t] < from[0] || strip_lo_.get()[t] > to[0]) continue;
    const int64_t b0 = std::min(n, (t + 1) * per_);
    int64_t a = t * per_, b;  // the strip's rows with x₂ in [from, to], by bisection on its order along x₂
    for (int64_t len = b0 - a; len > 0;) {
      const int64_t half = len / 2;
      if (double(x[2 * (a + half) + 1]) < from[1]) {
        a += half + 1;
        len -= half + 1;
      } else {
        len = half;
      }
    }
    for (b = a; b < b0 && double(x[2 * b + 1]) <= to[1]; ++b) {
    }
    if (t == s)
      for (int64_t c = c0; c < c1; ++c) w.own[c - c0] = m + (c - a);
    std::copy(x + 2 * a, x + 2 * b, w.x + 2 * m);
    std::copy(y_.get() + a * width, y_.get() + b * width, w.y + m * width);
    if (weighted) std::copy(weights_.get() + a, weights_.get() + b, w.weights + m);
    m += b - a;
  }
  return m;
}

Result PlanarSample::fit(const Fit& f, const FitOut& out, bool leave_one_out) const {
  const int64_t n = n_, width = f.problem.values.cols, strips = (n + per_ - 1) / per_;
  const float* h = f.problem.kernel.bandwidth;
  const bool weighted = f.observation_weights != nullptr;
  const double reach2 = float_reach2();
  if (out.mean_double || f.query_scale || f.query_keys) return {Status::BadArgument};
  Scratch<float> sub_x(2 * n), sub_y(n * width), sub_w(weighted ? n : 0), mean(kKeyTile * width);
  Scratch<int64_t> own(kKeyTile);
  Scratch<uint8_t> guarded(kKeyTile);
  Scratch<double> rows(4 * kKeyTile);  // sum_sq_weights, self_weight, effective_keys, log_denominator
  if (!sub_x.ok() || !sub_y.ok() || !sub_w.ok() || !mean.ok() || !own.ok() || !guarded.ok() || !rows.ok())
    return {Status::OutOfMemory};
  Window w{sub_x.get(), sub_y.get(), sub_w.get(), own.get(), width};
  Problem q = f.problem;
  q.masks = Masks{};
  if (leave_one_out) q.masks.band_first = q.masks.band_last = own.get();
  double* const outputs[4] = {out.sum_sq_weights, out.self_weight, out.effective_keys, out.log_denominator};
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t strip_end = std::min(n, (s + 1) * per_);
    for (int64_t c0 = s * per_; c0 < strip_end; c0 += kKeyTile) {
      const int64_t c1 = std::min(c0 + kKeyTile, strip_end);
      const int64_t m = gather(s, c0, c1, h, reach2, weighted, w);
      q.queries = {x_.get() + 2 * c0, c1 - c0, 2, 2};
      q.keys = {sub_x.get(), m, 2, 2};
      q.values = {sub_y.get(), m, width, width};
      FitOut block{Matrix{mean.get(), c1 - c0, width, width}};
      block.guarded = out.guarded ? guarded.get() : nullptr;
      double** fields[4] = {&block.sum_sq_weights, &block.self_weight, &block.effective_keys, &block.log_denominator};
      for (int k = 0; k < 4; ++k) *fields[k] = outputs[k] ? rows.get() + k * kKeyTile : nullptr;
      Fit g{q, f.estimator, weighted ? sub_w.get() : nullptr};
      g.query_keys = own.get();  // each row's own observation, for its self weight
      const Result r = local_fit(g, block);
      if (r.status != Status::Ok) return {r.status, r.row >= 0 ? order_.get()[c0 + r.row] : r.row, r.head};
      for (int64_t c = c0; c < c1; ++c) {
        const int64_t i = order_.get()[c];
        std::copy(mean.get() + (c - c0) * width, mean.get() + (c - c0 + 1) * width, out.mean.row(i));
        if (out.guarded) out.guarded[i] = guarded.get()[c - c0];
        for (int k = 0; k < 4; ++k)
          if (outputs[k]) outputs[k][i] = rows.get()[k * kKeyTile + (c - c0)];
      }
    }
  }
  return {};
}

double PlanarSample::float_reach2() const {
  const double ln2 = 0.6931471805599453;  // log2 by log: libm's log2 is not linked (docs/package.md)
  return 2 * ln2 * (25 + std::log(double(n_)) / ln2);
}

int PlanarSample::textbook_row(const Fit& loo, int64_t i, ExactRowScratch rows, double* mean, RowWork& work) const {
  const int64_t width = loo.problem.values.cols, c = cell_.get()[i], s = c / per_;
  const bool weighted = loo.observation_weights != nullptr;
  int64_t own = 0;
  if (!work.ok()) return -1;
  Window w{work.x.get(), work.y.get(), work.weights.get(), &own, width};
  // Every key whose weight is not exactly 0 in double (kDoubleUnderflow: key_reach.h) lies within the window.
  const int64_t m = gather(s, c, c + 1, loo.problem.kernel.bandwidth, 2 * kDoubleUnderflow, weighted, w);
  Problem q = loo.problem;
  q.queries = {x_.get() + 2 * c, 1, 2, 2};
  q.keys = {work.x.get(), m, 2, 2};
  q.values = {work.y.get(), m, width, width};
  q.masks = Masks{};
  q.masks.band_first = q.masks.band_last = &own;
  return exact_local_row(q, degree_of(loo.estimator), weighted ? work.weights.get() : nullptr, 0, rows, mean) ? 1 : 0;
}

}  // namespace ka
