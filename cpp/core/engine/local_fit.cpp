// The streaming local fit: per query, the weighted moments of the local design, shifted by a running maximum like
// the online softmax, then a tiny solve in double. See local_fit.h for what is computed.
#include "engine/local_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "engine/exact_narrow.h"
#include "engine/key_reach.h"
#include "engine/local_rows.h"
#include "engine/local_solve.h"
#include "engine/tile_boxes.h"
#include "base/parallel.h"

namespace ka {
namespace {

using local_fit_tiles::tile_bounds;
using local_fit_tiles::TileBoxes;
using simd::Batch;
using simd::kLanes;

constexpr double kInf = std::numeric_limits<double>::infinity();

// Code that runs once per query, or per query block and tile, is KA_COLD (local_fit.h); the loops over a tile's
// keys (key_scores, tile_bounds, accumulate_*) keep the file's -O3.

// The moments of one query, in units of 2^max: with z = [1, (x_j − q)/h] (local-linear) or z = [1] (NW),
//   a = Σ w z zᵀ (p × p),   b = Σ w² z zᵀ (p × p, only when asked),   t = Σ w z yᵀ (p × width).
struct Moments {
  double max = -kInf;  // log2 units
  bool redo = false;   // float32 was not enough: recompute the row in double
  double* a;
  double* b;
  double* t;
};

struct Shape {
  int64_t dims, width, p;  // p = 1 + dims (local-linear) or 1
  bool with_b;
};

// Σ_c x[c]·y[c] over `padded` floats (a multiple of kLanes), two accumulators to halve the add chain.
inline double dot(const float* x, const float* y, int64_t padded) {
  Batch s0(0.0f), s1(0.0f);
  int64_t c = 0;
  for (; c + 2 * kLanes <= padded; c += 2 * kLanes) {
    s0 = xsimd::fma(simd::load(x + c), simd::load(y + c), s0);
    s1 = xsimd::fma(simd::load(x + c + kLanes), simd::load(y + c + kLanes), s1);
  }
  for (; c < padded; c += kLanes) s0 = xsimd::fma(simd::load(x + c), simd::load(y + c), s0);
  return double(simd::sum(s0 + s1));
}

void rescale(Moments& m, const Shape& s, double new_max) {
  const double f = shift_factor2(m.max, new_max);
  scale_sums(m.a, s.p * s.p, f);
  if (s.with_b) scale_sums(m.b, s.p * s.p, f * f);  // squared weights: the factor squared
  scale_sums(m.t, s.p * s.width, f);
  m.max = new_max;
}

// Per-task scratch: one packed tile and the tile's weighted design columns.
struct TileWork {
  Scratch<float> keys_t, values_t, log_omega, scores, bias, z, wz, factors, inv_h;  // log_omega: log2 ω per key
  TileWork(int64_t dims, int64_t width)
      : keys_t(dims * kKeyTile),
        values_t(width * kKeyTile),
        log_omega(kKeyTile),
        scores(kKeyTile),
        bias(kKeyTile),
        z((dims + 1) * kKeyTile),
        wz((dims + 1) * kKeyTile),
        factors(dims),
        inv_h(dims) {}
  bool ok() const {
    return keys_t.ok() && values_t.ok() && log_omega.ok() && scores.ok() && bias.ok() && z.ok() && wz.ok() &&
           factors.ok() && inv_h.ok();
  }
};

// Adds the weights 2^(score − max) · ω of one tile and their products with the design and the values to the
// moments, any shape: the weighted design columns go through w.z / w.wz, then one dot product per moment.
void accumulate_any(const KeyTile& tile, const float* scores, const float* q, TileWork& w, const Shape& s, Moments& m) {
  const simd::ExpConstants& ek = simd::exp_constants();
  const Batch shift(float(m.max));
  float* z = w.z.get();  // z[0] holds ones; rows 1..dims are the scaled offsets
  float* wz = w.wz.get();
  for (int64_t c = 0; c < tile.padded; c += kLanes) {
    const Batch weight = simd::exp2_nonpositive(simd::load(scores + c) - shift, ek);
    simd::store(wz + c, weight);
    for (int64_t d = 1; d < s.p; ++d) {
      // Centred at the query before any product, so float32 keeps the local design's relative accuracy.
      const Batch u =
          (simd::load(tile.keys_t + (d - 1) * kKeyTile + c) - Batch(q[d - 1])) * Batch(w.inv_h.get()[d - 1]);
      simd::store(z + d * kKeyTile + c, u);
      simd::store(wz + d * kKeyTile + c, weight * u);
    }
  }
  for (int64_t x = 0; x < s.p; ++x) {
    for (int64_t y = x; y < s.p; ++y) {
      m.a[x * s.p + y] += dot(wz + x * kKeyTile, z + y * kKeyTile, tile.padded);
      if (s.with_b) m.b[x * s.p + y] += dot(wz + x * kKeyTile, wz + y * kKeyTile, tile.padded);
    }
    for (int64_t c = 0; c < s.width; ++c)
      m.t[x * s.width + c] += dot(wz + x * kKeyTile, tile.values_t + c * kKeyTile, tile.padded);
  }
}

// The same for the common shapes (P = 1 + dims ≤ 3 design columns, one value column), with every moment summed
// in registers in a single pass over the tile.
template <int P, bool WITH_B>
void accumulate_fused(const KeyTile& tile, const float* scores, const float* q, TileWork& w, const Shape&, Moments& m) {
  constexpr int kPairs = P * (P + 1) / 2;
  const simd::ExpConstants& ek = simd::exp_constants();
  const Batch shift(float(m.max));
  Batch a[kPairs], b[kPairs], t[P], qb[P], ih[P];
  for (int k = 0; k < kPairs; ++k) a[k] = b[k] = Batch(0.0f);
  for (int x = 0; x < P; ++x) t[x] = Batch(0.0f);
  for (int d = 1; d < P; ++d) {
    qb[d] = Batch(q[d - 1]);
    ih[d] = Batch(w.inv_h.get()[d - 1]);
  }
  for (int64_t c = 0; c < tile.padded; c += kLanes) {
    Batch z[P], wz[P];
    wz[0] = simd::exp2_nonpositive(simd::load(scores + c) - shift, ek);
    for (int d = 1; d < P; ++d) {
      z[d] = (simd::load(tile.keys_t + (d - 1) * kKeyTile + c) - qb[d]) * ih[d];
      wz[d] = wz[0] * z[d];
    }
    const Batch y = simd::load(tile.values_t + c);
    int k = 0;
    for (int x = 0; x < P; ++x) {
      for (int v = x; v < P; ++v, ++k) {
        a[k] = v == 0 ? a[k] + wz[x] : xsimd::fma(wz[x], z[v], a[k]);
        if constexpr (WITH_B) b[k] = xsimd::fma(wz[x], wz[v], b[k]);
      }
      t[x] = xsimd::fma(wz[x], y, t[x]);
    }
  }
  int k = 0;
  for (int x = 0; x < P; ++x) {
    for (int v = x; v < P; ++v, ++k) {
      m.a[x * P + v] += double(simd::sum(a[k]));
      if constexpr (WITH_B) m.b[x * P + v] += double(simd::sum(b[k]));
    }
    m.t[x] += double(simd::sum(t[x]));
  }
}

using Accumulate = void (*)(const KeyTile&, const float*, const float*, TileWork&, const Shape&, Moments&);

Accumulate accumulate_for(const Shape& s) {
  Accumulate fn = &accumulate_any;
  if (s.width == 1) {
    if (s.p == 1) fn = s.with_b ? &accumulate_fused<1, true> : &accumulate_fused<1, false>;
    if (s.p == 2) fn = s.with_b ? &accumulate_fused<2, true> : &accumulate_fused<2, false>;
    if (s.p == 3) fn = s.with_b ? &accumulate_fused<3, true> : &accumulate_fused<3, false>;
  }
  return simd::keep_out_of_line(fn);
}

// scores[c] = log2 K((q − key c)/h) for the packed tile's `padded` keys: the one loop over keys that depends on the
// kernel, compiled once per kernel (factors[d] = BatchScore<K>::dimension_factor(h_d)).
template <KernelKind K>
void key_scores(const float* q, const KeyTile& tile, const float* factors, int64_t dims, float* scores) {
  for (int64_t c = 0; c < tile.padded; c += kLanes) {
    Batch score = BatchScore<K>::init();
    for (int64_t d = 0; d < dims; ++d)
      score = BatchScore<K>::step(score, Batch(q[d]), simd::load(tile.keys_t + d * kKeyTile + c), Batch(factors[d]));
    simd::store(scores + c, BatchScore<K>::finish(score, Batch(1.0f)));
  }
}

using KeyScores = void (*)(const float*, const KeyTile&, const float*, int64_t, float*);

// Adds one packed tile to the moments of query i: scores (masked through a bias row only where the tile needs one),
// the running maximum, then `accumulate`.
void add_tile(const Head& hd, int64_t i, const KeyTile& tile, const Shape& s, TileWork& w, KeyScores key_scores,
              Accumulate accumulate, Moments& m) {
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
  if (tile_max > m.max) rescale(m, s, tile_max);
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
  std::fill(m.a, m.a + s.p * s.p, 0.0);
  if (s.with_b) std::fill(m.b, m.b + s.p * s.p, 0.0);
  std::fill(m.t, m.t + s.p * s.width, 0.0);
  m.max = top / kLn2;
  if (top == -kInf) return;
  std::vector<double> z(size_t(s.p), 1.0);
  for (int64_t j = range.first; j < range.last; ++j) {
    if (!hd.allows(i, j) || omega[j] == 0) continue;
    const float* k = hd.keys.row(j);
    const double w = std::exp(log_score<double>(hd.kernel, q, k, s.dims) + std::log(double(omega[j])) - top);
    for (int64_t d = 1; d < s.p; ++d)
      z[size_t(d)] = (double(k[d - 1]) - double(q[d - 1])) / double(hd.kernel.bandwidth[d - 1]);
    for (int64_t x = 0; x < s.p; ++x) {
      for (int64_t y = x; y < s.p; ++y) {
        m.a[x * s.p + y] += w * z[size_t(x)] * z[size_t(y)];
        if (s.with_b) m.b[x * s.p + y] += w * w * z[size_t(x)] * z[size_t(y)];
      }
      for (int64_t c = 0; c < s.width; ++c) m.t[x * s.width + c] += w * z[size_t(x)] * double(hd.values.row(j)[c]);
    }
  }
}

struct RowScratch {
  Scratch<double> l, g, z;
  Scratch<uint8_t> chosen;
  RowScratch(int64_t p, int64_t J) : l(p * p), g(p), z(p), chosen(J) {}
  bool ok() const { return l.ok() && g.ok() && z.ok() && chosen.ok(); }
};

// Writes query i's outputs from its moments. `log_omega` is ln of the factor the observation weights were divided by;
// `own` is the key that is query i's own observation (Fit::query_keys).
KA_COLD RowOutcome write_fit(const Head& hd, int64_t i, int64_t own, const Shape& s, const Moments& m,
                             const float* omega, double log_omega, const FitOut& out, RowScratch& r) {
  const double s0 = m.a[0];
  float* mean = out.mean.row(i);
  if (s0 == 0) {
    if (out.sum_sq_weights) out.sum_sq_weights[i] = std::numeric_limits<double>::quiet_NaN();
    if (out.self_weight) out.self_weight[i] = std::numeric_limits<double>::quiet_NaN();
    if (out.effective_keys) out.effective_keys[i] = 0;
    if (out.log_denominator) out.log_denominator[i] = -kInf;
    if (out.guarded) out.guarded[i] = 0;
    return finalize(empty_state(s.width), mean, hd.empty, NearestKeys{&hd, i, r.chosen.get()});
  }
  double* g = r.g.get();
  const bool guarded = first_column_of_inverse(m.a, s.p, r.l.get(), g);
  if (out.guarded) out.guarded[i] = guarded;
  for (int64_t c = 0; c < s.width; ++c) {
    double v = 0;
    for (int64_t x = 0; x < s.p; ++x) v += g[x] * m.t[x * s.width + c];
    mean[c] = s.p == 1 ? mean_to_float(v) : float(v);  // Nadaraya–Watson is a weighted mean (online_softmax.h)
  }
  if (out.sum_sq_weights) {  // gᵀ B g, B symmetric with its upper triangle stored
    double v = 0;
    for (int64_t x = 0; x < s.p; ++x)
      for (int64_t y = 0; y < s.p; ++y) v += g[x] * g[y] * (x <= y ? m.b[x * s.p + y] : m.b[y * s.p + x]);
    out.sum_sq_weights[i] = v > 0 ? v : m.b[0] / (s0 * s0);  // see local_fit.h, after kPivotFloor
  }
  if (out.self_weight) {  // ℓ_i(q_i) = w_ii gᵀ z_i
    double v = 0;
    if (hd.allows(i, own) && omega[own] != 0) {
      const float* q = hd.queries.row(i);
      const float* k = hd.keys.row(own);
      double* z = r.z.get();
      z[0] = 1;
      for (int64_t d = 1; d < s.p; ++d)
        z[d] = (double(k[d - 1]) - double(q[d - 1])) / double(hd.kernel.bandwidth[d - 1]);
      const double w = std::exp(log_score<double>(hd.kernel, q, k, s.dims) - m.max * kLn2) * double(omega[own]);
      for (int64_t x = 0; x < s.p; ++x) v += w * g[x] * z[x];
    }
    out.self_weight[i] = v;
  }
  if (out.effective_keys) out.effective_keys[i] = s0 * s0 / m.b[0];
  if (out.log_denominator) out.log_denominator[i] = std::log(s0) + m.max * kLn2 + log_omega;
  return RowOutcome::Done;
}

// A tile is skipped when its best possible score lies more than 25 + log2 J (log2 units) below the row's shift:
// all skipped keys together then weigh less than 2^-25 of the largest weight, below float32's rounding of the sums,
// so the result is unchanged to float32 precision. (Below 126, weights flush to exactly 0 anyway.)
inline float skip_below(int64_t keys) { return std::min(126.0f, 25.0f + std::log2(float(std::max<int64_t>(keys, 1)))); }

// What depends on the kernel, once per kernel: the per-key loops (key_scores, tile_bounds) and the bandwidth factor.
// The rest of the fit (per query block, per row, per tile decision) is the same code for every kernel.
struct KernelLoops {
  KeyScores key_scores;
  local_fit_tiles::TileBounds tile_bounds;
  float (*dimension_factor)(float);
};

template <KernelKind K>
KernelLoops loops_of() {
  return {simd::keep_out_of_line(&key_scores<K>), &tile_bounds<K>, &BatchScore<K>::dimension_factor};
}

// `log2_omega`: log2 of each key's ω, taken once per call (−inf for ω = 0), not once per query block and tile.
KA_COLD Result run(const Head& hd, const Shape& s, const float* omega, const float* log2_omega, double log_omega,
                   const int64_t* query_keys, const TileBoxes& boxes, QueryRange range, const FitOut& out,
                   const KernelLoops& loops) {
  TileWork w(s.dims, s.width);
  RowScratch rs(s.p, hd.keys.rows);
  const int64_t per_row = 2 * s.p * s.p + s.p * s.width;
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
  for (int64_t i0 = range.first; i0 < range.last; i0 += kQueryBlock) {
    const int64_t count = std::min(kQueryBlock, range.last - i0);
    const int64_t end = key_end(hd, i0, count), tiles = (end + kKeyTile - 1) / kKeyTile;
    std::fill(sums.get(), sums.get() + kQueryBlock * per_row, 0.0);
    // The tiles the block tests: the union of its rows' windows (row_window: on sorted keys, the tiles in reach).
    int64_t first = tiles, last = 0, row_first[kQueryBlock], row_last[kQueryBlock];
    for (int64_t r = 0; r < count; ++r) {
      const int64_t i = i0 + r;
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
      rows[r] = Moments{double(win.start), false, base, base + s.p * s.p, base + 2 * s.p * s.p};
      row_first[r] = win.first;
      row_last[r] = win.last;
      first = std::min(first, win.first);
      last = std::max(last, win.last);
    }
    for (int64_t r = 0; r < count; ++r) {  // every row's bounds over the union
      float* row_bound = bound.get() + r * boxes.padded;
      if (first < row_first[r])
        loops.tile_bounds(hd.queries.row(i0 + r), boxes, w.factors.get(), row_bound, mid.get(), near.get(), first,
                          row_first[r]);
      if (row_last[r] < last)
        loops.tile_bounds(hd.queries.row(i0 + r), boxes, w.factors.get(), row_bound, mid.get(), near.get(), row_last[r],
                          last);
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
        if (needs(r, t)) add_tile(hd, i0 + r, tile, s, w, loops.key_scores, accumulate, rows[r]);
    }
    for (int64_t r = 0; r < count; ++r) {
      Moments& m = rows[r];
      const bool empty = !(m.max > -kInf);
      if (m.redo || (empty && !is_compact(hd.kernel.kind)) || std::fabs(m.max) > kFloatScoreLimit)
        accumulate_double(hd, i0 + r, omega, s, boxes.sorted, m);
      const int64_t own = query_keys ? query_keys[i0 + r] : i0 + r;
      if (write_fit(hd, i0 + r, own, s, m, omega, log_omega, out, rs) == RowOutcome::Error)
        return {Status::EmptyRow, i0 + r, 0};
    }
  }
  return {};
}

}  // namespace

KA_COLD Result local_fit(const Fit& f, const FitOut& out) {
  const Problem& p = f.problem;
  if (const Status st = check(p, true); st != Status::Ok) return {st};
  if (p.heads != 1 || p.kernel.kind == KernelKind::Softmax) return {Status::BadArgument};
  if (f.query_scale || out.mean_double) return local_fit_scaled(f, out);
  const int32_t threads = p.threads;
  if (f.estimator != Estimator::NadarayaWatson && f.estimator != Estimator::LocalLinear) return {Status::BadArgument};
  const int64_t I = p.queries.rows, J = p.keys.rows, dims = p.queries.cols, width = p.values.cols;
  if (out.mean.rows != I || out.mean.cols != width || (I > 0 && !out.mean.data)) return {Status::BadShape};
  if (out.self_weight && !f.query_keys && I != J) return {Status::BadShape};
  // Observation weights divided by their maximum, so that float32 weight products cannot overflow.
  Scratch<float> omega(J), log2_omega(J);
  if (!omega.ok() || !log2_omega.ok()) return {Status::OutOfMemory};
  float top = 0;
  for (int64_t j = 0; j < J; ++j) {
    const float v = f.observation_weights ? f.observation_weights[j] : 1.0f;
    if (!(v >= 0) || !std::isfinite(v)) return {Status::BadArgument};
    top = std::max(top, v);
  }
  const float scale = top > 0 ? top : 1.0f;
  for (int64_t j = 0; j < J; ++j) {
    omega.get()[j] = f.observation_weights ? f.observation_weights[j] / scale : 1.0f;
    log2_omega.get()[j] = std::log2(omega.get()[j]);  // −inf for ω = 0
  }
  const Shape s{dims, width, f.estimator == Estimator::LocalLinear ? 1 + dims : 1,
                out.sum_sq_weights != nullptr || out.effective_keys != nullptr};
  const Head hd = head_of(p, 0);
  const TileBoxes boxes(hd);
  if (!boxes.ok()) return {Status::OutOfMemory};

  const int64_t blocks = (I + kQueryBlock - 1) / kQueryBlock;
  const int64_t tasks = std::min<int64_t>(blocks, threads == 1 ? 1 : int64_t(threads) * 4);
  const int64_t per_task = tasks ? (blocks + tasks - 1) / tasks * kQueryBlock : 0;
  std::vector<Result> results(size_t(std::max<int64_t>(tasks, 1)));
  const KernelLoops loops = with_kernel(p.kernel.kind, [](auto kind) {
    if constexpr (kind() == KernelKind::Softmax)
      return KernelLoops{};  // refused above
    else
      return loops_of<kind()>();
  });
  parallel_for(tasks, threads, [&](int64_t t) {
    const QueryRange range{t * per_task, std::min(I, (t + 1) * per_task)};
    if (range.first >= range.last) return;
    results[size_t(t)] =
        run(hd, s, omega.get(), log2_omega.get(), std::log(double(scale)), f.query_keys, boxes, range, out, loops);
  });
  // Tasks cover increasing query ranges, so the first failure in task order is the one a single thread meets.
  for (const Result& r : results)
    if (r.status != Status::Ok) return r;
  return {};
}

}  // namespace ka
