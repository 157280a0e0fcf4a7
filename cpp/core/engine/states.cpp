// Partial states: the exact engine stopped before division, and the merge / finalize of online_softmax.h.
#include "engine/states.h"

#include "engine/exact.h"
#include "engine/online_softmax.h"
#include "base/rare.h"
#include "base/scratch.h"
#include "engine/workspace.h"

namespace ka {
namespace {

bool same_shape(const States& a, const States& b) {
  return a.heads == b.heads && a.acc.rows == b.acc.rows && a.acc.cols == b.acc.cols && a.heads >= 1 &&
         a.acc.cols % a.heads == 0;
}

}  // namespace

// O(I·D) work around the engine's O(I·J·(M + D)): KA_RARE.
KA_RARE Result attention_states(const Problem& p, States out) {
  if (out.heads != p.heads || (p.queries.rows > 0 && (!out.max || !out.sum))) return {Status::BadShape};
  const int64_t n = p.queries.rows * out.heads;
  Scratch<double> max(n), sum(n);
  if (!max.ok() || !sum.ok()) return {Status::OutOfMemory};
  const StateOut target{max.get(), sum.get(), out.acc, out.heads};
  const Result r = run_exact(p, out.acc, &target, p.threads);
  if (r.status != Status::Ok) return r;
  for (int64_t at = 0; at < n; ++at) {
    out.max[at] = float(max.get()[at]);
    out.sum[at] = float(sum.get()[at]);
  }
  return r;
}

Result merge_states(States into, const States& other) {
  if (!same_shape(into, other)) return {Status::BadShape};
  const int64_t width = into.acc.cols / into.heads;
  Scratch<double> a(1 + width), b(1 + width);
  if (!a.ok() || !b.ok()) return {Status::OutOfMemory};
  for (int64_t i = 0; i < into.acc.rows; ++i)
    for (int32_t h = 0; h < into.heads; ++h) {
      SoftmaxState<double> st = into.load(i, h, a.get());
      st.merge(other.load(i, h, b.get()));
      into.save(i, h, st);
    }
  return {};
}

// Once per merged set of states, a division per entry: KA_RARE. (merge_states is not: mergeStates is all merge,
// and compiled for size it took 1.05-1.15x the time.)
KA_RARE Result finalize_states(const States& s, EmptyPolicy policy, Matrix out) {
  if (policy == EmptyPolicy::Nearest || int32_t(policy) < 0 || int32_t(policy) > int32_t(EmptyPolicy::Error))
    return {Status::BadArgument};
  if (s.heads < 1 || s.acc.cols % s.heads || out.rows != s.acc.rows || out.cols != s.acc.cols)
    return {Status::BadShape};
  const int64_t width = s.acc.cols / s.heads;
  Scratch<double> a(1 + width);
  if (!a.ok()) return {Status::OutOfMemory};
  for (int64_t i = 0; i < s.acc.rows; ++i)
    for (int32_t h = 0; h < s.heads; ++h) {
      if (finalize(s.load(i, h, a.get()), out.row(i) + h * width, policy) == RowOutcome::Error)
        return {Status::EmptyRow, i, h};
    }
  return {};
}

}  // namespace ka
