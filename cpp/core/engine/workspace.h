// Scratch shared by the engine's paths for one call, and write_row(), where both scans hand each row's state over.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "engine/exact.h"
#include "engine/head.h"
#include "engine/key_tile.h"
#include "engine/online_softmax.h"
#include "engine/scalar_row.h"
#include "base/scratch.h"

namespace ka {

constexpr double kLn2 = 0.6931471805599453;  // float-path scores are log2; SoftmaxState<double> keeps natural logs

// Queries [first, last) of a call: the unit of work of one thread.
struct QueryRange {
  int64_t first, last;
};

static_assert(kNarrowTile <= kKeyChunk && kNarrowTile <= kQueryBlock * kKeyTile,
              "keys_t and scores hold a narrow tile");

struct Workspace {
  Scratch<float> keys_t, values_t, scores, bias, factors;
  Scratch<float> spill;       // narrow path: lane-wise tile sums of wide values
  Scratch<double> block_acc;  // narrow path: the states' sums of the block's queries (1 + width each)
  Scratch<float> zeros;       // wide path: zero weights and a scratch row for partial groups of 4
  Scratch<float> row_max;     // wide path: the online-softmax state of every query between key chunks
  Scratch<double> row_sum;
  Scratch<uint8_t> row_flag;
  Scratch<double> row_acc;
  Scratch<uint8_t> chosen;
  const StateOut* states = nullptr;  // set by attention_states()

  Workspace(int64_t dims, int64_t width, int64_t num_queries, int64_t num_keys)
      : keys_t(dims * kKeyChunk),
        values_t(width * kNarrowTile),
        scores(kQueryBlock * kKeyTile),
        bias(kNarrowTile),
        factors(dims),
        spill(width * simd::kLanes),
        block_acc(kQueryBlock * (1 + width)),
        zeros(kKeyTile + width),
        row_max(num_queries),
        row_sum(num_queries),
        row_flag(num_queries),
        row_acc(1 + width),
        chosen(num_keys) {}

  bool ok() const {
    return keys_t.ok() && values_t.ok() && scores.ok() && bias.ok() && factors.ok() && spill.ok() && block_acc.ok() &&
           zeros.ok() && row_max.ok() && row_sum.ok() && row_flag.ok() && row_acc.ok() && chosen.ok();
  }
};

// Writes row i of one head from its state `st` (max, sum and value sums), or first
// recomputes the row in double when `redo` (float32 overflow, underflow of every weight, or huge scores): the
// partial state when the caller asked for states, else finalize()'s output row.
inline RowOutcome write_row(const Head& hd, int32_t head, int64_t i, bool redo, SoftmaxState<double>& st, Workspace& ws,
                            float* out) {
  if (redo) {
    st.reset();
    accumulate_row(hd, i, st);
  }
  if (ws.states) {  // a partial state: no division and no empty-row policy yet (whoever merges it decides)
    ws.states->save(i, head, st.settled());  // its acc is the output matrix: the value sums go to `out`
    return RowOutcome::Done;
  }
  return finalize(st, out, hd.empty, NearestKeys{&hd, i, ws.chosen.get()});
}

// False when a value sum overflowed float32 (values near ±3.4e38): the row is then redone in double.
inline bool finite_state(const SoftmaxState<double>& st) {
  if (!std::isfinite(st.sum())) return false;
  for (int64_t d = 0; d < st.width; ++d)
    if (!std::isfinite(st.acc()[d])) return false;
  return true;
}

// Whether a row's float32 state must be recomputed in double (see docs/design.md, "Where float32 is not enough").
inline bool needs_double(bool overflow, float max, bool compact) {
  const bool empty = !(max > -std::numeric_limits<float>::infinity());
  return overflow || (empty && !compact) || std::fabs(max) > kFloatScoreLimit;
}

}  // namespace ka
