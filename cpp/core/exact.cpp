// The exact streaming engine: query blocks × packed key tiles → online-softmax states → one finalize per row.
#include "exact.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "key_tile.h"
#include "online_softmax.h"
#include "scalar_row.h"
#include "scratch.h"

namespace ka {
namespace {

using simd::Batch;
using simd::kLanes;

// Scratch for one head: a packed tile, a row of scores, and per query of the block the state kept lane-wise
// (max, lane sums of weights, lane sums of weighted values) until the row is finished.
struct Workspace {
  Scratch<float> keys_t, values_t, scores, lane_sum, lane_acc, factors;
  Scratch<double> row_acc;
  Scratch<uint8_t> chosen;
  Workspace(int64_t dims, int64_t width, int64_t num_keys)
      : keys_t(dims * kKeyTile), values_t(width * kKeyTile), scores(kKeyTile),
        lane_sum(kQueryBlock * kLanes), lane_acc(kQueryBlock * width * kLanes), factors(dims),
        row_acc(width), chosen(num_keys) {}
  bool ok() const {
    return keys_t.ok() && values_t.ok() && scores.ok() && lane_sum.ok() && lane_acc.ok() && factors.ok() &&
           row_acc.ok() && chosen.ok();
  }
};

// Adds one packed tile to the lane-wise state of query row r: rescale to the new maximum, then accumulate
// exp(score - max) and exp(score - max) · value, one batch of keys at a time.
void add_tile(const KeyTile& tile, const float* scores, int64_t width, float& max, float* lane_sum, float* lane_acc) {
  float tile_max = -std::numeric_limits<float>::infinity();
  for (int64_t c = 0; c < tile.padded; c += kLanes) tile_max = std::max(tile_max, simd::max(simd::load(scores + c)));
  if (tile_max == -std::numeric_limits<float>::infinity()) return;
  if (tile_max > max) {
    const Batch f(max == -std::numeric_limits<float>::infinity() ? 0.0f : std::exp(max - tile_max));
    simd::store(lane_sum, simd::load(lane_sum) * f);
    for (int64_t d = 0; d < width; ++d) simd::store(lane_acc + d * kLanes, simd::load(lane_acc + d * kLanes) * f);
    max = tile_max;
  }
  const Batch m(max);
  Batch sum = simd::load(lane_sum);
  for (int64_t c = 0; c < tile.padded; c += kLanes) {
    const Batch w = simd::exp_nonpositive(simd::load(scores + c) - m);
    sum += w;
    for (int64_t d = 0; d < width; ++d) {
      float* a = lane_acc + d * kLanes;
      simd::store(a, xsimd::fma(w, simd::load(tile.values_t + d * kKeyTile + c), simd::load(a)));
    }
  }
  simd::store(lane_sum, sum);
}

// Writes row i from its state, falling back to double (overflow) or to the nearest keys (empty, Nearest policy).
RowOutcome finish_row(const Head& hd, int64_t i, bool overflow, float max, const float* lane_sum,
                      const float* lane_acc, Workspace& ws, float* out) {
  const int64_t width = hd.values.cols;
  SoftmaxState<double> st{max, 0.0, ws.row_acc.get(), width};
  if (overflow) {
    st.reset();
    accumulate_row(hd, i, st);
  } else {
    for (int64_t l = 0; l < kLanes; ++l) st.sum += lane_sum[l];
    for (int64_t d = 0; d < width; ++d) {
      double a = 0;
      for (int64_t l = 0; l < kLanes; ++l) a += lane_acc[d * kLanes + l];
      st.acc[d] = a;
    }
  }
  const RowOutcome outcome = finalize(st, out, hd.empty);
  if (outcome != RowOutcome::NeedsNearest) return outcome;
  const int64_t n = nearest_keys(hd, i, ws.chosen.get());
  for (int64_t d = 0; d < width; ++d) {
    double a = 0;
    for (int64_t j = 0; j < hd.keys.rows; ++j)
      if (ws.chosen.get()[j]) a += hd.values.row(j)[d];
    out[d] = n ? float(a / double(n)) : 0.0f;  // no key allowed by the masks at all: zeros, as documented
  }
  return RowOutcome::Done;
}

template <KernelKind K>
Result run_head(const Head& hd, int32_t head, Workspace& ws, Matrix out) {
  const int64_t I = hd.queries.rows, dims = hd.queries.cols, width = hd.values.cols;
  float* factors = ws.factors.get();
  for (int64_t d = 0; d < dims; ++d) factors[d] = K == KernelKind::Softmax ? 1.0f : BatchScore<K>::dimension_factor(hd.kernel.bandwidth[d]);
  KeyTile tile{ws.keys_t.get(), ws.values_t.get()};
  float max[kQueryBlock];
  bool overflow[kQueryBlock];

  for (int64_t i0 = 0; i0 < I; i0 += kQueryBlock) {
    const int64_t rows = std::min(kQueryBlock, I - i0);
    std::fill(max, max + rows, -std::numeric_limits<float>::infinity());
    std::fill(overflow, overflow + rows, false);
    std::fill(ws.lane_sum.get(), ws.lane_sum.get() + rows * kLanes, 0.0f);
    std::fill(ws.lane_acc.get(), ws.lane_acc.get() + rows * width * kLanes, 0.0f);

    const int64_t end = key_end(hd, i0, rows);
    for (int64_t j0 = 0; j0 < end; j0 += kKeyTile) {
      pack_tile(hd, j0, std::min(kKeyTile, end - j0), tile);
      for (int64_t r = 0; r < rows; ++r) {
        if (overflow[r]) continue;
        score_tile<K>(hd, i0 + r, factors, tile, ws.scores.get());
        if (overflowed(ws.scores.get(), tile.padded)) {
          overflow[r] = true;
          continue;
        }
        add_tile(tile, ws.scores.get(), width, max[r], ws.lane_sum.get() + r * kLanes,
                 ws.lane_acc.get() + r * width * kLanes);
      }
    }
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      // Exponential-family kernels give every admissible key a positive weight; an empty row there means the
      // float32 scores underflowed to -inf, so the double path decides (as it does for overflow and huge scores).
      const bool empty = !(max[r] > -std::numeric_limits<float>::infinity());
      const bool redo = overflow[r] || (empty && !is_compact(K)) || std::fabs(max[r]) > kFloatScoreLimit;
      const RowOutcome outcome = finish_row(hd, i, redo, max[r], ws.lane_sum.get() + r * kLanes,
                                            ws.lane_acc.get() + r * width * kLanes, ws, out.row(i) + head * width);
      if (outcome == RowOutcome::Error) return {Status::EmptyRow, i, head};
    }
  }
  return {};
}

}  // namespace

Result attention(const Problem& p, Matrix out) {
  if (const Status s = check(p, true); s != Status::Ok) return {s};
  if (out.rows != p.queries.rows || out.cols != p.values.cols || (out.rows > 0 && !out.data)) return {Status::BadShape};
  const int64_t dims = p.queries.cols / p.heads, width = p.values.cols / p.heads;
  Workspace ws(dims, width, p.keys.rows);
  if (!ws.ok()) return {Status::OutOfMemory};
  for (int32_t h = 0; h < p.heads; ++h) {
    const Head hd = head_of(p, h);
    const Result r = with_kernel(p.kernel.kind, [&](auto kind) { return run_head<kind()>(hd, h, ws, out); });
    if (r.status != Status::Ok) return r;
  }
  return {};
}

}  // namespace ka
