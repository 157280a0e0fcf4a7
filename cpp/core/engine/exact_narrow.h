// The narrow path of the exact engine: any kernel, any dimension, vectorised over keys. It serves small dimensions
// (1-D and 2-D regression, where the work is exp-bound) and every distance kernel.
//
// Each tile's weights and weighted values are summed lane-wise in float32 registers, then flushed into the row's
// double state (a SoftmaxState in log2 units), so accuracy does not degrade with the number of keys.
#pragma once
#include <algorithm>
#include <cmath>

#include "engine/workspace.h"

namespace ka {
namespace narrow {

using simd::Batch;
using simd::kLanes;

// Distance-kernel scores are <= 0, so a fixed shift of 0 keeps every weight <= 1 without tracking a running maximum.
// A row whose best score (log2 units) stays below this may have lost weights to underflow (exp2_nonpositive gives 0
// from 2^-126.5 down) and is redone; above it, the flushed weights are below 2^-68 of the best one. Kernels that are
// not compact skip the best score and test their sum of weights against 2^-58 instead: a sum above it has a weight
// above 2^-89 (fewer than 2^31 keys), so the flushed ones are below 2^-37 of the sum, and its scores are far from
// the float32 limit of needs_double.
constexpr float kFixedShiftFloor = -58.0f;
constexpr double kFixedShiftMinSum = 0x1p-58;

// The row's state during the scan: the online-softmax state with its shift in log2 units (softmax's running maximum;
// 0 for the distance kernels).
using RowState = SoftmaxState<double, true>;

// Sums of one tile for one query, kept lane-wise and flushed into the row's double state. W is the value width when
// small enough to keep the sums in registers (1..4), or 0 for any width (the sums then live in `spill`, kLanes
// floats per value column).
template <int W>
struct TileSums {
  static constexpr int kRegs = W > 0 ? W : 1;
  Batch sum = Batch(0.0f);  // not Batch{0.0f}: braces list the lanes
  Batch acc[kRegs];
  float* spill;
  int64_t width;

  TileSums(float* spill_, int64_t width_) : spill(spill_), width(width_) {
    for (auto& a : acc) a = Batch(0.0f);
    if constexpr (W == 0) std::fill(spill, spill + width * kLanes, 0.0f);
  }
  void add(const Batch& w, const KeyTile& tile, int64_t c) {
    sum += w;
    if constexpr (W > 0) {
      for (int d = 0; d < W; ++d) acc[d] = xsimd::fma(w, simd::load(tile.values_t + d * tile.stride + c), acc[d]);
    } else {
      for (int64_t d = 0; d < width; ++d) {
        float* a = spill + d * kLanes;
        simd::store(a, xsimd::fma(w, simd::load(tile.values_t + d * tile.stride + c), simd::load(a)));
      }
    }
  }
  void flush(RowState& st) const {
    st.add_block<W>(simd::sum(sum), [&](int64_t d) {
      if constexpr (W > 0)
        return simd::sum(acc[d]);
      else
        return simd::sum(simd::load(spill + d * kLanes));
    });
  }
};

// Fills bias[c] with 0 or -inf (padding, and keys the masks exclude for query i); false when no key of the tile is
// excluded, so the caller can skip the bias. Leave-one-out and causal masks only touch the diagonal, so they are
// checked by index rather than key by key.
inline bool tile_bias(const Head& hd, int64_t i, const KeyTile& tile, float* bias) {
  const Masks& m = *hd.masks;
  const float minus_inf = -std::numeric_limits<float>::infinity();
  const bool diagonal_only = !m.key_padding && !m.general && !m.query_groups;
  const int64_t last = tile.first + tile.count - 1;
  const bool touches_diagonal = i >= tile.first && i <= last;
  // A band (blocked CV) is a range of key indices, checked by index as well.
  const bool touches_band = m.band_first && m.band_first[i] <= last && m.band_last[i] >= tile.first;
  if (tile.count == tile.padded &&
      (!m.any() || (diagonal_only && !touches_diagonal && !touches_band && !(m.causal && last > i))))
    return false;
  std::fill(bias, bias + tile.count, 0.0f);
  std::fill(bias + tile.count, bias + tile.padded, minus_inf);
  if (diagonal_only) {
    if (m.leave_one_out && touches_diagonal) bias[i - tile.first] = minus_inf;
    if (touches_band) {
      const int64_t to = std::min(tile.count - 1, m.band_last[i] - tile.first);
      for (int64_t c = std::max<int64_t>(0, m.band_first[i] - tile.first); c <= to; ++c) bias[c] = minus_inf;
    }
    if (m.causal)
      for (int64_t c = std::max<int64_t>(0, i + 1 - tile.first); c < tile.count; ++c) bias[c] = minus_inf;
  } else {
    for (int64_t c = 0; c < tile.count; ++c)
      if (!hd.allows(i, tile.first + c)) bias[c] = minus_inf;
  }
  return true;
}

// One tile for one query with a fixed shift of 0 (distance kernels, whose scores are <= 0): each batch of keys is
// scored, weighted and accumulated in registers, without storing scores. Returns the best score of the tile for
// compact kernels, which need it (see run); the others return 0 and are checked by their sum of weights instead,
// which keeps one more register free in the hot loop (V8 spills beyond about 15).
// DIMS (1, 2, or 0 for any) and W (1, or 0 for any) let the common regression shapes keep everything in registers.
// BIASED says whether the tile has a bias (padding or masked keys): a compile-time branch, since a run-time test in
// the hot loop costs more than the rest of the step's bookkeeping.
template <KernelKind K, int DIMS, int W, bool BIASED>
float add_fused(const Head& hd, int64_t i, const float* factors, const KeyTile& tile, const float* bias, int64_t width,
                float* spill, RowState& st) {
  constexpr bool kTrackTop = is_compact(K);
  constexpr int kDims = DIMS > 0 ? DIMS : 1;
  const int64_t dims = DIMS > 0 ? DIMS : hd.queries.cols;
  const float* q = hd.queries.row(i);
  Batch qb[kDims], fb[kDims];
  for (int d = 0; d < kDims; ++d) {
    qb[d] = Batch(q[d]);
    fb[d] = Batch(factors[d]);
  }
  const simd::ExpConstants& ek = simd::exp_constants();
  const float* keys = tile.keys_t;
  // The log2 weights of keys [c, c + kLanes), masked by the bias when the tile has one: compact kernels as scores
  // (<= 0), whose best one run() needs; the others as costs (-score >= 0), which exp2_neg takes without a negation on
  // the chain (it equals exp2_nonpositive of the score bit for bit).
  const auto exponent = [&](int64_t c) {
    Batch s = BatchScore<K>::init();
    if constexpr (DIMS > 0) {
      for (int d = 0; d < DIMS; ++d) s = BatchScore<K>::step(s, qb[d], simd::load(keys + d * tile.stride + c), fb[d]);
    } else {
      for (int64_t d = 0; d < dims; ++d)
        s = BatchScore<K>::step(s, Batch(q[d]), simd::load(keys + d * tile.stride + c), Batch(factors[d]));
    }
    if constexpr (BatchScore<K>::kHasCost) {
      s = BatchScore<K>::cost(s);
      if constexpr (BIASED) s -= simd::load(bias + c);
    } else {
      s = BatchScore<K>::finish(s, Batch(1.0f));
      if constexpr (BIASED) s += simd::load(bias + c);
    }
    return s;
  };
  const auto weigh = [&](const Batch& e) {
    if constexpr (BatchScore<K>::kHasCost) return simd::exp2_neg(e, ek);
    return simd::exp2_nonpositive(e, ek);
  };
  Batch top(-std::numeric_limits<float>::infinity());
  TileSums<W> sums(spill, width);
  int64_t c = 0;
  if constexpr (DIMS == 1 && W == 1) {
    // The 1-D regression case: two batches per step into separate sums, whose exp chains are independent: the
    // chain is long (about 45 cycles) and the core keeps only a few steps in flight.
    TileSums<1> odd(spill, width);
    for (; c + 2 * kLanes <= tile.padded; c += 2 * kLanes) {
      const Batch e0 = exponent(c), e1 = exponent(c + kLanes);
      if constexpr (kTrackTop) top = xsimd::max(top, xsimd::max(e0, e1));
      sums.add(weigh(e0), tile, c);
      odd.add(weigh(e1), tile, c + kLanes);
    }
    odd.flush(st);
  }
  for (; c < tile.padded; c += kLanes) {
    const Batch e = exponent(c);
    if constexpr (kTrackTop) top = xsimd::max(top, e);
    sums.add(weigh(e), tile, c);
  }
  sums.flush(st);
  return kTrackTop ? simd::max(top) : 0.0f;
}

// Picks the add_fused instances (without and with a bias) for a head's dimension and value width.
template <KernelKind K, bool BIASED>
auto fused_for(int64_t dims, int64_t width) {
  using Fn = decltype(&add_fused<K, 0, 0, BIASED>);
  const bool one = width == 1;
  Fn fn = dims == 1   ? (one ? &add_fused<K, 1, 1, BIASED> : &add_fused<K, 1, 0, BIASED>)
          : dims == 2 ? (one ? &add_fused<K, 2, 1, BIASED> : &add_fused<K, 2, 0, BIASED>)
                      : (one ? &add_fused<K, 0, 1, BIASED> : &add_fused<K, 0, 0, BIASED>);
  return simd::keep_out_of_line(fn);
}

// One tile for one query with a running maximum (softmax, whose scores have no upper bound). `scores` holds the
// tile's scores; the row's double state is rescaled when the tile raises the maximum (which stays a float32 value).
template <int W>
void add_running(const KeyTile& tile, const float* scores, int64_t width, float* spill, RowState& st) {
  Batch m = simd::load(scores);
  for (int64_t c = kLanes; c < tile.padded; c += kLanes) m = xsimd::max(m, simd::load(scores + c));
  const float top = simd::max(m);
  if (top == -std::numeric_limits<float>::infinity()) return;
  if (top > st.max) st.rescale_to(double(top));
  const Batch shift(float(st.max));
  const simd::ExpConstants& ek = simd::exp_constants();
  TileSums<W> sums(spill, width);
  for (int64_t c = 0; c < tile.padded; c += kLanes)
    sums.add(simd::exp2_nonpositive(simd::load(scores + c) - shift, ek), tile, c);
  sums.flush(st);
}

using FusedFn = float (*)(const Head&, int64_t, const float*, const KeyTile&, const float*, int64_t, float*, RowState&);

// What every query block of a head shares: the kernel's per-dimension factors and the tile functions (fused for the
// distance kernels, running for softmax; the other pair is null, so that neither kind instantiates the other's).
template <KernelKind K, int W>
struct BlockPlan {
  const float* factors;
  FusedFn fused, fused_biased;
  decltype(&add_running<W>) running;
};

// The block's row states over ws.block_acc (1 + width doubles each), cleared; for the distance kernels (fixed_shift)
// the shift is 0. Once per block, the same for every kernel: one copy (exact.cpp).
void begin_rows(Workspace& ws, int64_t rows, int64_t width, bool fixed_shift, RowState* st);

// Row i's end (exact.cpp): the state in natural units, the double recomputation where float32 was not enough
// (needs_double; for the distance kernels also a best score below kFixedShiftFloor: `best`, compact kernels' best
// score seen, or, for the others, 0 or −inf by their sum of weights against kFixedShiftMinSum), then write_row. Once
// per row, the same for every kernel: one copy.
RowOutcome end_row(const Head& hd, int32_t head, int64_t i, const RowState& st, float best, bool overflow,
                   Workspace& ws, Matrix out);

// One block of up to kQueryBlock queries from i0 over all the keys it may see. A function of its own, called through
// a pointer once per block, so that V8 optimises the block loop during a call's first blocks (simd::keep_out_of_line)
// rather than only from the next call: a one-off 10^4 × 10^4 regression took about 3x its steady time.
template <KernelKind K, int W>
Result run_block(const Head& hd, int32_t head, int64_t i0, int64_t rows, const BlockPlan<K, W>& plan, Workspace& ws,
                 Matrix out) {
  constexpr bool kFixedShift = K != KernelKind::Softmax;
  const int64_t width = hd.values.cols;
  KeyTile tile{ws.keys_t.get(), ws.values_t.get()};
  tile.stride = kNarrowTile;
  RowState st[kQueryBlock];  // over ws.block_acc; the shift stays 0 for distance kernels
  float best[kQueryBlock];   // distance kernels: the best score seen
  bool overflow[kQueryBlock];
  float* const scores = ws.scores.get();
  std::fill(best, best + rows, -std::numeric_limits<float>::infinity());
  std::fill(overflow, overflow + rows, false);
  begin_rows(ws, rows, width, kFixedShift, st);

  const int64_t end = key_end(hd, i0, rows);
  for (int64_t j0 = 0; j0 < end; j0 += kNarrowTile) {
    pack_tile(hd, j0, std::min(kNarrowTile, end - j0), tile);
    for (int64_t r = 0; r < rows; ++r) {
      if (overflow[r]) continue;
      const int64_t i = i0 + r;
      if constexpr (kFixedShift) {
        const float* bias = tile_bias(hd, i, tile, ws.bias.get()) ? ws.bias.get() : nullptr;
        const float top =
            (bias ? plan.fused_biased : plan.fused)(hd, i, plan.factors, tile, bias, width, ws.spill.get(), st[r]);
        if constexpr (is_compact(K)) best[r] = std::max(best[r], top);
      } else {
        score_tile<K>(hd, i, plan.factors, tile, scores);
        if ((overflow[r] = overflowed(scores, tile.padded))) continue;
        plan.running(tile, scores, width, ws.spill.get(), st[r]);
      }
    }
  }
  for (int64_t r = 0; r < rows; ++r)
    if (end_row(hd, head, i0 + r, st[r], best[r], overflow[r], ws, out) == RowOutcome::Error)
      return {Status::EmptyRow, i0 + r, head};
  return {};
}

template <KernelKind K, int W>
Result run(const Head& hd, int32_t head, QueryRange range, Workspace& ws, Matrix out) {
  const int64_t dims = hd.queries.cols, width = hd.values.cols;
  float* factors = ws.factors.get();
  for (int64_t d = 0; d < dims; ++d)
    factors[d] = K == KernelKind::Softmax ? 1.0f : BatchScore<K>::dimension_factor(hd.kernel.bandwidth[d]);
  BlockPlan<K, W> plan{factors, nullptr, nullptr, nullptr};
  if constexpr (K == KernelKind::Softmax) {
    plan.running = simd::keep_out_of_line(&add_running<W>);
  } else {
    plan.fused = fused_for<K, false>(dims, width);
    plan.fused_biased = fused_for<K, true>(dims, width);
  }
  const auto block = simd::keep_out_of_line(&run_block<K, W>);
  for (int64_t i0 = range.first; i0 < range.last; i0 += kQueryBlock)
    if (const Result r = block(hd, head, i0, std::min(kQueryBlock, range.last - i0), plan, ws, out);
        r.status != Status::Ok)
      return r;
  return {};
}

}  // namespace narrow
}  // namespace ka
