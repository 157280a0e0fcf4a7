// The exact engine's entry: checks the call, then runs each head on the path that suits its kernel and shape.
#include "exact.h"

#include "exact_narrow.h"
#include "exact_wide.h"
#include "workspace.h"

namespace ka {
namespace {

template <KernelKind K>
Result run_head(const Head& hd, int32_t head, Workspace& ws, Matrix out) {
  if (K == KernelKind::Softmax && hd.queries.cols >= kWideMinDims) return run_wide(hd, head, ws, out);
  switch (hd.values.cols) {
    case 1: return narrow::run<K, 1>(hd, head, ws, out);
    case 2: return narrow::run<K, 2>(hd, head, ws, out);
    case 3: return narrow::run<K, 3>(hd, head, ws, out);
    case 4: return narrow::run<K, 4>(hd, head, ws, out);
    default: return narrow::run<K, 0>(hd, head, ws, out);
  }
}

}  // namespace

Result run_exact(const Problem& p, Matrix out, const StateOut* states) {
  if (const Status s = check(p, true); s != Status::Ok) return {s};
  if (out.rows != p.queries.rows || out.cols != p.values.cols || (out.rows > 0 && !out.data)) return {Status::BadShape};
  const int64_t dims = p.queries.cols / p.heads, width = p.values.cols / p.heads;
  Workspace ws(dims, width, p.queries.rows, p.keys.rows);
  if (!ws.ok()) return {Status::OutOfMemory};
  ws.states = states;
  for (int32_t h = 0; h < p.heads; ++h) {
    const Head hd = head_of(p, h);
    const Result r = with_kernel(p.kernel.kind, [&](auto kind) { return run_head<kind()>(hd, h, ws, out); });
    if (r.status != Status::Ok) return r;
  }
  return {};
}

Result attention(const Problem& p, Matrix out) { return run_exact(p, out, nullptr); }

}  // namespace ka
