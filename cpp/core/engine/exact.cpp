// The exact engine's entry: checks the call, then runs each head on the path that suits its kernel and shape.
#include "engine/exact.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "engine/exact_narrow.h"
#include "engine/exact_wide.h"
#include "base/parallel.h"
#include "engine/workspace.h"

namespace ka {
namespace {

template <KernelKind K>
Result run_head(const Head& hd, int32_t head, QueryRange range, Workspace& ws, Matrix out) {
  if (K == KernelKind::Softmax && hd.queries.cols >= kWideMinDims) return run_wide(hd, head, range, ws, out);
  // The value width is a template parameter only for softmax's running sums; the distance kernels pick their tile
  // functions by width at run time (fused_for), so one instance per kernel serves every width.
  if constexpr (K != KernelKind::Softmax) {
    return narrow::run<K, 0>(hd, head, range, ws, out);
  } else {
    switch (hd.values.cols) {
      case 1: return narrow::run<K, 1>(hd, head, range, ws, out);
      case 2: return narrow::run<K, 2>(hd, head, range, ws, out);
      case 3: return narrow::run<K, 3>(hd, head, range, ws, out);
      case 4: return narrow::run<K, 4>(hd, head, range, ws, out);
      default: return narrow::run<K, 0>(hd, head, range, ws, out);
    }
  }
}

// Of two failures, the one a single thread would have met first (lowest head, then row): results and errors must
// not depend on the number of threads.
Result first_failure(const Result& a, const Result& b) {
  if (a.status == Status::Ok) return b;
  if (b.status == Status::Ok) return a;
  return std::make_pair(a.head, a.row) <= std::make_pair(b.head, b.row) ? a : b;
}

// Multiply-adds (query × key × column pairs) below which a call does not start one more thread.
constexpr int64_t kMinThreadWork = int64_t(1) << 20;

// Every extra thread must get enough work to pay for its start (tens of microseconds natively, more in WebAssembly,
// where a pool worker is woken by a message): about a million multiply-adds. Results never depend on the count.
int32_t useful_threads(const Problem& p, int32_t threads) {
  const int64_t work = p.queries.rows * p.keys.rows * (p.queries.cols + p.values.cols);
  return int32_t(std::max<int64_t>(1, std::min<int64_t>(threads, work / kMinThreadWork)));
}

// The queries split into whole query blocks, so every row sees exactly the arithmetic of a single-thread run.
Result run_query_blocks(const Problem& p, Matrix out, const StateOut* states, int32_t threads) {
  const int64_t I = p.queries.rows, dims = p.queries.cols / p.heads, width = p.values.cols / p.heads;
  const int64_t blocks = (I + kQueryBlock - 1) / kQueryBlock;
  // A few tasks per thread even out uneven rows (causal masks); each task packs the keys again, so one thread
  // gets one task.
  const int64_t tasks = std::min<int64_t>(blocks, threads == 1 ? 1 : int64_t(threads) * 4);
  const int64_t per_task = tasks ? (blocks + tasks - 1) / tasks * kQueryBlock : 0;
  std::vector<Result> results(size_t(std::max<int64_t>(tasks, 1)) * size_t(p.heads));
  std::atomic<bool> out_of_memory{false};
  parallel_for(tasks, threads, [&](int64_t t) {
    const QueryRange range{t * per_task, std::min(I, (t + 1) * per_task)};
    if (range.first >= range.last) return;
    Workspace ws(dims, width, range.last - range.first, p.keys.rows);
    if (!ws.ok()) {
      out_of_memory = true;
      return;
    }
    ws.states = states;
    for (int32_t h = 0; h < p.heads; ++h) {
      const Head hd = head_of(p, h);
      results[size_t(t * p.heads + h)] =
          with_kernel(p.kernel.kind, [&](auto kind) { return run_head<kind()>(hd, h, range, ws, out); });
    }
  });
  if (out_of_memory) return {Status::OutOfMemory};
  Result first;
  for (const Result& r : results) first = first_failure(first, r);
  return first;
}

// Few queries over many keys leave threads idle when only queries are split, so the keys are cut into shards
// whose partial states merge exactly (online_softmax.h), in shard order. The cut depends on the shape alone, never
// on the thread count, and so do the results. Masks index keys globally, so masked calls are not cut.
constexpr int64_t kShardMinKeys = 8192;
constexpr int64_t kMaxShards = 16;

int64_t key_shards(const Problem& p) {
  const int64_t blocks = (p.queries.rows + kQueryBlock - 1) / kQueryBlock;
  if (p.masks.any() || blocks >= kShardBelowBlocks) return 1;
  return std::clamp<int64_t>(p.keys.rows / kShardMinKeys, 1, kMaxShards);
}

// Returns false (and leaves `out` alone) when the shards' scratch cannot be had; the caller then runs unsharded.
bool run_key_shards(const Problem& p, Matrix out, const StateOut* states, int32_t threads, int64_t shards,
                    Result& result) {
  const int64_t I = p.queries.rows, J = p.keys.rows, D = p.values.cols, H = p.heads, width = D / H;
  Scratch<float> acc(shards * I * D);
  Scratch<double> max(shards * I * H), sum(shards * I * H), merged(1 + width), part(1 + width);
  Scratch<uint8_t> chosen(states ? 0 : J);  // the nearest keys of an empty row under EmptyPolicy::Nearest
  if (!acc.ok() || !max.ok() || !sum.ok() || !merged.ok() || !part.ok() || !chosen.ok()) return false;
  std::vector<Result> results(static_cast<size_t>(shards));
  parallel_for(shards, threads, [&](int64_t s) {
    const int64_t first = s * J / shards, last = (s + 1) * J / shards;
    Problem shard = p;
    shard.keys = p.keys.row_range(first, last - first);
    shard.values = p.values.row_range(first, last - first);
    const StateOut target{max.get() + s * I * H, sum.get() + s * I * H, Matrix{acc.get() + s * I * D, I, D, D},
                          int32_t(H)};
    results[size_t(s)] = run_query_blocks(shard, target.acc, &target, 1);
  });
  result = {};
  for (const Result& r : results) result = first_failure(result, r);
  if (result.status != Status::Ok) return true;
  for (int32_t h = 0; h < H; ++h) {  // heads outer: the first error is the lowest head, then row (first_failure)
    const Head hd = head_of(p, h);
    for (int64_t i = 0; i < I; ++i) {
      SoftmaxState<double> st(merged.get(), width);
      st.reset();
      for (int64_t s = 0; s < shards; ++s) {
        const StateOut shard{max.get() + s * I * H, sum.get() + s * I * H, Matrix{acc.get() + s * I * D, I, D, D},
                             int32_t(H)};
        st.merge(shard.load(i, h, part.get()));
      }
      if (states) {
        states->save(i, h, st.settled());
        continue;
      }
      if (finalize(st, out.row(i) + h * width, p.empty, NearestKeys{&hd, i, chosen.get()}) == RowOutcome::Error) {
        result = {Status::EmptyRow, i, h};
        return true;
      }
    }
  }
  return true;
}

}  // namespace

namespace narrow {

void begin_rows(Workspace& ws, int64_t rows, int64_t width, bool fixed_shift, RowState* st) {
  for (int64_t r = 0; r < rows; ++r) {
    st[r] = RowState(ws.block_acc.get() + r * (1 + width), width);
    st[r].reset();
    if (fixed_shift) st[r].max = 0;
  }
}

RowOutcome end_row(const Head& hd, int32_t head, int64_t i, const RowState& st, float best, bool overflow,
                   Workspace& ws, Matrix out) {
  const KernelKind kind = hd.kernel.kind;
  const bool fixed_shift = kind != KernelKind::Softmax, compact = is_compact(kind);
  const int64_t width = st.width;
  // The best score (log2): softmax's shift; for the distance kernels the best one seen (compact), or, for the
  // others, 0 or −inf by their sum of weights (kFixedShiftMinSum).
  float top = fixed_shift ? best : float(st.max);
  if (fixed_shift && !compact) top = st.sum() >= kFixedShiftMinSum ? 0.0f : -std::numeric_limits<float>::infinity();
  SoftmaxState<double> row(st.sums, width);  // the same sums, the shift in natural units
  row.max = fixed_shift ? 0.0 : st.max * kLn2;
  bool redo = needs_double(overflow, top, compact) || !finite_state(row);
  if (fixed_shift && top > -std::numeric_limits<float>::infinity() && top < kFixedShiftFloor) redo = true;
  return write_row(hd, head, i, redo, row, ws, out.row(i) + head * width);
}

}  // namespace narrow

Result run_exact(const Problem& p, Matrix out, const StateOut* states, int32_t threads) {
  if (const Status s = check(p, true); s != Status::Ok) return {s};
  if (out.rows != p.queries.rows || out.cols != p.values.cols || (out.rows > 0 && !out.data)) return {Status::BadShape};
  if (threads < 1) return {Status::BadArgument};
  threads = useful_threads(p, threads);
  if (const int64_t shards = key_shards(p); shards > 1) {
    Result r;
    if (run_key_shards(p, out, states, threads, shards, r)) return r;
  }
  return run_query_blocks(p, out, states, threads);
}

Result attention(const Problem& p, Matrix out) { return run_exact(p, out, nullptr, p.threads); }
Result attention(const Problem& p, Matrix out, int32_t threads) { return run_exact(p, out, nullptr, threads); }

}  // namespace ka
