// The streaming local fit: per query, the weighted moments of the local design, shifted by a running maximum like
// the online softmax, then a tiny solve in double. See local_fit.h for what is computed. This file holds what runs
// once per query block, row or tile; the loops over a tile's keys are in local_fit_tiles.cpp (local_fit_parts.h).
#include "engine/local_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "base/parallel.h"
#include "engine/exact_narrow.h"
#include "engine/key_reach.h"
#include "engine/local_fit_parts.h"
#include "engine/local_rows.h"
#include "engine/local_solve.h"
#include "engine/workspace.h"

namespace ka {
namespace {

using namespace local_fit_parts;
using simd::Batch;
using simd::kLanes;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Code that runs once per query, or per query block and tile, is KA_COLD (local_fit.h) or inlined into it, as it was
// when this was one file (measured: moving the rows' double recomputation into a file of its own cost 2-D
// local-linear searches, whose small bandwidths redo many rows in double, 5 % in WebAssembly); the loops over a
// tile's keys are in local_fit_tiles.cpp, at -O3.

// Adds one packed tile to the moments of query i: scores (masked through a bias row only where the tile needs one),
// the running maximum, then `accumulate`. A key more than `skip` below the row's shift weighs 0, as a whole tile that
// far is skipped (skip_below: all such keys together weigh under 2^-25 of the largest weight). Its weight, and its
// square times the design's products, would otherwise be float32 subnormals, whose arithmetic costs about a hundred
// times a normal one's on x86 (natively, a 3-D local-linear fit's pass with Σw² at 10⁴ points took 1.05 s, 0.13 s with
// subnormals flushed): a tile whose box is near the query holds many such keys in 2-D and 3-D.
void add_tile(const Head& hd, int64_t i, const KeyTile& tile, const Shape& s, TileWork& w, KeyScores key_scores,
              Accumulate accumulate, float skip, Moments& m) {
  float* scores = w.scores.get();
  const float* bias = narrow::tile_bias(hd, i, tile, w.bias.get()) ? w.bias.get() : nullptr;
  const float* q = hd.queries.row(i);
  key_scores(q, tile, w.factors.get(), s.dims, scores);
  const Batch minus_inf(-std::numeric_limits<float>::infinity());
  Batch top = minus_inf;
  auto bad = top != top;
  for (int64_t c = 0; c < tile.padded; c += kLanes) {
    Batch score = simd::load(scores + c);
    if (bias) score = score + simd::load(bias + c);
    // The observation weight joins the score as log2 ω, so the shift is the largest weight ω·K itself: a key of tiny
    // or zero weight (log2 0 = −inf: no observation) cannot set it and underflow every other key.
    score = score + simd::load(w.log_omega.get() + c);
    simd::store(scores + c, score);
    top = xsimd::max(top, score);
    bad = bad | (score != score) | (score == Batch(std::numeric_limits<float>::infinity()));
  }
  if (xsimd::any(bad)) {  // NaN data, or float32 overflow: the row is redone in double
    m.redo = true;
    return;
  }
  const float tile_max = simd::max(top);
  if (tile_max == -std::numeric_limits<float>::infinity()) return;
  if (tile_max > m.max) m.rescale_to(tile_max);
  const Batch floor(float(m.max) - skip);
  for (int64_t c = 0; c < tile.padded; c += kLanes) {
    const Batch score = simd::load(scores + c);
    simd::store(scores + c, xsimd::select(score < floor, minus_inf, score));
  }
  accumulate(tile, scores, q, w, s, m);
}

// The same moments in double, key by key: for rows float32 could not hold (see add_tile's `redo`).
KA_COLD void accumulate_double(const Head& hd, int64_t i, const float* omega, const Shape& s, bool sorted, Moments& m) {
  const float* q = hd.queries.row(i);
  double top = -kInf;
  const auto consider = [&](int64_t j) {
    if (!hd.allows(i, j) || omega[j] == 0) return;
    const double score = log_score<double>(hd.kernel, q, hd.keys.row(j), s.dims) + std::log(double(omega[j]));
    if (!(score <= top)) top = score;  // NaN sticks
  };
  const KeyRange range = keys_in_reach(hd.keys, hd.kernel, q, sorted, consider, [&] { return top; });
  m.clear();
  m.max = top / kLn2;
  double *a = m.a(), *b = m.b(), *t = m.t();
  if (top == -kInf) return;
  std::vector<double> z(size_t(s.p), 1.0), u(size_t(s.dims));
  for (int64_t j = range.first; j < range.last; ++j) {
    if (!hd.allows(i, j) || omega[j] == 0) continue;
    const float* k = hd.keys.row(j);
    const double w = std::exp(log_score<double>(hd.kernel, q, k, s.dims) + std::log(double(omega[j])) - top);
    offsets(q, k, hd.kernel.bandwidth, s.dims, u.data());
    design_row(s.degree, u.data(), s.dims, z.data());
    for (int64_t x = 0; x < s.p; ++x) {
      for (int64_t y = x; y < s.p; ++y) {
        a[x * s.p + y] += w * z[size_t(x)] * z[size_t(y)];
        if (s.with_b) b[x * s.p + y] += w * w * z[size_t(x)] * z[size_t(y)];
      }
      for (int64_t c = 0; c < s.width; ++c) t[x * s.width + c] += w * z[size_t(x)] * double(hd.values.row(j)[c]);
    }
  }
}

struct RowScratch {
  Scratch<double> l, g, z, u;
  Scratch<uint8_t> chosen;
  RowScratch(int64_t p, int64_t dims, int64_t J) : l(p * p), g(p), z(p), u(dims), chosen(J) {}
  bool ok() const { return l.ok() && g.ok() && z.ok() && u.ok() && chosen.ok(); }
};

// Writes query i's outputs from its moments. `log_omega` is ln of the factor the observation weights were divided by;
// `own` is the key that is query i's own observation (Fit::query_keys).
KA_COLD RowOutcome write_fit(const Head& hd, int64_t i, int64_t own, const Shape& s, const Moments& m,
                             const float* omega, double log_omega, const FitOut& out, RowScratch& r) {
  const double *a = m.a(), *b = m.b(), *t = m.t();
  const double s0 = a[0];
  float* mean = out.mean.row(i);
  if (s0 == 0) {
    if (out.sum_sq_weights) out.sum_sq_weights[i] = std::numeric_limits<double>::quiet_NaN();
    if (out.self_weight) out.self_weight[i] = std::numeric_limits<double>::quiet_NaN();
    if (out.effective_keys) out.effective_keys[i] = 0;
    if (out.log_denominator) out.log_denominator[i] = -kInf;
    if (out.guarded) out.guarded[i] = 0;
    return finalize_empty_row(s.width, mean, hd.empty, NearestKeys{&hd, i, r.chosen.get()});
  }
  double* g = r.g.get();
  const bool guarded = first_column_of_inverse(a, s.p, r.l.get(), g);
  if (out.guarded) out.guarded[i] = guarded;
  for (int64_t c = 0; c < s.width; ++c) mean[c] = mean_to_float(fitted_value(g, t + c, s.p, s.width));
  if (out.sum_sq_weights) {  // gᵀ B g, B symmetric with its upper triangle stored
    double v = 0;
    for (int64_t x = 0; x < s.p; ++x)
      for (int64_t y = 0; y < s.p; ++y) v += g[x] * g[y] * (x <= y ? b[x * s.p + y] : b[y * s.p + x]);
    out.sum_sq_weights[i] = v > 0 ? v : b[0] / (s0 * s0);  // see local_fit.h, after kPivotFloor
  }
  if (out.self_weight) {  // ℓ_i(q_i) = w_ii gᵀ z_i
    double v = 0;
    if (hd.allows(i, own) && omega[own] != 0) {
      const float* q = hd.queries.row(i);
      const float* k = hd.keys.row(own);
      double* z = r.z.get();
      offsets(q, k, hd.kernel.bandwidth, s.dims, r.u.get());
      design_row(s.degree, r.u.get(), s.dims, z);
      const double w = std::exp(log_score<double>(hd.kernel, q, k, s.dims) - m.max * kLn2) * double(omega[own]);
      for (int64_t x = 0; x < s.p; ++x) v += w * g[x] * z[x];
    }
    out.self_weight[i] = v;
  }
  if (out.effective_keys) out.effective_keys[i] = s0 * s0 / b[0];
  if (out.log_denominator) out.log_denominator[i] = std::log(s0) + m.max * kLn2 + log_omega;
  return RowOutcome::Done;
}

// A tile is skipped when its best possible score lies more than 25 + log2 J (log2 units) below the row's shift:
// all skipped keys together then weigh less than 2^-25 of the largest weight, below float32's rounding of the sums,
// so the result is unchanged to float32 precision. (Below 126, weights flush to exactly 0 anyway.)
inline float skip_below(int64_t keys) { return std::min(126.0f, 25.0f + std::log2(float(std::max<int64_t>(keys, 1)))); }

// `log2_omega`: log2 of each key's ω, taken once per call (−inf for ω = 0), not once per query block and tile.
// `order`: the queries in the order their blocks take them (rows of `range` index it), or null for their own order.
KA_COLD Result run(const Head& hd, const Shape& s, const float* omega, const float* log2_omega, double log_omega,
                   const int64_t* query_keys, const TileBoxes& boxes, QueryRange range, const int64_t* order,
                   const FitOut& out, const KernelLoops& loops) {
  TileWork w(s);
  RowScratch rs(s.p, s.dims, hd.keys.rows);
  const MomentLayout layout = s.layout();
  const int64_t per_row = layout.size();
  Scratch<double> sums(kQueryBlock * per_row);
  Scratch<float> bound(kQueryBlock * boxes.padded), mid(boxes.padded), near(boxes.padded);
  if (!w.ok() || !rs.ok() || !sums.ok() || !bound.ok() || !mid.ok() || !near.ok()) return {Status::OutOfMemory};
  for (int64_t d = 0; d < s.dims; ++d) {
    w.factors.get()[d] = loops.dimension_factor(hd.kernel.bandwidth[d]);
    w.inv_h.get()[d] = 1.0f / hd.kernel.bandwidth[d];
  }
  std::fill(w.z.get(), w.z.get() + kKeyTile, 1.0f);  // z₀ = 1
  KeyTile tile{w.keys_t.get(), w.values_t.get()};
  const Accumulate accumulate = accumulate_for(s);
  Moments rows[kQueryBlock];
  const float skip = skip_below(hd.keys.rows);
  Result failed;  // with `order`, the failing row of least index (the one the queries' own order meets first)
  for (int64_t i0 = range.first; i0 < range.last; i0 += kQueryBlock) {
    const int64_t count = std::min(kQueryBlock, range.last - i0);
    const auto query = [&](int64_t r) { return order ? order[i0 + r] : i0 + r; };
    const int64_t end = key_end(hd, i0, count), tiles = (end + kKeyTile - 1) / kKeyTile;
    std::fill(sums.get(), sums.get() + kQueryBlock * per_row, 0.0);
    // The tiles the block tests: the union of its rows' windows (row_window: on sorted keys, the tiles in reach).
    int64_t first = tiles, last = 0, row_first[kQueryBlock], row_last[kQueryBlock];
    for (int64_t r = 0; r < count; ++r) {
      const int64_t i = query(r);
      double* base = sums.get() + r * per_row;
      // The shift starts at the best score of the tiles' middle keys that are admissible: a lower bound of the
      // row's maximum, so that far tiles are skipped from the first one on.
      const auto middle = [&](int64_t t, float score) {
        const int64_t j = TileBoxes::middle(t, hd.keys.rows);
        return j < end && hd.allows(i, j) && omega[j] > 0 ? score + log2_omega[j]
                                                          : -std::numeric_limits<float>::infinity();
      };
      const local_fit_tiles::Window win =
          local_fit_tiles::row_window(hd.queries.row(i), boxes, tiles, w.factors.get(), loops.tile_bounds, skip,
                                      bound.get() + r * boxes.padded, mid.get(), near.get(), middle);
      rows[r] = Moments(base, layout);
      rows[r].max = double(win.start);
      row_first[r] = win.first;
      row_last[r] = win.last;
      first = std::min(first, win.first);
      last = std::max(last, win.last);
    }
    for (int64_t r = 0; r < count; ++r) {  // every row's bounds over the union
      float* row_bound = bound.get() + r * boxes.padded;
      if (first < row_first[r])
        loops.tile_bounds(hd.queries.row(query(r)), boxes, w.factors.get(), row_bound, mid.get(), near.get(), first,
                          row_first[r]);
      if (row_last[r] < last)
        loops.tile_bounds(hd.queries.row(query(r)), boxes, w.factors.get(), row_bound, mid.get(), near.get(),
                          row_last[r], last);
    }
    const auto needs = [&](int64_t r, int64_t t) {
      return !rows[r].redo && !(bound.get()[r * boxes.padded + t] < float(rows[r].max) - skip);
    };
    for (int64_t t = first; t < std::min(last, tiles); ++t) {
      bool any = false;
      for (int64_t r = 0; r < count && !any; ++r) any = needs(r, t);
      if (!any) continue;
      const int64_t j0 = t * kKeyTile;
      pack_tile(hd, j0, std::min(kKeyTile, end - j0), tile);
      float* lw = w.log_omega.get();
      std::copy(log2_omega + j0, log2_omega + j0 + tile.count, lw);
      std::fill(lw + tile.count, lw + tile.padded, -std::numeric_limits<float>::infinity());
      for (int64_t r = 0; r < count; ++r)
        if (needs(r, t)) add_tile(hd, query(r), tile, s, w, loops.key_scores, accumulate, skip, rows[r]);
    }
    for (int64_t r = 0; r < count; ++r) {
      Moments& m = rows[r];
      const int64_t i = query(r);
      const bool empty = !(m.max > -kInf);
      if (m.redo || (empty && !is_compact(hd.kernel.kind)) || std::fabs(m.max) > kFloatScoreLimit)
        accumulate_double(hd, i, omega, s, boxes.sorted, m);
      const int64_t own = query_keys ? query_keys[i] : i;
      if (write_fit(hd, i, own, s, m, omega, log_omega, out, rs) == RowOutcome::Error) {
        if (!order) return {Status::EmptyRow, i, 0};
        if (failed.status == Status::Ok || i < failed.row) failed = {Status::EmptyRow, i, 0};
      }
    }
  }
  return failed;
}

// The queries in the order of their first coordinate (NaN last, ties in their own order) where the keys are sorted
// and the queries are not: a block of neighbouring queries then tests the few key tiles in reach of them all, where
// queries in the caller's order (fitted values at the sample as given, predictions in any order) would test the
// union of windows spread over the whole sample, O(I·J) again. Null where their own order serves: unsorted keys,
// masks (a causal mask's key range follows the query's index), few tiles, queries already in order; or no memory for
// `order` (then their own order, slower, the same bytes).
const int64_t* block_order(const Head& hd, const TileBoxes& boxes, Scratch<int64_t>* order) {
  const ConstMatrix& q = hd.queries;
  if (!boxes.sorted || hd.masks->any() || q.rows < 2 * kQueryBlock || hd.keys.rows < 4 * kKeyTile ||
      sorted_by_first_coordinate(q) || !order->reset_zeroed(q.rows))
    return nullptr;
  int64_t* at = order->get();
  for (int64_t i = 0; i < q.rows; ++i) at[i] = i;
  const auto before = [&](int64_t a, int64_t b) {
    const float x = q.row(a)[0], y = q.row(b)[0];
    return x < y || (!(x != x) && y != y);  // NaN last; stable_sort keeps ties in their own order
  };
  std::stable_sort(at, at + q.rows, before);
  return at;
}

}  // namespace

Status check_observation_weights(const Fit& f) {
  const float* omega = f.observation_weights;
  if (!omega) return Status::Ok;
  for (int64_t j = 0; j < f.problem.keys.rows; ++j)
    if (!(omega[j] >= 0) || !std::isfinite(omega[j])) return Status::BadArgument;
  return Status::Ok;
}

KA_COLD Result local_fit(const Fit& f, const FitOut& out) {
  const Problem& p = f.problem;
  if (const Status st = check(p, true); st != Status::Ok) return {st};
  if (p.heads != 1 || p.kernel.kind == KernelKind::Softmax) return {Status::BadArgument};
  if (f.query_scale || out.mean_double) return local_fit_scaled(f, out);
  const int32_t threads = p.threads;
  if (!known_estimator(f.estimator)) return {Status::BadArgument};
  const int64_t I = p.queries.rows, J = p.keys.rows, dims = p.queries.cols, width = p.values.cols;
  if (out.mean.rows != I || out.mean.cols != width || (I > 0 && !out.mean.data)) return {Status::BadShape};
  if (out.self_weight && !f.query_keys && I != J) return {Status::BadShape};
  // Observation weights divided by their maximum, so that float32 weight products cannot overflow.
  Scratch<float> omega(J), log2_omega(J);
  if (!omega.ok() || !log2_omega.ok()) return {Status::OutOfMemory};
  if (const Status st = check_observation_weights(f); st != Status::Ok) return {st};
  const float top = f.observation_weights ? *std::max_element(f.observation_weights, f.observation_weights + J) : 1.0f;
  const float scale = top > 0 ? top : 1.0f;
  for (int64_t j = 0; j < J; ++j) {
    omega.get()[j] = f.observation_weights ? f.observation_weights[j] / scale : 1.0f;
    log2_omega.get()[j] = std::log2(omega.get()[j]);  // −inf for ω = 0
  }
  const Shape s{dims, width, design_columns(f.estimator, dims),
                out.sum_sq_weights != nullptr || out.effective_keys != nullptr, degree_of(f.estimator)};
  const Head hd = head_of(p, 0);
  const TileBoxes boxes(hd);
  if (!boxes.ok()) return {Status::OutOfMemory};

  Scratch<int64_t> room;
  const int64_t* order = block_order(hd, boxes, &room);
  const int64_t blocks = (I + kQueryBlock - 1) / kQueryBlock;
  const int64_t tasks = std::min<int64_t>(blocks, threads == 1 ? 1 : int64_t(threads) * 4);
  const int64_t per_task = tasks ? (blocks + tasks - 1) / tasks * kQueryBlock : 0;
  std::vector<Result> results(size_t(std::max<int64_t>(tasks, 1)));
  const KernelLoops loops = kernel_loops(p.kernel.kind);
  parallel_for(tasks, threads, [&](int64_t t) {
    const QueryRange range{t * per_task, std::min(I, (t + 1) * per_task)};
    if (range.first >= range.last) return;
    results[size_t(t)] = run(hd, s, omega.get(), log2_omega.get(), std::log(double(scale)), f.query_keys, boxes, range,
                             order, out, loops);
  });
  // Without an order, tasks cover increasing query ranges, so the first failure in task order is the one a single
  // thread meets; with one, the failing row of least index.
  Result failed;
  for (const Result& r : results)
    if (r.status != Status::Ok && (failed.status == Status::Ok || r.row < failed.row)) failed = r;
  return failed;
}

}  // namespace ka
