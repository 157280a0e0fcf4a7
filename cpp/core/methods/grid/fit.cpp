// Binned local-polynomial regression (grid.h): grid_local_fit lays the grid over the sample's box, bins and
// convolves it (binning.h, convolution.h), then serves the queries from the moments (serve_grid, serve.cpp).
#include "methods/grid/grid.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/scratch.h"
#include "base/simd.h"
#include "methods/grid/binning.h"
#include "methods/grid/convolution.h"
#include "methods/grid/fit_parts.h"
#include "methods/grid/plan.h"

namespace ka {

Status check_grid_fit(const Fit& f, int64_t nodes, const FitOut& out, bool weights_checked) {
  const Problem& p = f.problem;
  if (const Status st = check(p, true); st != Status::Ok) return st;
  const int64_t I = p.queries.rows, width = p.values.cols, dims = p.queries.cols;
  const Masks& m = p.masks;
  if (out.self_weight && I != p.keys.rows && !f.query_keys) return Status::BadShape;
  // Local-quadratic has no binned moments (plan() refuses the grid for it; grid_serves, methods/plan.cpp).
  if (f.estimator == Estimator::LocalQuadratic) return Status::BadArgument;
  if (dims > kMaxGridDims || p.heads != 1 || p.kernel.kind == KernelKind::Softmax ||
      p.kernel.kind == KernelKind::Cauchy || m.causal || m.key_padding || m.general || m.query_groups || m.band_first ||
      nodes < 2 || nodes > kMaxGridNodes || (dims == 2 && nodes * nodes > (int64_t(1) << kMaxCvLevel)))
    return Status::BadArgument;
  if (out.mean.rows != I || out.mean.cols != width || (I > 0 && !out.mean.data)) return Status::BadShape;
  return weights_checked ? Status::Ok : check_observation_weights(f);
}

bool key_ranges(ConstMatrix keys, float* lo, float* hi) {
  const int64_t n = keys.rows;
  for (int64_t d = 0; d < keys.cols; ++d) {
    lo[d] = std::numeric_limits<float>::infinity();
    hi[d] = -lo[d];
    bool finite = true;
    const auto range = simd::keep_out_of_line(&column_range);
    for (int64_t j = 0; j < n; j += kBlock) range(keys, d, j, std::min(n, j + kBlock), &lo[d], &hi[d], &finite);
    if (!finite) return false;
  }
  return true;
}

void lay_axes(const Fit& f, int64_t nodes, const float* lo, const float* hi, Axis* axis, bool box_only) {
  const Problem& p = f.problem;
  const int64_t dims = p.queries.cols;
  for (int64_t d = 0; d < dims; ++d) {
    Axis& a = axis[d];
    a = Axis{};
    a.lo = lo[d];
    a.hi = hi[d];
    a.h = p.kernel.bandwidth[d];
    a.nodes = nodes;
    a.step = a.hi > a.lo ? (a.hi - a.lo) / double(nodes - 1) : a.h;
    const double reach = reach_of(p.kernel.kind);
    // Taps per side, compared in double before converting (h/step can exceed any integer).
    const double span = std::ceil(reach * a.h / a.step);
    a.L = reach > 0 && span < double(nodes) ? int64_t(span) : nodes;
    a.capped = double(a.L) != span;  // in double: span may exceed any integer
    a.E = nodes + 2 * a.L;
  }
  // A query inside the box reads the output nodes L … L + nodes − 1 of each axis and the next (its weight 0 at the
  // box's far edge). Along x₁ from an even node to an even one: the FFT's column pairs stay those of the whole pass.
  if (box_only && dims == 2) {
    Axis &x1 = axis[0], &x2 = axis[1];
    x1.first_held = x1.L - x1.L % 2;
    x1.held = std::min(x1.E, x1.L + x1.nodes + 1 + (x1.L + x1.nodes + 1) % 2) - x1.first_held;
    x2.first_held = x2.L;
    x2.held = std::min(x2.E, x2.L + x2.nodes + 1) - x2.first_held;
  }
  // Which passes run by FFT: axis 1 has G₂ rows (in 1-D, two lines that share taps share a transform), axis 2 E₁.
  if (dims == 2) {
    axis[0].fft = fft_pays(double(axis[1].nodes), double(axis[0].nodes), double(axis[0].L), true, box_only);
    axis[1].fft = fft_pays(double(axis[0].held_nodes()), double(axis[1].nodes), double(axis[1].L), true, box_only);
  } else {
    axis[0].fft = fft_pays(2, double(axis[0].nodes), double(axis[0].L));
  }
}

void sample_totals(const Fit& f, double* total, double* total_sq) {
  const float* omega = f.observation_weights;
  *total = *total_sq = 0;
  if (omega)
    for (int64_t j = 0; j < f.problem.keys.rows; ++j) {
      *total += double(omega[j]);
      *total_sq += double(omega[j]) * double(omega[j]);
    }
  else
    *total = *total_sq = double(f.problem.keys.rows);
}

int64_t moment_stride(const Fit& f, bool squares) {
  return NodeMoments(f.estimator == Estimator::LocalLinear, f.problem.queries.cols, f.problem.values.cols, squares)
      .stride();
}

Result grid_local_fit(const Fit& f, int64_t nodes, const FitOut& out, double* error_estimate, int64_t* exact_rows_out,
                      int64_t* range_rows_out) {
  if (range_rows_out) *range_rows_out = 0;
  if (const Status st = check_grid_fit(f, nodes, out); st != Status::Ok) return {st};
  const Problem& p = f.problem;
  const int64_t width = p.values.cols, dims = p.queries.cols;
  const bool linear = f.estimator == Estimator::LocalLinear;
  // The axes over the sample's bounding box.
  float lo[kMaxGridDims], hi[kMaxGridDims];
  if (!key_ranges(p.keys, lo, hi)) {  // NaN or infinite keys: the exact engine knows what they give
    if (error_estimate) *error_estimate = 0;
    return local_fit(f, out);
  }
  // The sample fitted at itself (a 2-D CV score): every query lies in the box, and only its nodes are convolved.
  const bool box_only = dims == 2 && queries_are_keys(p);
  Axis axis[kMaxGridDims];
  lay_axes(f, nodes, lo, hi, axis, box_only);
  double total = 0, total_sq = 0;  // Σω, Σω²: the scales of the moments' FFT rounding
  sample_totals(f, &total, &total_sq);
  const Axis& x1 = axis[0];
  const Axis x2 = dims == 2 ? axis[1] : Axis{};

  // The moments, node-major, as NodeMoments lays them out (convolve_moments). The Σ K²·ω² moments serve only the
  // standard errors and effective keys (not a CV score): neither binned nor held otherwise.
  const bool squares = out.sum_sq_weights || out.effective_keys;
  const int64_t stride = moment_stride(f, squares);
  const int64_t cells = x1.nodes * x2.nodes, out_cells = x1.held_nodes() * x2.held_nodes();
  Scratch<double> count(cells), count_sq(squares ? cells : 0), sums(cells * width);
  Scratch<double> moments(out_cells * stride);
  if (!count.ok() || !count_sq.ok() || !sums.ok() || !moments.ok()) return {Status::OutOfMemory};
  std::fill(count.get(), count.get() + cells, 0.0);
  std::fill(count_sq.get(), count_sq.get() + (squares ? cells : 0), 0.0);
  std::fill(sums.get(), sums.get() + cells * width, 0.0);
  bin_sample(f, axis, dims, squares, count.get(), count_sq.get(), sums.get());
  if (const Status st = convolve_moments(p.kernel.kind, axis, dims, width, linear, squares, count.get(), count_sq.get(),
                                         sums.get(), moments.get());
      st != Status::Ok)
    return {st};
  return serve_grid(f, axis, moments.get(), total, total_sq, squares, out, error_estimate, exact_rows_out,
                    range_rows_out);
}

}  // namespace ka
