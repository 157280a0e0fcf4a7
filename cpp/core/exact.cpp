// The exact engine's entry: checks the call, then runs each head on the path that suits its kernel and shape.
#include "exact.h"

#include <algorithm>
#include <atomic>
#include <utility>
#include <vector>

#include "exact_narrow.h"
#include "exact_wide.h"
#include "parallel.h"
#include "workspace.h"

namespace ka {
namespace {

template <KernelKind K>
Result run_head(const Head& hd, int32_t head, QueryRange range, Workspace& ws, Matrix out) {
  if (K == KernelKind::Softmax && hd.queries.cols >= kWideMinDims) return run_wide(hd, head, range, ws, out);
  switch (hd.values.cols) {
    case 1: return narrow::run<K, 1>(hd, head, range, ws, out);
    case 2: return narrow::run<K, 2>(hd, head, range, ws, out);
    case 3: return narrow::run<K, 3>(hd, head, range, ws, out);
    case 4: return narrow::run<K, 4>(hd, head, range, ws, out);
    default: return narrow::run<K, 0>(hd, head, range, ws, out);
  }
}

// Of two failures, the one a single thread would have met first (lowest head, then row): results and errors must
// not depend on the number of threads.
Result first_failure(const Result& a, const Result& b) {
  if (a.status == Status::Ok) return b;
  if (b.status == Status::Ok) return a;
  return std::make_pair(a.head, a.row) <= std::make_pair(b.head, b.row) ? a : b;
}

}  // namespace

// Multiply-adds (query × key × column pairs) below which a call does not start one more thread.
constexpr int64_t kMinThreadWork = int64_t(1) << 20;

Result run_exact(const Problem& p, Matrix out, const StateOut* states, int32_t threads) {
  if (const Status s = check(p, true); s != Status::Ok) return {s};
  if (out.rows != p.queries.rows || out.cols != p.values.cols || (out.rows > 0 && !out.data)) return {Status::BadShape};
  if (threads < 1) return {Status::BadArgument};
  const int64_t I = p.queries.rows, dims = p.queries.cols / p.heads, width = p.values.cols / p.heads;
  // Every extra thread must get enough work to pay for its start (tens of microseconds natively, more in WebAssembly,
  // where a pool worker is woken by a message): about a million multiply-adds. Results never depend on the count.
  const int64_t work = I * p.keys.rows * (p.queries.cols + p.values.cols);
  threads = int32_t(std::max<int64_t>(1, std::min<int64_t>(threads, work / kMinThreadWork)));
  // Work is split into whole query blocks, so every row sees exactly the arithmetic of a single-thread run.
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

Result attention(const Problem& p, Matrix out, int32_t threads) { return run_exact(p, out, nullptr, threads); }
Result attention(const Problem& p, Matrix out) { return run_exact(p, out, nullptr, p.threads); }

}  // namespace ka
