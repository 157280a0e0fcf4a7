// Scratch shared by the engine's paths for one call, and the one function that turns a row's state into its output.
#pragma once
#include <cstdint>

#include "head.h"
#include "key_tile.h"
#include "online_softmax.h"
#include "scalar_row.h"
#include "scratch.h"

namespace ka {

struct Workspace {
  Scratch<float> keys_t, values_t, scores, bias, factors;
  Scratch<float> lane_sum, lane_acc;  // narrow path: per query of the block, kLanes partial sums each
  Scratch<float> acc;                 // wide path: per query of the block, `width` weighted value sums
  Scratch<double> row_acc;
  Scratch<uint8_t> chosen;

  Workspace(int64_t dims, int64_t width, int64_t num_keys)
      : keys_t(dims * kKeyTile), values_t(width * kKeyTile), scores(kQueryBlock * kKeyTile), bias(kKeyTile),
        factors(dims), lane_sum(kQueryBlock * simd::kLanes), lane_acc(kQueryBlock * width * simd::kLanes),
        acc(kQueryBlock * width), row_acc(width), chosen(num_keys) {}

  bool ok() const {
    return keys_t.ok() && values_t.ok() && scores.ok() && bias.ok() && factors.ok() && lane_sum.ok() &&
           lane_acc.ok() && acc.ok() && row_acc.ok() && chosen.ok();
  }
};

// Writes row i of one head from its state `st` (max, sum and value sums; st.acc is ws.row_acc), or first
// recomputes the row in double when `redo` (float32 overflow, underflow of every weight, or huge scores).
// An empty row then follows the policy; Nearest averages the values of the nearest admissible keys.
inline RowOutcome finish_row(const Head& hd, int64_t i, bool redo, SoftmaxState<double>& st, Workspace& ws,
                             float* out) {
  if (redo) {
    st.reset();
    accumulate_row(hd, i, st);
  }
  const RowOutcome outcome = finalize(st, out, hd.empty);
  if (outcome != RowOutcome::NeedsNearest) return outcome;
  const int64_t n = nearest_keys(hd, i, ws.chosen.get());
  for (int64_t d = 0; d < st.width; ++d) {
    double a = 0;
    for (int64_t j = 0; j < hd.keys.rows; ++j)
      if (ws.chosen.get()[j]) a += hd.values.row(j)[d];
    out[d] = n ? float(a / double(n)) : 0.0f;  // no key allowed by the masks at all: zeros, as documented
  }
  return RowOutcome::Done;
}

// Whether a row's float32 state must be recomputed in double (see docs/design.md, "Where float32 is not enough").
inline bool needs_double(bool overflow, float max, bool compact) {
  const bool empty = !(max > -std::numeric_limits<float>::infinity());
  return overflow || (empty && !compact) || std::fabs(max) > kFloatScoreLimit;
}

}  // namespace ka
