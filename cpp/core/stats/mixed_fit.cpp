// The fits of a mixed regression (mixed.h): each group of queries sharing a combination of levels runs the continuous
// engine with its key weights, and its outputs are written back to the group's rows.
#include <algorithm>
#include <cmath>
#include <limits>

#include "base/rare.h"
#include "engine/key_reach.h"
#include "methods/grid/grid.h"
#include "methods/plan.h"
#include "stats/mixed.h"
#include "stats/mixed_detail.h"
#include "stats/summary_parts.h"

namespace ka {
namespace mixed_detail {

KA_COLD GroupedFit::GroupedFit(const Fit& f, const Categories& c)
    : base_(f), c_(c), groups_(c.queries, f.problem.queries.rows, c.count, c.levels) {
  const Problem& p = f.problem;
  const Masks& m = p.masks;
  const bool other_masks = m.causal || m.key_padding || m.general || m.query_groups;
  const int64_t I = p.queries.rows, J = p.keys.rows;
  if (other_masks || f.query_scale || f.query_keys || (m.leave_one_out && I != J)) {
    status_ = Status::BadArgument;
    return;
  }
  if (!groups_.ok()) {
    status_ = Status::OutOfMemory;
    return;
  }
  int64_t levels = 0;
  for (int32_t d = 0; d < c.count; ++d) levels += c.levels[d];
  const int64_t most = groups_.largest(), banded = m.leave_one_out || m.band_first ? most : 0;
  const bool ok = queries_.reset_zeroed(most * p.queries.cols) && omega_.reset_zeroed(J) &&
                  factors_.reset_zeroed(levels) && band_first_.reset_zeroed(banded) && band_last_.reset_zeroed(banded);
  if (!ok) status_ = Status::OutOfMemory;
}

KA_COLD const Fit& GroupedFit::prepare(int64_t g) {
  const Problem& p = base_.problem;
  const int64_t dims = p.queries.cols, n = size(g), J = p.keys.rows;
  const int64_t* rows = members(g);
  for (int64_t r = 0; r < n; ++r)
    std::copy(p.queries.row(rows[r]), p.queries.row(rows[r]) + dims, queries_.get() + r * dims);
  group_weights(c_, c_.queries + rows[0] * c_.count, base_.observation_weights, J, factors_.get(), omega_.get());
  fit_ = base_;
  fit_.problem.queries = ConstMatrix{queries_.get(), n, dims, dims};
  fit_.observation_weights = omega_.get();
  fit_.query_keys = p.queries.rows == J ? rows : nullptr;
  // A thread per 2^20 multiply-adds at most (as the engine's attention calls): a group is one call, often small, and
  // waking pool threads for each would cost more than its work (the results do not depend on the count).
  const double work = double(n) * double(J) * double(dims + p.values.cols);
  fit_.problem.threads = int32_t(std::clamp(work / double(1 << 20), 1.0, double(p.threads)));
  // Query r of the group ignores the keys of its own band (or itself): the band of its row in the whole call.
  Masks& masks = fit_.problem.masks;
  if (p.masks.leave_one_out || p.masks.band_first) {
    for (int64_t r = 0; r < n; ++r) {
      const int64_t i = rows[r];
      band_first_.get()[r] = p.masks.band_first ? p.masks.band_first[i] : i;
      band_last_.get()[r] = p.masks.band_first ? p.masks.band_last[i] : i;
      if (p.masks.leave_one_out) {  // a band always holds its own point; leave-one-out alone is the band [i, i]
        band_first_.get()[r] = std::min(band_first_.get()[r], i);
        band_last_.get()[r] = std::max(band_last_.get()[r], i);
      }
    }
    masks.leave_one_out = false;
    masks.band_first = band_first_.get();
    masks.band_last = band_last_.get();
  }
  return fit_;
}

}  // namespace mixed_detail

namespace {

using mixed_detail::GroupedFit;

// The outputs of one group's fit, written back to the call's rows: `at(r)` is the row of the group's query r.
struct GroupOutputs {
  int64_t width;
  Scratch<float> mean;
  Scratch<double> sum_sq, self, eff, logden, mean64;
  Scratch<uint8_t> guarded;
  GroupOutputs(const FitOut& out, int64_t rows, int64_t width_)
      : width(width_),
        mean(rows * width),
        sum_sq(out.sum_sq_weights ? rows : 0),
        self(out.self_weight ? rows : 0),
        eff(out.effective_keys ? rows : 0),
        logden(out.log_denominator ? rows : 0),
        mean64(out.mean_double ? rows * width : 0),
        guarded(out.guarded ? rows : 0) {}
  bool ok() const {
    return mean.ok() && sum_sq.ok() && self.ok() && eff.ok() && logden.ok() && mean64.ok() && guarded.ok();
  }
  // The group's FitOut for n rows, asking for what `out` asks for.
  FitOut view(const FitOut& out, int64_t n) const {
    FitOut o{Matrix{mean.get(), n, width, width}};
    if (out.sum_sq_weights) o.sum_sq_weights = sum_sq.get();
    if (out.self_weight) o.self_weight = self.get();
    if (out.effective_keys) o.effective_keys = eff.get();
    if (out.log_denominator) o.log_denominator = logden.get();
    if (out.mean_double) o.mean_double = mean64.get();
    if (out.guarded) o.guarded = guarded.get();
    return o;
  }
  void scatter(const int64_t* rows, int64_t n, const FitOut& out) const {
    for (int64_t r = 0; r < n; ++r) {
      const int64_t i = rows[r];
      std::copy(mean.get() + r * width, mean.get() + (r + 1) * width, out.mean.row(i));
      if (out.sum_sq_weights) out.sum_sq_weights[i] = sum_sq.get()[r];
      if (out.self_weight) out.self_weight[i] = self.get()[r];
      if (out.effective_keys) out.effective_keys[i] = eff.get()[r];
      if (out.log_denominator) out.log_denominator[i] = logden.get()[r];
      if (out.mean_double)
        std::copy(mean64.get() + r * width, mean64.get() + (r + 1) * width, out.mean_double + i * width);
      if (out.guarded) out.guarded[i] = guarded.get()[r];
    }
  }
};

Status check_mixed(const Fit& f, const Categories& c) {
  const Problem& p = f.problem;
  if (c.count < 1) return Status::BadArgument;
  return check_categories(c, p.queries.rows, p.keys.rows, true);
}

// Where groups report an empty row (EmptyPolicy::Error), the first in query order, as one continuous call reports it.
struct FirstError {
  Result result;
  void take(Result r, const int64_t* rows) {
    if (r.status == Status::Ok) return;
    if (r.status == Status::EmptyRow) r.row = rows[r.row];
    if (result.status == Status::Ok ||
        (r.status == Status::EmptyRow && result.status == Status::EmptyRow && r.row < result.row))
      result = r;
  }
};

// A group's fit: on the grid where the plan gives one at `grid_tolerance` (> 0; one continuous column and no mask),
// else exactly. Its keys are the whole sample, weighted by the group's discrete factors.
Result group_fit(const Fit& sub, const FitOut& out, double grid_tolerance) {
  if (grid_tolerance > 0 && !sub.problem.masks.any() && !out.mean_double) {
    const Problem& p = sub.problem;
    const int64_t nodes = plan_grid_nodes(p.keys, p.kernel.kind, p.kernel.bandwidth, grid_tolerance);
    if (nodes > 0) return grid_local_fit(sub, nodes, out);
  }
  return local_fit(sub, out);
}

}  // namespace

KA_COLD Result mixed_fit(const Fit& f, const Categories& c, const FitOut& out, double grid_tolerance) {
  if (const Status st = check_mixed(f, c); st != Status::Ok) return {st};
  const int64_t I = f.problem.queries.rows, width = f.problem.values.cols;
  if (out.mean.rows != I || out.mean.cols != width || (I > 0 && !out.mean.data)) return {Status::BadShape};
  if (out.self_weight && I != f.problem.keys.rows) return {Status::BadShape};
  GroupedFit groups(f, c);
  if (groups.status() != Status::Ok) return {groups.status()};
  const GroupOutputs buffers(out, groups.largest(), width);
  if (!buffers.ok()) return {Status::OutOfMemory};
  FirstError first;
  for (int64_t g = 0; g < groups.count(); ++g) {
    const Fit& sub = groups.prepare(g);
    const Result r = group_fit(sub, buffers.view(out, groups.size(g)), grid_tolerance);
    first.take(r, groups.members(g));
    if (r.status != Status::Ok && r.status != Status::EmptyRow) return first.result;
    buffers.scatter(groups.members(g), groups.size(g), out);
  }
  return first.result;
}

KA_COLD Result mixed_gradient(const Fit& f, const Categories& c, const GradientOut& out) {
  if (const Status st = check_mixed(f, c); st != Status::Ok) return {st};
  const int64_t dims = f.problem.queries.cols, width = f.problem.values.cols;
  if (f.problem.queries.rows > 0 && !out.gradient) return {Status::BadShape};
  GroupedFit groups(f, c);
  if (groups.status() != Status::Ok) return {groups.status()};
  const int64_t most = groups.largest();
  Scratch<double> gradient(most * dims * width), sum_sq(out.sum_sq_weights ? most * dims : 0),
      mean(out.mean ? most * width : 0);
  if (!gradient.ok() || !sum_sq.ok() || !mean.ok()) return {Status::OutOfMemory};
  for (int64_t g = 0; g < groups.count(); ++g) {
    const Fit& sub = groups.prepare(g);
    const GradientOut o{gradient.get(), out.sum_sq_weights ? sum_sq.get() : nullptr, out.mean ? mean.get() : nullptr};
    if (const Result r = local_gradient(sub, o); r.status != Status::Ok) return r;
    const int64_t* rows = groups.members(g);
    for (int64_t r = 0; r < groups.size(g); ++r) {
      const int64_t i = rows[r];
      std::copy(gradient.get() + r * dims * width, gradient.get() + (r + 1) * dims * width,
                out.gradient + i * dims * width);
      if (out.sum_sq_weights)
        std::copy(sum_sq.get() + r * dims, sum_sq.get() + (r + 1) * dims, out.sum_sq_weights + i * dims);
      if (out.mean) std::copy(mean.get() + r * width, mean.get() + (r + 1) * width, out.mean + i * width);
    }
  }
  return {};
}

KA_COLD Result mixed_summary(const Fit& f, const Categories& c, FitSummary* out, double* column_sigma2, bool in_double,
                             double grid_tolerance) {
  using namespace summary_parts;
  if (const Status st = check_mixed(f, c); st != Status::Ok) return {st};
  const Problem& p = f.problem;
  const int64_t n = p.queries.rows, width = p.values.cols;
  if (p.keys.rows != n || p.keys.cols != p.queries.cols) return {Status::BadShape};
  Fit whole = f;
  whole.problem.masks = {};
  whole.problem.empty = EmptyPolicy::NaN;
  SampleFit fit(n, width, in_double);
  GroupedFit groups(whole, c);
  if (groups.status() != Status::Ok) return {groups.status()};
  const GroupOutputs buffers(fit.out, groups.largest(), width);
  Resolver resolver(p.values, design_columns(f.estimator, p.queries.cols));
  if (!fit.ok() || !buffers.ok() || !resolver.ok()) return {Status::OutOfMemory};
  FitSummary counts;
  // The groups' problems share the sample's keys: sorted (as a model keeps them), each guarded row reads its reach.
  const bool sorted = sorted_by_first_coordinate(p.keys);
  for (int64_t g = 0; g < groups.count(); ++g) {
    const Fit& sub = groups.prepare(g);
    if (const Result r = group_fit(sub, buffers.view(fit.out, groups.size(g)), grid_tolerance); r.status != Status::Ok)
      return r;
    const int64_t* rows = groups.members(g);
    buffers.scatter(rows, groups.size(g), fit.out);
    // Guarded observations, re-solved on their group's problem (its key weights): the textbook fit, as summarize_fit.
    for (int64_t r = 0; r < groups.size(g); ++r)
      if (fit.guarded.get()[rows[r]])
        resolve_guarded(sub.problem, degree_of(f.estimator), sub.observation_weights, r, rows[r], rows[r], sorted,
                        resolver, fit, counts);
  }
  *out = sum_up(p.values, f.observation_weights, fit, counts, column_sigma2);
  return {};
}

}  // namespace ka
