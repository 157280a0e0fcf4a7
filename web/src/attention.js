// attention() and weights(): validate, copy in, run the exact engine (or an approximation, approximate.js), copy out, free.
import { KernelAttentionError } from './errors.js';
import { withHeap } from './heap.js';
import { approximateAttention, METHOD_OPTIONS, readMethod } from './approximate.js';
import { copyCall, readCall, requireValues, SHARED_OPTIONS } from './options.js';

const ATTENTION_OPTIONS = [...SHARED_OPTIONS, ...METHOD_OPTIONS];

/**
 * Turns a core Result into a thrown KernelAttentionError (or nothing when it is Ok). `firstRow` is the index of the
 * call's first query within the user's queries (when they were passed in chunks).
 */
export function checkResult(module, result, firstRow = 0) {
  if (result.status === 0) return;
  const code = module._statusName(result.status);
  if (code === 'EmptyRow') {
    throw new KernelAttentionError('EmptyRow',
      `query ${result.row + firstRow}${result.head > 0 ? ` (head ${result.head})` : ''} has no admissible key and \`options.empty\` is 'error'`,
      'options.empty');
  }
  if (code === 'OutOfMemory') {
    throw new KernelAttentionError(code, 'the engine could not allocate its working memory (WebAssembly memory is limited to 2 GiB); use smaller inputs');
  }
  throw new KernelAttentionError(code, `the engine rejected the call (${code}); this is a bug if validation passed`);
}

// Queries and outputs are copied in and out in chunks of about this many bytes, so the wasm heap holds the keys,
// the values and one chunk: attention over 65,536 × 64 queries, keys and values needs 32 MiB of heap, not 64.
const QUERY_CHUNK_BYTES = 4 << 20;

/** attention() on `module`, running the exact engine on up to `threads` threads (results do not depend on it). */
export function makeAttention(module, threads = 1) {
  return function attention(queries, keys, values, options) {
    requireValues(values, 'attention');
    const call = readCall(queries, keys, values, options, ATTENTION_OPTIONS);
    tooLarge(call.I * call.D, 'attention()', 'queries', 'I·D');
    const how = readMethod(options, call);
    return how.method === 'exact' ? exactAttention(module, threads, call) : approximateAttention(module, call, how, checkResult).output;
  };
}

/** attentionWithInfo() on `module`: attention() with what ran and its error estimate (approximations run on one thread). */
export function makeAttentionWithInfo(module, threads = 1) {
  return function attentionWithInfo(queries, keys, values, options) {
    requireValues(values, 'attentionWithInfo');
    const call = readCall(queries, keys, values, options, ATTENTION_OPTIONS);
    tooLarge(call.I * call.D, 'attentionWithInfo()', 'queries', 'I·D');
    const how = readMethod(options, call);
    if (how.method !== 'exact') return approximateAttention(module, call, how, checkResult);
    return { output: exactAttention(module, threads, call), method: 'exact', errorEstimate: 0, exactRows: 0 };
  };
}

/** The exact engine over `call`, its queries copied in chunks. */
function exactAttention(module, threads, call) {
  // Rows are independent, so chunks give the same bytes; causal and leave-one-out masks index queries absolutely
  // and are not chunked. Chunks are whole query blocks of the engine (16 rows).
  const rows = Math.max(16, Math.floor(QUERY_CHUNK_BYTES / ((call.M + call.D) * 4) / 16) * 16);
  if (call.I <= rows || call.causal || call.leaveOneOut) {
    return withHeap(module, (heap) => {
      const { q, k, v, options: opts } = copyCall(heap, call);
      const out = heap.alloc(call.I * call.D * 4);
      checkResult(module, module._attention(q, k, v, out, call.I, call.J, call.M, call.D, opts, threads));
      return heap.readF32(out, call.I * call.D);
    });
  }
  return withHeap(module, (heap) => {
    const { k, v, options: opts } = copyCall(heap, { ...call, queries: [], general: null, queryGroups: null });
    const q = heap.alloc(rows * call.M * 4);
    const out = heap.alloc(rows * call.D * 4);
    if (call.general) opts.generalMask = heap.alloc(rows * call.J);
    if (call.queryGroups) opts.queryGroups = heap.alloc(rows * 4);
    const result = new Float32Array(call.I * call.D);
    for (let first = 0; first < call.I; first += rows) {
      const count = Math.min(rows, call.I - first);
      module.HEAPF32.set(rowsOf(call.queries, first * call.M, count * call.M), q >> 2);
      if (call.general) module.HEAPU8.set(call.general.subarray(first * call.J, (first + count) * call.J), opts.generalMask);
      if (call.queryGroups) module.HEAP32.set(call.queryGroups.subarray(first, first + count), opts.queryGroups >> 2);
      checkResult(module, module._attention(q, k, v, out, count, call.J, call.M, call.D, opts, threads), first);
      result.set(module.HEAPF32.subarray(out >> 2, (out >> 2) + count * call.D), first * call.D);
    }
    return result;
  });
}

/**
 * Refuses, before anything is allocated, a result of `floats` float32 values beyond the 2 GiB WebAssembly memory
 * (blamed on `argument`, whose row count makes it that large).
 */
export function tooLarge(floats, fn, argument, shape) {
  if (floats * 4 > 2 ** 31) {
    throw new KernelAttentionError('OutOfMemory',
      `${fn} would return ${shape} = ${floats} floats (${(floats * 4 / 2 ** 20).toFixed(0)} MiB) for these \`${argument}\`, ` +
      'beyond the 2 GiB WebAssembly memory', argument);
  }
}

/** Entries [from, from + count) of a typed or plain array, without copying a typed one. */
const rowsOf = (array, from, count) => (ArrayBuffer.isView(array) ? array.subarray(from, from + count) : array.slice(from, from + count));

export function makeWeights(module) {
  return function weights(queries, keys, options) {
    const call = readCall(queries, keys, undefined, options);
    const count = call.heads * call.I * call.J;
    tooLarge(count, 'weights()', 'queries', 'H·I·J');
    return withHeap(module, (heap) => {
      const { q, k, options: opts } = copyCall(heap, call);
      const out = heap.alloc(count * 4);
      checkResult(module, module._weights(q, k, out, call.I, call.J, call.M, opts));
      return heap.readF32(out, count);
    });
  };
}
