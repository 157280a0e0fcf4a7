// attentionGradients(): the exact engine's forward pass and its backward pass (cpp/core/gradients/backward.h) in one call.
import { checkResult, KernelAttentionError } from './errors.js';
import { tooLarge } from './heap.js';
import { copyCall, readCall, requireValues, SHARED_OPTIONS } from './options.js';
import { attentionFrame } from './frame.js';
import { numericArray } from './validate.js';

/** attentionGradients() on `engine` (engine.js); the forward runs on up to `threads` threads, the backward on one. */
export function makeAttentionGradients(engine, threads = 1) {
  return function attentionGradients(queries, keys, values, dOut, options) {
    requireValues(values, 'attentionGradients');
    if (dOut === undefined) {
      throw new KernelAttentionError(
        'BadArgument',
        '`dOut` is required: attentionGradients(queries, keys, values, dOut, options), the gradient of the loss with respect to the output (I·D entries)',
        'dOut',
      );
    }
    const call = readCall(engine, queries, keys, values, options, SHARED_OPTIONS);
    const kernel = engine.kernel(call.kernel);
    if (!kernel.gradient) {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.kernel\` '${kernel.name}' has no gradient (its output is piecewise constant in the queries, keys and bandwidth); ` +
          `use ${smoothCompact(engine)}`,
        'options.kernel',
      );
    }
    const dout = numericArray(dOut, 'dOut');
    if (dout.length !== call.I * call.D) {
      throw new KernelAttentionError(
        'BadShape',
        `\`dOut\` must have I·D = ${call.I}·${call.D} = ${call.I * call.D} entries (the shape of the output); got length ${dout.length}`,
        'dOut',
      );
    }
    tooLarge(call.I * (call.D + call.M), 'attentionGradients()', 'queries', 'I·(D + dim)');
    tooLarge(call.J * (call.D + call.M), 'attentionGradients()', 'keys', 'J·(D + dim)');
    // Softmax's one parameter is its scale; a distance kernel's, a log-bandwidth per dimension.
    const softmax = !kernel.distance;
    // The values stay unshifted (frame.js): the gradients' outputs are float32 in the caller's units.
    call.frame = attentionFrame(call, call.distance, { values: false });
    return engine.withHeap((heap) => {
      const { q, k, v, options } = copyCall(heap, call);
      const { I, J, M, D } = call;
      const dOut = heap.f32(dout);
      const out = heap.alloc(I * D * 4);
      const dq = heap.alloc(I * M * 4);
      const dk = heap.alloc(J * M * 4);
      const dv = heap.alloc(J * D * 4);
      const dTheta = heap.alloc((softmax ? 1 : M) * 4);
      checkResult(engine.attentionGradients({ q, k, v, dOut, out, dq, dk, dv, dTheta, I, J, M, D, options, threads }));
      const result = {
        output: heap.readF32(out, call.I * call.D),
        dq: heap.readF32(dq, call.I * call.M),
        dk: heap.readF32(dk, call.J * call.M),
        dv: heap.readF32(dv, call.J * call.D),
      };
      if (softmax) result.dScale = heap.readF32(dTheta, 1)[0];
      else result.dLogBandwidth = heap.readF32(dTheta, call.M);
      return result;
    });
  };
}

/** The compact kernels that have a gradient, for messages: "'epanechnikov' or 'tricube'". */
export function smoothCompact(engine) {
  const names = engine.kernels.filter((k) => k.compact && k.gradient).map((k) => `'${k.name}'`);
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} or ${names.at(-1)}` : names.join('');
}
