// attention() and weights(): validate, copy in, run the exact engine, copy out, free.
import { KernelAttentionError } from './errors.js';
import { withHeap } from './heap.js';
import { copyCall, readCall, requireValues } from './options.js';

/** Turns a core Result into a thrown KernelAttentionError (or nothing when it is Ok). */
export function checkResult(module, result) {
  if (result.status === 0) return;
  const code = module._statusName(result.status);
  if (code === 'EmptyRow') {
    throw new KernelAttentionError('EmptyRow',
      `query ${result.row}${result.head > 0 ? ` (head ${result.head})` : ''} has no admissible key and \`options.empty\` is 'error'`,
      'options.empty');
  }
  if (code === 'OutOfMemory') {
    throw new KernelAttentionError(code, 'the engine could not allocate its working memory (WebAssembly memory is limited to 2 GiB); use smaller inputs');
  }
  throw new KernelAttentionError(code, `the engine rejected the call (${code}); this is a bug if validation passed`);
}

/** attention() on `module`, running the engine on up to `threads` threads (results do not depend on it). */
export function makeAttention(module, threads = 1) {
  return function attention(queries, keys, values, options) {
    requireValues(values, 'attention');
    const call = readCall(queries, keys, values, options);
    return withHeap(module, (heap) => {
      const { q, k, v, options: opts } = copyCall(heap, call);
      const out = heap.alloc(call.I * call.D * 4);
      checkResult(module, module._attention(q, k, v, out, call.I, call.J, call.M, call.D, opts, threads));
      return heap.readF32(out, call.I * call.D);
    });
  };
}

export function makeWeights(module) {
  return function weights(queries, keys, options) {
    const call = readCall(queries, keys, undefined, options);
    const count = call.heads * call.I * call.J;
    if (count * 4 > 2 ** 31) {
      throw new KernelAttentionError('OutOfMemory',
        `weights() would need ${count} floats (${(count * 4 / 2 ** 20).toFixed(0)} MiB), beyond the 2 GiB WebAssembly memory`, 'queries');
    }
    return withHeap(module, (heap) => {
      const { q, k, options: opts } = copyCall(heap, call);
      const out = heap.alloc(count * 4);
      checkResult(module, module._weights(q, k, out, call.I, call.J, call.M, opts));
      return heap.readF32(out, count);
    });
  };
}
