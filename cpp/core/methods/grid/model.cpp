// GridModel (model.h): grid_local_fit's steps with the key ranges, bins and moments kept between calls.
#include "methods/grid/model.h"

#include <algorithm>

#include "methods/grid/binning.h"
#include "methods/grid/convolution.h"
#include "methods/grid/fit_parts.h"

namespace ka {

GridModel::GridModel(const Fit& sample)
    : keys_(sample.problem.keys), values_(sample.problem.values), weights_(sample.observation_weights) {}

bool GridModel::same_sample(const Fit& f) const {
  const Problem& p = f.problem;
  return p.keys.data == keys_.data && p.keys.rows == keys_.rows && p.keys.cols == keys_.cols &&
         p.keys.stride == keys_.stride && p.values.data == values_.data && p.values.cols == values_.cols &&
         p.values.stride == values_.stride && f.observation_weights == weights_;
}

Result GridModel::gradient(const Fit& f, const GradientOut& out) {
  if (!same_sample(f)) return {Status::BadArgument};
  if (f.problem.masks.any() || f.query_scale) return local_gradient(f, out);
  const Status st = sorted_.prepare(f);
  if (st == Status::BadArgument) return local_gradient(f, out);  // a NaN key: no order (the exact pass decides)
  if (st != Status::Ok) return {st};
  return local_gradient(sorted_.sorted(f), out);
}

Result GridModel::fit(const Fit& f, int64_t nodes, const FitOut& out, double* error_estimate) {
  const Problem& p = f.problem;
  if (!same_sample(f)) return {Status::BadArgument};
  if (const Status st = check_grid_fit(f, nodes, out); st != Status::Ok) return {st};
  if (!ranged_) {
    finite_ = key_ranges(keys_, lo_, hi_);
    sample_totals(f, &total_, &total_sq_);
    ranged_ = true;
  }
  if (!finite_) {  // NaN or infinite keys: the exact engine knows what they give (as grid_local_fit)
    if (error_estimate) *error_estimate = 0;
    return local_fit(f, out);
  }
  const int64_t dims = p.queries.cols, width = p.values.cols;
  const bool squares = out.sum_sq_weights || out.effective_keys;
  Layer& layer = layers_[squares];
  const bool keep = layer.nodes >= nodes && layer.nodes <= kKeptBinsFactor * nodes;
  const int64_t use = keep ? layer.nodes : nodes;
  Axis axis[kMaxGridDims];
  lay_axes(f, use, lo_, hi_, axis);
  const Axis& x1 = axis[0];
  const Axis x2 = dims == 2 ? axis[1] : Axis{};
  if (!keep) {
    const int64_t cells = x1.nodes * x2.nodes;
    layer.nodes = 0;
    layer.convolved = false;
    if (!layer.count.reset_zeroed(cells) || !layer.count_sq.reset_zeroed(cells) ||
        !layer.sums.reset_zeroed(cells * width))
      return {Status::OutOfMemory};
    bin_sample(f, axis, dims, squares, layer.count.get(), layer.count_sq.get(), layer.sums.get());
    layer.nodes = use;
    ++binnings_;
  }
  const bool same = layer.convolved && layer.kind == p.kernel.kind && layer.estimator == f.estimator &&
                    std::equal(p.kernel.bandwidth, p.kernel.bandwidth + dims, layer.h);
  if (!same) {
    layer.convolved = false;
    const int64_t room = x1.E * x2.E * moment_stride(f);
    if (room > layer.moment_room) {
      if (!layer.moments.reset_zeroed(room)) {
        layer.moment_room = 0;
        return {Status::OutOfMemory};
      }
      layer.moment_room = room;
    }
    // As grid_local_fit: the Σ K²·ω² moments stay zero when they are not convolved.
    if (!squares) std::fill(layer.moments.get(), layer.moments.get() + room, 0.0);
    if (const Status st =
            convolve_moments(p.kernel.kind, axis, dims, width, f.estimator == Estimator::LocalLinear, squares,
                             layer.count.get(), layer.count_sq.get(), layer.sums.get(), layer.moments.get());
        st != Status::Ok)
      return {st};
    std::copy(p.kernel.bandwidth, p.kernel.bandwidth + dims, layer.h);
    layer.kind = p.kernel.kind;
    layer.estimator = f.estimator;
    layer.convolved = true;
    ++convolutions_;
  }
  return serve_grid(f, axis, layer.moments.get(), total_, total_sq_, squares, out, error_estimate, nullptr, nullptr,
                    &sorted_);
}

}  // namespace ka
