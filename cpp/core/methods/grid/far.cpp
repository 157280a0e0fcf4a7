// The rows beyond a grid's sample that the grid itself cannot serve (far.h).
#include "methods/grid/far.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/scratch.h"
#include "engine/online_softmax.h"
#include "methods/grid/far2d.h"
#include "methods/grid/far_table.h"
#include "methods/grid/sorted_keys.h"

namespace ka {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The keys at the two ends of a 1-D sample (those equal to its smallest and its largest key), what a row beyond
// every key's reach reads: count and Σy (the Nearest policy's mean), Σω, Σω², Σω·y (the far limit of an infinite
// kernel), per end. One comparison pass over the keys, run only when such a row exists.
struct EdgeKeys {
  double count = 0, weight = 0, weight_sq = 0;
  Scratch<double> sum, weighted;  // width entries each: Σy, Σω·y
};
// On a sample sorted by its first coordinate (`sorted`, ties in sample order: the keys equal to lo and to hi are its
// first and last runs, in the order the pass meets them), only those runs are read: the same sums.
Status gather_edges(const Fit& f, float lo, float hi, EdgeKeys* low, EdgeKeys* high, const SortedKeys* sorted) {
  const Problem& p = f.problem;
  const int64_t width = p.values.cols, n = p.keys.rows;
  for (EdgeKeys* e : {low, high}) {
    if (!e->sum.reset_zeroed(width) || !e->weighted.reset_zeroed(width)) return Status::OutOfMemory;
  }
  const Fit g = sorted ? sorted->sorted(f) : f;
  const auto add = [&](int64_t j) {
    const float x = g.problem.keys.row(j)[0];
    if (x != lo && x != hi) return;
    const double w = g.observation_weights ? double(g.observation_weights[j]) : 1.0;
    for (EdgeKeys* e : {low, high}) {
      if (x != (e == low ? lo : hi)) continue;
      e->count += 1;
      e->weight += w;
      e->weight_sq += w * w;
      for (int64_t c = 0; c < width; ++c) {
        e->sum.get()[c] += double(g.problem.values.row(j)[c]);
        e->weighted.get()[c] += w * double(g.problem.values.row(j)[c]);
      }
    }
  };
  if (!sorted) {
    for (int64_t j = 0; j < n; ++j) add(j);
    return Status::Ok;
  }
  int64_t first = 0, last = n;  // the run at lo is [0, first), the run at hi [last, n)
  while (first < n && g.problem.keys.row(first)[0] == lo) ++first;
  while (last > first && g.problem.keys.row(last - 1)[0] == hi) --last;
  for (int64_t j = 0; j < first; ++j) add(j);
  for (int64_t j = last; j < n; ++j) add(j);
  return Status::Ok;
}

// On a sample sorted by its first coordinate (`sorted`), the keys within reach are a run at that end, found by
// bisection, and their order by (t, sample order) is the run's read outward, tie by tie: the same keys in the same
// order, in O(log n + k).
Status gather_end(const Fit& f, double end, bool low, double reach, EndKeys* e, SortedKeys* sorted) {
  const Fit g = sorted ? sorted->sorted(f) : f;
  const Problem& p = g.problem;
  const int64_t n = p.keys.rows, width = p.values.cols;
  const auto behind = [&](int64_t j) { return low ? double(p.keys.row(j)[0]) - end : end - double(p.keys.row(j)[0]); };
  int64_t k = 0, from = 0;  // sorted: the run [from, from + k)
  if (sorted) {
    int64_t lo = 0, hi = n;  // low end: the first key beyond reach; high end: the first key within it
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (low ? behind(mid) <= reach : !(behind(mid) <= reach))
        lo = mid + 1;
      else
        hi = mid;
    }
    k = low ? lo : n - lo;
    from = low ? 0 : lo;
    sorted->keys_read += k;
  } else {
    for (int64_t j = 0; j < n; ++j) k += behind(j) <= reach;
  }
  struct Found {
    double t;
    int64_t j;
  };
  Scratch<Found> found(k);
  if (!found.ok() || !e->behind.reset_zeroed(k) || !e->x.reset_zeroed(k) || !e->y.reset_zeroed(k * width) ||
      !e->w.reset_zeroed(k))
    return Status::OutOfMemory;
  if (sorted && low) {
    for (int64_t r = 0; r < k; ++r) found.get()[r] = {behind(r), r};
  } else if (sorted) {  // from the end inward, each run of equal keys in sorted (sample) order
    int64_t r = 0;
    for (int64_t stop = n; stop > from;) {
      int64_t run = stop - 1;
      while (run > from && p.keys.row(run - 1)[0] == p.keys.row(stop - 1)[0]) --run;
      for (int64_t j = run; j < stop; ++j) found.get()[r++] = {behind(j), j};
      stop = run;
    }
  } else {
    for (int64_t j = 0, r = 0; j < n; ++j)
      if (behind(j) <= reach) found.get()[r++] = {behind(j), j};
    std::sort(found.get(), found.get() + k,
              [](const Found& a, const Found& b) { return a.t < b.t || (a.t == b.t && a.j < b.j); });
  }
  for (int64_t r = 0; r < k; ++r) {
    const int64_t j = found.get()[r].j;
    e->behind.get()[r] = found.get()[r].t;
    e->x.get()[r] = p.keys.row(j)[0];
    std::copy(p.values.row(j), p.values.row(j) + width, e->y.get() + r * width);
    e->w.get()[r] = g.observation_weights ? g.observation_weights[j] : 1.0f;
  }
  e->count = k;
  return Status::Ok;
}

}  // namespace

Result far_rows(const Fit& f, const Axis* axis, int64_t dims, double total, const int64_t* far, int64_t far_count,
                const FitOut& out, int64_t* exact, int64_t* exact_count, int64_t* empty_row, int64_t* range_count,
                SortedKeys* sorted, FarTables* tables) {
  const Problem& p = f.problem;
  const int64_t width = p.values.cols;
  const Axis& x1 = axis[0];
  *empty_row = -1;
  *range_count = 0;
  if (dims == 2 && p.kernel.kind == KernelKind::Gaussian)  // the side and corner tables (far2d.h)
    return far_rows_2d(f, axis, total, far, far_count, out, exact, exact_count, range_count, sorted, tables);
  // Rows outside the box the grid does not serve (beyond its output nodes, or with too little weight there).
  // A compact kernel with no key within h along some axis: the empty row, by the policy. In 1-D, the Gaussian at a
  // distance D beyond an end: only the keys within far_reach(D) behind it matter (far_table.h), t_cut below, where
  // the mass left out falls to ε·ω_end. Nadaraya–Watson's mean then moves by at most ε·range(y); local-linear's guard
  // (kPivotFloor) bounds how much its solve amplifies a change of the moments, so ε = kPivotFloor·τ keeps both within
  // the tolerance τ the nodes were sized for (grid_nodes: spacing h·sqrt(12τ)). Where no key but the end's lies within
  // t_cut, the fit is the far limit, the ω-weighted mean of y over the end's keys, in O(1). Elsewhere a row asking
  // for its mean alone reads the end's FarTable (the fit as a function of D/h, in O(1); its nodes are exact fits over
  // the keys within their t_cut), and a row asking for more (Σℓ², effective keys, log-denominators) is fitted by the
  // exact engine over its keys within t_cut, O(k). Keys within the widest reach a call needs are gathered once per end
  // and kept with the table (a model's `tables`: across calls). Anything else (2-D, the Nearest policy in 2-D, a
  // compact kernel within h, ends whose keys all have ω = 0) runs exactly.
  const bool gaussian_1d = p.kernel.kind == KernelKind::Gaussian && dims == 1;
  const double tau = (x1.step / x1.h) * (x1.step / x1.h) / 12, eps = kPivotFloor * tau;
  const auto beyond_by = [&](double at) { return at < x1.lo ? x1.lo - at : at - x1.hi; };
  const auto t_cut = [&](double D, double end_weight) { return far_reach(D, x1.h, far_log(total, eps, end_weight)); };
  const bool mean_only = !out.sum_sq_weights && !out.effective_keys && !out.log_denominator;
  FarTables own;
  FarTables& table = tables ? *tables : own;
  double nearest_low = std::numeric_limits<double>::infinity(), nearest_high = nearest_low;  // the smallest D per end
  if (gaussian_1d)
    for (int64_t k = 0; k < far_count; ++k) {
      const double at = p.queries.row(far[k])[0];
      (at < x1.lo ? nearest_low : nearest_high) = std::min(at < x1.lo ? nearest_low : nearest_high, beyond_by(at));
    }
  EdgeKeys low, high;
  double low_log = 0, high_log = 0;  // far_log per end
  bool gathered = false;
  for (int64_t k = 0; k < far_count; ++k) {
    const int64_t i = far[k];
    const float* q = p.queries.row(i);
    bool beyond = false;
    for (int64_t d = 0; d < dims; ++d)
      beyond = beyond || std::max(axis[d].lo - double(q[d]), double(q[d]) - axis[d].hi) > axis[d].h;
    const bool empty = is_compact(p.kernel.kind) && beyond;
    const bool limit = gaussian_1d;
    const bool nearest = empty && p.empty == EmptyPolicy::Nearest;
    if ((!empty && !limit) || (nearest && dims != 1)) {
      exact[(*exact_count)++] = i;
      continue;
    }
    if (!gathered && dims == 1 && (limit || nearest)) {
      SortedKeys* by_x = sorted && !p.masks.any() ? sorted : nullptr;
      if (by_x)
        if (const Status st = by_x->prepare(f); st != Status::Ok) return {st};
      if (const Status st = gather_edges(f, float(x1.lo), float(x1.hi), &low, &high, by_x); st != Status::Ok)
        return {st};
      if (limit)
        for (const bool at_low : {true, false}) {
          const double D = at_low ? nearest_low : nearest_high;
          const EdgeKeys& e = at_low ? low : high;
          if (!std::isfinite(D) || !(e.weight > 0)) continue;
          FarTable& t = at_low ? table.low : table.high;
          const double end = at_low ? x1.lo : x1.hi;
          t.keep(end, at_low, x1.h, eps, total, e.weight, width);
          const double need = std::max(t_cut(D, e.weight), t.reach_for(D / x1.h));
          if (need <= t.reach()) continue;  // a model's table holds them from an earlier call
          if (const Status st = gather_end(f, end, at_low, need, &t.keys(), by_x); st != Status::Ok) return {st};
          t.held(need);
        }
      low_log = far_log(total, eps, low.weight);
      high_log = far_log(total, eps, high.weight);
      gathered = true;
    }
    const bool below = double(q[0]) < x1.lo;
    const EdgeKeys& end = below ? low : high;
    float* mean = out.mean.row(i);
    if (out.self_weight) out.self_weight[i] = kNaN;
    if (empty) {
      if (out.sum_sq_weights) out.sum_sq_weights[i] = kNaN;
      if (out.effective_keys) out.effective_keys[i] = 0;
      if (out.log_denominator) out.log_denominator[i] = -std::numeric_limits<double>::infinity();
      NearestKeys at_end;  // the nearest keys are the end's: their mean, as the exact engine takes it
      at_end.known_sums = end.sum.get();
      at_end.known_count = end.count;
      // An error is reported after the exact rows, so that the first empty row is named.
      if (finalize_empty_row(width, mean, p.empty, at_end) == RowOutcome::Error && *empty_row < 0) *empty_row = i;
      continue;
    }
    if (!(end.weight > 0)) {
      exact[(*exact_count)++] = i;
      continue;
    }
    const double D = beyond_by(double(q[0]));
    FarTable& far_table = below ? table.low : table.high;
    const EndKeys& keys = far_table.keys();
    // Keys behind the end still matter where the first one past the end's own (the keys run by t) is within t_cut.
    const double cut = far_reach(D, x1.h, below ? low_log : high_log);
    const int64_t behind = int64_t(end.count);
    const bool more = behind < keys.count && keys.behind.get()[behind] <= cut;
    bool guarded = false;
    if (more && mean_only && far_table.fit(D / x1.h, f.estimator, mean, &guarded)) {
      if (out.guarded) out.guarded[i] = guarded;
      ++*range_count;
      continue;
    }
    if (more) {  // the exact fit over those
      const int64_t matter =
          std::upper_bound(keys.behind.get(), keys.behind.get() + keys.count, cut) - keys.behind.get();
      Fit sub = f;
      sub.problem.queries = {q, 1, 1, p.queries.stride};
      sub.problem.keys = {keys.x.get(), matter, 1, 1};
      sub.problem.values = {keys.y.get(), matter, width, width};
      sub.problem.masks.leave_one_out = false;
      sub.observation_weights = keys.w.get();
      const auto at = [&](auto* v) { return v ? v + i : nullptr; };
      const Result r = local_fit(sub, FitOut{Matrix{mean, 1, width, width}, at(out.sum_sq_weights), nullptr,
                                             at(out.effective_keys), at(out.log_denominator), at(out.guarded)});
      if (r.status != Status::Ok) return {r.status, r.status == Status::EmptyRow ? i : -1, 0};
      ++*range_count;
      continue;
    }
    for (int64_t col = 0; col < width; ++col) mean[col] = mean_to_float(end.weighted.get()[col] / end.weight);
    if (out.sum_sq_weights) out.sum_sq_weights[i] = end.weight_sq / (end.weight * end.weight);
    if (out.effective_keys) out.effective_keys[i] = end.weight * end.weight / end.weight_sq;
    const double gap = D / x1.h;
    if (out.log_denominator) out.log_denominator[i] = std::log(end.weight) - gap * gap / 2;
  }
  return {};
}

}  // namespace ka
