// Bindings: partial online-softmax states, their merge and finalisation (embind.cpp says how bindings are written).
#include <emscripten/bind.h>

#include "common.h"
#include "engine/states.h"

namespace {

using namespace ka;
using namespace ka::bindings;

States states_at(uintptr_t max, uintptr_t sum, uintptr_t acc, int32_t I, int32_t D, int32_t H) {
  return {ptr<float>(max), ptr<float>(sum), Matrix{ptr<float>(acc), I, D, D}, H};
}

CallResult attention_states_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t max, uintptr_t sum, uintptr_t acc,
                               int32_t I, int32_t J, int32_t M, int32_t D, CallOptions o, int32_t threads) {
  Problem p = make_problem(q, k, v, I, J, M, D, o);
  p.threads = threads;
  return to_js(attention_states(p, states_at(max, sum, acc, I, D, o.heads)));
}

CallResult merge_states_js(uintptr_t max, uintptr_t sum, uintptr_t acc, uintptr_t max2, uintptr_t sum2, uintptr_t acc2,
                           int32_t I, int32_t D, int32_t H) {
  return to_js(merge_states(states_at(max, sum, acc, I, D, H), states_at(max2, sum2, acc2, I, D, H)));
}

CallResult finalize_states_js(uintptr_t max, uintptr_t sum, uintptr_t acc, int32_t I, int32_t D, int32_t H,
                              EmptyPolicy empty, uintptr_t out) {
  return to_js(finalize_states(states_at(max, sum, acc, I, D, H), empty, Matrix{ptr<float>(out), I, D, D}));
}

}  // namespace

EMSCRIPTEN_BINDINGS(states) {
  using namespace emscripten;
  function("_attentionStates", &attention_states_js);
  function("_mergeStates", &merge_states_js);
  function("_finalizeStates", &finalize_states_js);
}
