// GridModel (model.h): grid_local_fit's steps with the key ranges, bins and moments kept between calls.
#include "methods/grid/model.h"

#include <algorithm>

#include "methods/grid/binning.h"
#include "methods/grid/convolution.h"
#include "methods/grid/fit_parts.h"
#include "methods/grid/gradient.h"

namespace ka {

GridModel::GridModel(const Fit& sample)
    : keys_(sample.problem.keys), values_(sample.problem.values), weights_(sample.observation_weights) {}

bool GridModel::same_sample(const Fit& f) const {
  const Problem& p = f.problem;
  return p.keys.data == keys_.data && p.keys.rows == keys_.rows && p.keys.cols == keys_.cols &&
         p.keys.stride == keys_.stride && p.values.data == values_.data && p.values.cols == values_.cols &&
         p.values.stride == values_.stride && f.observation_weights == weights_;
}

Status GridModel::moments(const Fit& f, int64_t nodes, bool squares, Axis* axis, const double** moments) {
  const Problem& p = f.problem;
  const int64_t dims = p.queries.cols, width = p.values.cols;
  Layer& layer = layers_[squares];
  const bool keep = layer.nodes >= nodes && layer.nodes <= kKeptBinsFactor * nodes;
  const int64_t use = keep ? layer.nodes : nodes;
  lay_axes(f, use, lo_, hi_, axis);
  const Axis& x1 = axis[0];
  const Axis x2 = dims == 2 ? axis[1] : Axis{};
  *moments = layer.moments.get();
  if (!keep) {
    const int64_t cells = x1.nodes * x2.nodes;
    layer.nodes = 0;
    layer.convolved = false;
    if (!layer.count.reset_zeroed(cells) || !layer.count_sq.reset_zeroed(cells) ||
        !layer.sums.reset_zeroed(cells * width))
      return Status::OutOfMemory;
    bin_sample(f, axis, dims, squares, layer.count.get(), layer.count_sq.get(), layer.sums.get());
    layer.nodes = use;
    ++binnings_;
  }
  const bool same = layer.convolved && layer.kind == p.kernel.kind && layer.estimator == f.estimator &&
                    std::equal(p.kernel.bandwidth, p.kernel.bandwidth + dims, layer.h);
  if (same) return Status::Ok;
  layer.convolved = false;
  const int64_t room = x1.E * x2.E * moment_stride(f, squares);
  if (room > layer.moment_room) {
    if (!layer.moments.reset_zeroed(room)) {
      layer.moment_room = 0;
      return Status::OutOfMemory;
    }
    layer.moment_room = room;
  }
  *moments = layer.moments.get();
  if (const Status st =
          convolve_moments(p.kernel.kind, axis, dims, width, f.estimator == Estimator::LocalLinear, squares,
                           layer.count.get(), layer.count_sq.get(), layer.sums.get(), layer.moments.get());
      st != Status::Ok)
    return st;
  std::copy(p.kernel.bandwidth, p.kernel.bandwidth + dims, layer.h);
  layer.kind = p.kernel.kind;
  layer.estimator = f.estimator;
  layer.convolved = true;
  ++convolutions_;
  return Status::Ok;
}

Status GridModel::ready(const Fit& f) {
  if (!same_sample(f)) return Status::BadArgument;
  if (!ranged_) {
    finite_ = key_ranges(keys_, lo_, hi_);
    sample_totals(f, &total_, &total_sq_);
    weights_status_ = check_observation_weights(f);
    ranged_ = true;
  }
  return Status::Ok;
}

Status GridModel::sorted_sample(const Fit& f, Fit* sorted) {
  if (const Status st = ready(f); st != Status::Ok) return st;
  *sorted = f;
  if (f.problem.masks.any() || f.query_scale) return Status::Ok;
  const Status st = sorted_.prepare(f);
  if (st == Status::BadArgument) return Status::Ok;  // a NaN key: no order (the exact pass decides)
  if (st == Status::Ok) *sorted = sorted_.sorted(f);
  return st;
}

Result GridModel::fit(const Fit& f, int64_t nodes, const FitOut& out, double* error_estimate) {
  if (const Status st = ready(f); st != Status::Ok) return {st};
  if (nodes <= 0) {
    if (error_estimate) *error_estimate = 0;
    Fit g;
    if (const Status st = sorted_sample(f, &g); st != Status::Ok) return {st};
    return local_fit(g, out);
  }
  if (weights_status_ != Status::Ok) return {weights_status_};
  if (const Status st = check_grid_fit(f, nodes, out, true); st != Status::Ok) return {st};
  if (!finite_) {  // NaN or infinite keys: the exact engine knows what they give (as grid_local_fit)
    if (error_estimate) *error_estimate = 0;
    return local_fit(f, out);
  }
  const bool squares = out.sum_sq_weights || out.effective_keys;
  Axis axis[kMaxGridDims];
  const double* mom = nullptr;
  if (const Status st = moments(f, nodes, squares, axis, &mom); st != Status::Ok) return {st};
  return serve_grid(f, axis, mom, total_, total_sq_, squares, out, error_estimate, nullptr, nullptr, &sorted_, &far_);
}

Result GridModel::exact_gradient(const Fit& f, const GradientOut& out) {
  Fit g;
  if (const Status st = sorted_sample(f, &g); st != Status::Ok) return {st};
  return local_gradient(g, out);
}

Result GridModel::gradient(const Fit& f, int64_t nodes, const GradientOut& out) {
  if (const Status st = ready(f); st != Status::Ok) return {st};
  const Problem& p = f.problem;
  float unread = 0;  // check_grid_fit checks a mean's shape; the derivative writes none
  if (nodes <= 0 || !finite_ || weights_status_ != Status::Ok || p.masks.any() || f.query_scale ||
      !grid_serves_gradient(p.kernel.kind, f.estimator) ||
      check_grid_fit(f, nodes, FitOut{Matrix{&unread, p.queries.rows, p.values.cols, p.values.cols}}, true) !=
          Status::Ok)
    return exact_gradient(f, out);
  // The local-linear moments with their squares (both estimators read them: gradient.h), kept as a fit's are.
  Fit linear = f;
  linear.estimator = Estimator::LocalLinear;
  Axis axis[kMaxGridDims];
  const double* mom = nullptr;
  if (const Status st = moments(linear, nodes, true, axis, &mom); st != Status::Ok) return {st};
  const int64_t I = p.queries.rows, dims = p.queries.cols, width = p.values.cols;
  Scratch<int64_t> rows(I);
  if (!rows.ok()) return {Status::OutOfMemory};
  int64_t count = 0;
  if (const Result r = grid_gradient(f, axis, mom, total_, total_sq_, out, rows.get(), &count); r.status != Status::Ok)
    return r;
  if (count == 0) return {};
  // The rows the grid does not serve: exactly, over the keys in each one's reach, written back in their places.
  Scratch<float> q(count * dims);
  Scratch<double> grad(count * dims * width), ss(count * dims), mean(count * width);
  if (!q.ok() || !grad.ok() || !ss.ok() || !mean.ok()) return {Status::OutOfMemory};
  for (int64_t k = 0; k < count; ++k)
    std::copy(p.queries.row(rows.get()[k]), p.queries.row(rows.get()[k]) + dims, q.get() + k * dims);
  Fit sub = f;
  sub.problem.queries = {q.get(), count, dims, dims};
  const Result r =
      exact_gradient(sub, {grad.get(), out.sum_sq_weights ? ss.get() : nullptr, out.mean ? mean.get() : nullptr});
  if (r.status != Status::Ok) return {r.status, r.row >= 0 ? rows.get()[r.row] : -1, 0};
  for (int64_t k = 0; k < count; ++k) {
    const int64_t i = rows.get()[k];
    std::copy(grad.get() + k * dims * width, grad.get() + (k + 1) * dims * width, out.gradient + i * dims * width);
    if (out.sum_sq_weights) std::copy(ss.get() + k * dims, ss.get() + (k + 1) * dims, out.sum_sq_weights + i * dims);
    if (out.mean) std::copy(mean.get() + k * width, mean.get() + (k + 1) * width, out.mean + i * width);
  }
  return {};
}

}  // namespace ka
