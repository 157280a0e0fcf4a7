// Bindings: exact attention, its gradients and the explicit weights (embind.cpp says how bindings are written).
#include <emscripten/bind.h>

#include "common.h"
#include "engine/exact.h"
#include "engine/weights.h"
#include "gradients/backward.h"

namespace {

using namespace ka;
using namespace ka::bindings;

CallResult attention_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t out, int32_t I, int32_t J, int32_t M,
                        int32_t D, CallOptions o, int32_t threads) {
  Problem p = make_problem(q, k, v, I, J, M, D, o);
  p.threads = threads;
  return to_js(attention(p, Matrix{ptr<float>(out), I, D, D}));
}

// The forward pass and the backward pass (backward.h): out I×D, dq I×M, dk J×M, dv J×D, dtheta 1 (softmax) or M.
CallResult attention_gradients_js(uintptr_t q, uintptr_t k, uintptr_t v, uintptr_t dout, uintptr_t out, uintptr_t dq,
                                  uintptr_t dk, uintptr_t dv, uintptr_t dtheta, int32_t I, int32_t J, int32_t M,
                                  int32_t D, CallOptions o, int32_t threads) {
  Problem p = make_problem(q, k, v, I, J, M, D, o);
  p.threads = threads;
  const Gradients g{Matrix{ptr<float>(dq), I, M, M}, Matrix{ptr<float>(dk), J, M, M}, Matrix{ptr<float>(dv), J, D, D},
                    ptr<float>(dtheta)};
  return to_js(
      attention_gradients(p, ConstMatrix{ptr<const float>(dout), I, D, D}, g, Matrix{ptr<float>(out), I, D, D}));
}

CallResult weights_js(uintptr_t q, uintptr_t k, uintptr_t out, int32_t I, int32_t J, int32_t M, CallOptions o) {
  return to_js(weights(make_problem(q, k, 0, I, J, M, 0, o), ptr<float>(out)));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attention) {
  using namespace emscripten;
  function("_attention", &attention_js);
  function("_weights", &weights_js);
  function("_attentionGradients", &attention_gradients_js);
}
