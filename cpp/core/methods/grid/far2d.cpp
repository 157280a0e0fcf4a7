// The 2-D Gaussian rows beyond a grid model's reach, from its side and corner tables (far2d.h).
#include "methods/grid/far2d.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/scratch.h"
#include "methods/grid/sorted_keys.h"

namespace ka {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kRegathers = 6;

// A gathered key: its distance behind the edge (τ, or τ₁ for a corner) and its place in the sorted sample; the keys
// of a table are sorted by it, ties in sample order (one comparator: one sort in the module).
struct Found {
  double tau;
  int64_t j;
};
struct ByTau {
  bool operator()(const Found& a, const Found& b) const { return a.tau < b.tau || (a.tau == b.tau && a.j < b.j); }
};

// The run of the sorted sample (by x₁) whose x₁ lies within `reach` bandwidths behind edge e: [*from, *to), found by
// bisection.
void x1_run(const SortedKeys& sorted, double e, bool low, double reach, double h, int64_t* from, int64_t* to) {
  const float* x = sorted.x();
  const int64_t n = sorted.rows();
  const double bound = low ? e + reach * h : e - reach * h;
  int64_t lo = 0, hi = n;  // the first key above bound (low end) or at or above it (high end)
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const double at = double(x[2 * mid]);
    if (low ? !(at > bound) : at < bound)
      lo = mid + 1;
    else
      hi = mid;
  }
  *from = low ? 0 : lo;
  *to = low ? lo : n;
}

// Room for k keys of `width` columns.
bool room(SideKeys* keys, int64_t k, int64_t width) {
  return keys->tau.reset_zeroed(k) && keys->v.reset_zeroed(k) && keys->y.reset_zeroed(k * width) &&
         keys->w.reset_zeroed(k);
}
bool room(CornerKeys* keys, int64_t k, int64_t width) {
  return keys->t1.reset_zeroed(k) && keys->t2.reset_zeroed(k) && keys->y.reset_zeroed(k * width) &&
         keys->w.reset_zeroed(k);
}

// The keys of the side table beyond the box along axis d (edge e, `low` side) within `reach` bandwidths behind it, by τ
// ascending: along x₁ the run of the sorted sample read from the edge inward; along x₂ the bands of x₂ in reach,
// sorted.
Status gather_side(SortedKeys* sorted, int64_t width, int64_t d, double e, bool low, double reach, double h,
                   SideKeys* keys) {
  const float* x = sorted->x();
  const auto tau_of = [&](int64_t j) { return (low ? double(x[2 * j + d]) - e : e - double(x[2 * j + d])) / h; };
  const auto put = [&](int64_t r, int64_t j) {
    keys->tau.get()[r] = tau_of(j);
    keys->v.get()[r] = x[2 * j + 1 - d];
    std::copy(sorted->y() + j * width, sorted->y() + (j + 1) * width, keys->y.get() + r * width);
    keys->w.get()[r] = sorted->w() ? sorted->w()[j] : 1.0f;
  };
  if (d == 0) {
    int64_t from = 0, to = 0;
    x1_run(*sorted, e, low, reach, h, &from, &to);
    const int64_t k = to - from;
    sorted->keys_read += k;
    if (!room(keys, k, width)) return Status::OutOfMemory;
    for (int64_t r = 0; r < k; ++r) put(r, low ? from + r : to - 1 - r);
    keys->count = k;
    return Status::Ok;
  }
  const KeyBands& bands = sorted->bands();
  const int64_t edge_band = bands.band_of(e), inner = bands.band_of(low ? e + reach * h : e - reach * h);
  const int64_t b0 = std::min(edge_band, inner), b1 = std::max(edge_band, inner);
  const int64_t begin = bands.start(b0), end = bands.start(b1 + 1);
  sorted->keys_read += end - begin;
  Scratch<Found> found(end - begin);
  if (!found.ok()) return Status::OutOfMemory;
  int64_t k = 0;
  for (int64_t at = begin; at < end; ++at) {
    const int64_t j = bands.order()[at];
    if (tau_of(j) <= reach) found.get()[k++] = {tau_of(j), j};
  }
  std::sort(found.get(), found.get() + k, ByTau());
  if (!room(keys, k, width)) return Status::OutOfMemory;
  for (int64_t r = 0; r < k; ++r) put(r, found.get()[r].j);
  keys->count = k;
  return Status::Ok;
}

// The keys of a corner table within reach[d] bandwidths behind both edges, by τ₁ ascending: from the run of x₁ behind
// its edge or the bands of x₂ behind its own, whichever holds fewer keys, those within reach along both axes.
Status gather_corner(SortedKeys* sorted, int64_t width, const double* e, const bool* low, const double* reach,
                     const double* h, CornerKeys* keys) {
  const float* x = sorted->x();
  const auto tau = [&](int64_t j, int64_t d) {
    return (low[d] ? double(x[2 * j + d]) - e[d] : e[d] - double(x[2 * j + d])) / h[d];
  };
  int64_t from = 0, to = 0, begin = 0, end = 0;
  x1_run(*sorted, e[0], low[0], reach[0], h[0], &from, &to);
  const KeyBands& bands = sorted->bands();
  const bool banded = bands.ready();
  if (banded) {
    const int64_t edge_band = bands.band_of(e[1]);
    const int64_t inner = bands.band_of(low[1] ? e[1] + reach[1] * h[1] : e[1] - reach[1] * h[1]);
    begin = bands.start(std::min(edge_band, inner));
    end = bands.start(std::max(edge_band, inner) + 1);
  }
  const bool by_bands = banded && end - begin < to - from;
  const int64_t candidates = by_bands ? end - begin : to - from;
  sorted->keys_read += candidates;
  Scratch<Found> found(candidates);
  if (!found.ok()) return Status::OutOfMemory;
  int64_t k = 0;
  for (int64_t m = 0; m < candidates; ++m) {
    const int64_t j = by_bands ? int64_t(bands.order()[begin + m]) : low[0] ? from + m : to - 1 - m;
    if (tau(j, 0) <= reach[0] && tau(j, 1) <= reach[1]) found.get()[k++] = {tau(j, 0), j};
  }
  if (by_bands) std::sort(found.get(), found.get() + k, ByTau());
  if (!room(keys, k, width)) return Status::OutOfMemory;
  for (int64_t r = 0; r < k; ++r) {
    const int64_t j = found.get()[r].j;
    keys->t1.get()[r] = tau(j, 0);
    keys->t2.get()[r] = tau(j, 1);
    std::copy(sorted->y() + j * width, sorted->y() + (j + 1) * width, keys->y.get() + r * width);
    keys->w.get()[r] = sorted->w() ? sorted->w()[j] : 1.0f;
  }
  keys->count = k;
  return Status::Ok;
}

// Where a row outside the box sits: which table (0–3: side[d][high] at 2d + high; 4–7: corner[high₁][high₂] at
// 4 + 2·high₁ + high₂; −1: none) and its distances in bandwidths (a side's s, then v, the other coordinate).
struct Place {
  int table = -1;
  double s[2] = {0, 0}, v = 0;
};
Place place_of(const float* q, const Axis* axis) {
  Place at;
  int beyond[2];
  for (int64_t d = 0; d < 2; ++d) {
    const double c = q[d];
    beyond[d] = c < axis[d].lo ? -1 : c > axis[d].hi ? 1 : 0;
    at.s[d] = beyond[d] < 0 ? (axis[d].lo - c) / axis[d].h : beyond[d] > 0 ? (c - axis[d].hi) / axis[d].h : 0;
  }
  if (beyond[0] && beyond[1]) {
    at.table = 4 + 2 * (beyond[0] > 0) + (beyond[1] > 0);
  } else if (beyond[0] || beyond[1]) {
    const int64_t d = beyond[0] ? 0 : 1;
    at.table = int(2 * d + (beyond[d] > 0));
    at.s[0] = at.s[d];
    at.v = q[1 - d];
  }
  return at;
}

}  // namespace

Result far_rows_2d(const Fit& f, const Axis* axis, double total, const int64_t* far, int64_t far_count,
                   const FitOut& out, int64_t* exact, int64_t* exact_count, int64_t* range_count, SortedKeys* sorted,
                   FarTables* tables) {
  const Problem& p = f.problem;
  const int64_t width = p.values.cols, n = p.keys.rows;
  const auto all_exact = [&]() {
    for (int64_t k = 0; k < far_count; ++k) exact[(*exact_count)++] = far[k];
    return Result{};
  };
  const bool mean_only = !out.sum_sq_weights && !out.effective_keys && !out.log_denominator;
  if (far_count == 0 || !sorted || !tables || p.masks.any() || f.query_scale || !mean_only ||
      p.kernel.kind != KernelKind::Gaussian)
    return all_exact();
  if (const Status st = sorted->prepare(f); st != Status::Ok)
    return st == Status::BadArgument ? all_exact() : Result{st};
  double tol = kInf;  // the tolerance the nodes were sized for, along the finer axis (grid_nodes)
  for (int64_t d = 0; d < 2; ++d) tol = std::min(tol, (axis[d].step / axis[d].h) * (axis[d].step / axis[d].h) / 12);
  const double eps = kPivotFloor * tol;
  const double omega_max = sorted->omega_max();  // direct fits bound the keys they leave out by it
  Scratch<Place> at(far_count);
  if (!at.ok()) return {Status::OutOfMemory};
  double least[8][2];  // per table, the smallest distance of its rows (per axis for corners)
  std::fill(&least[0][0], &least[0][0] + 16, kInf);
  for (int64_t k = 0; k < far_count; ++k) {
    const Place& a = at.get()[k] = place_of(p.queries.row(far[k]), axis);
    if (a.table < 0) continue;
    for (int64_t d = 0; d < (a.table < 4 ? 1 : 2); ++d) least[a.table][d] = std::min(least[a.table][d], a.s[d]);
  }
  // Each table that has rows: kept when made for this sample and bandwidth, and its keys gathered to the reach its
  // nearest rows need (from an earlier call, or now).
  bool ready[8] = {};  // the tables kept or made for this call
  for (int t = 0; t < 8; ++t) {
    if (!std::isfinite(least[t][0])) continue;
    if (t < 4) {
      const int64_t d = t / 2;
      const bool low = t % 2 == 0;
      FarSide& side = tables->side[d][!low];
      const Axis& grid_other = axis[1 - d];
      if (d == 1 && !sorted->bands().ready()) continue;
      Axis other;  // the grid's axis along the other coordinate, kSideRefine times finer
      other.lo = grid_other.lo;
      other.hi = grid_other.hi;
      other.h = grid_other.h;
      other.nodes = kSideRefine * (grid_other.nodes - 1) + 1;
      other.step = other.hi > other.lo ? (other.hi - other.lo) / double(other.nodes - 1) : other.h;
      other.L = int64_t(std::ceil(reach_of(KernelKind::Gaussian) * other.h / other.step));
      other.E = other.nodes + 2 * other.L;
      other.fft = fft_pays(2, double(other.nodes), double(other.L));
      if (!(other.hi > other.lo)) continue;
      const double e = low ? axis[d].lo : axis[d].hi;
      side.keep(d, e, low, axis[d].h, other, eps, total, n, omega_max, width);
      ready[t] = true;
      const double need = side.reach_for(least[t][0]);
      if (need <= side.reach()) continue;
      if (const Status st = gather_side(sorted, width, d, e, low, need, axis[d].h, &side.keys()); st != Status::Ok)
        return {st};
      side.held(need);
    } else {
      const bool low[2] = {(t - 4) / 2 == 0, (t - 4) % 2 == 0};
      FarCorner& corner = tables->corner[!low[0]][!low[1]];
      const double e[2] = {low[0] ? axis[0].lo : axis[0].hi, low[1] ? axis[1].lo : axis[1].hi};
      const double h[2] = {axis[0].h, axis[1].h};
      corner.keep(e, low, h, eps, total, n, omega_max, sorted->y_hi() - sorted->y_lo(), width);
      ready[t] = true;
      const double need[2] = {corner.reach_for(least[t][0]), corner.reach_for(least[t][1])};
      if (need[0] <= corner.reach()[0] && need[1] <= corner.reach()[1]) continue;
      const double reach[2] = {std::max(need[0], corner.reach()[0]), std::max(need[1], corner.reach()[1])};
      if (const Status st = gather_corner(sorted, width, e, low, reach, h, &corner.keys()); st != Status::Ok)
        return {st};
      corner.held(reach[0], reach[1]);
    }
  }
  for (int64_t k = 0; k < far_count; ++k) {
    const int64_t i = far[k];
    const Place& a = at.get()[k];
    float* mean = out.mean.row(i);
    bool guarded = false, served = false;
    // A row whose cut reaches beyond the keys held (far out, where the keys that weigh most are not those nearest the
    // edge along the axis its table was gathered for) gathers them to that cut and tries again (a corner with no key
    // of weight within the reach held: four times as far, up to kRegathers times).
    for (int attempt = 0; attempt <= kRegathers && !served && a.table >= 0 && ready[a.table]; ++attempt) {
      if (a.table < 4) {
        const int64_t d = a.table / 2;
        FarSide& side = tables->side[d][a.table % 2];
        served = side.fit(a.s[0], a.v, f.estimator, mean, &guarded);
        if (served || attempt == kRegathers || !(side.wanted() > side.reach())) break;
        const double reach = 1.25 * side.wanted();
        const bool low = a.table % 2 == 0;
        if (const Status st =
                gather_side(sorted, width, d, low ? axis[d].lo : axis[d].hi, low, reach, axis[d].h, &side.keys());
            st != Status::Ok)
          return {st};
        side.held(reach);
      } else {
        const bool low[2] = {(a.table - 4) / 2 == 0, (a.table - 4) % 2 == 0};
        FarCorner& corner = tables->corner[!low[0]][!low[1]];
        served = corner.fit(a.s[0], a.s[1], f.estimator, mean, &guarded);
        const double* want = corner.wanted();
        if (served || attempt == kRegathers || !(want[0] > corner.reach()[0] || want[1] > corner.reach()[1])) break;
        const double reach[2] = {1.25 * std::max(want[0], corner.reach()[0]),
                                 1.25 * std::max(want[1], corner.reach()[1])};
        const double e[2] = {low[0] ? axis[0].lo : axis[0].hi, low[1] ? axis[1].lo : axis[1].hi};
        const double h[2] = {axis[0].h, axis[1].h};
        if (const Status st = gather_corner(sorted, width, e, low, reach, h, &corner.keys()); st != Status::Ok)
          return {st};
        corner.held(reach[0], reach[1]);
      }
    }
    if (!served) {
      exact[(*exact_count)++] = i;
      continue;
    }
    if (out.guarded) out.guarded[i] = guarded;
    if (out.self_weight) out.self_weight[i] = std::numeric_limits<double>::quiet_NaN();
    ++*range_count;
  }
  return {};
}

}  // namespace ka
