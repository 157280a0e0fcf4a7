// attention() and weights(): validate, copy in, run the exact engine (or an approximation, approximate.js), copy out, free.
import { KernelAttentionError } from './errors.js';
import { openHeap, withHeap } from './heap.js';
import { approximateAttention, METHOD_OPTIONS, readMethod } from './approximate.js';
import { copyCall, readCall, requireValues, SHARED_OPTIONS } from './options.js';
import { CONTROL_OPTIONS, drive, readControl } from './progress.js';

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
    return how.method === 'exact' ? exactAttention(module, threads, call) : approximateAttention(module, call, how, checkResult, threads).output;
  };
}

/** attentionWithInfo() on `module`: attention() with what ran and its error estimate (sparse on `threads`, the other approximations on one). */
export function makeAttentionWithInfo(module, threads = 1) {
  return function attentionWithInfo(queries, keys, values, options) {
    requireValues(values, 'attentionWithInfo');
    const call = readCall(queries, keys, values, options, ATTENTION_OPTIONS);
    tooLarge(call.I * call.D, 'attentionWithInfo()', 'queries', 'I·D');
    const how = readMethod(options, call);
    if (how.method !== 'exact') return approximateAttention(module, call, how, checkResult, threads);
    return { output: exactAttention(module, threads, call), method: 'exact', errorEstimate: 0, exactRows: 0 };
  };
}

/**
 * attentionAsync() on `module`: attention() in steps of query rows, reporting `{ done, total }` rows to
 * `options.onProgress` and yielding to the event loop between steps, so that `options.signal` can stop it. Gives
 * the bytes attention() gives. Approximations run in one step.
 */
export function makeAttentionAsync(module, threads = 1) {
  return async function attentionAsync(queries, keys, values, options) {
    requireValues(values, 'attentionAsync');
    const call = readCall(queries, keys, values, options, [...ATTENTION_OPTIONS, ...CONTROL_OPTIONS]);
    tooLarge(call.I * call.D, 'attentionAsync()', 'queries', 'I·D');
    const how = readMethod(options, call);
    const control = readControl(options);
    if (how.method !== 'exact') {
      return drive((function* approximate() {
        const { output } = approximateAttention(module, call, how, checkResult, threads);
        yield { done: call.I, total: call.I };
        return output;
      })(), control);
    }
    return drive(exactSteps(module, threads, call), control);
  };
}

// Multiply-adds per step of attentionAsync (about 5–20 ms of one wasm thread): steps long enough that reporting
// and yielding between them costs nothing measurable, short enough that an abort takes effect quickly.
const STEP_WORK = 2 ** 25;
// The engine cuts the keys into shards for calls with fewer than 4 query blocks (exact.cpp): steps of at least
// this many rows keep every step unsharded where attention()'s call over the same rows is, so the bytes agree.
const UNSHARDED_ROWS = 64;
// Each step is one call of the engine, which packs the keys again (J·M floats) and sets up its blocks: a cost per
// call of a fixed fraction of J·M, so its share of a step depends on the step's rows alone, not on J. Measured side
// by side (bench/progress.mjs, attention 4096², M = D = 64): 8 % at 64-row steps, 3–4 % at 256; hence 1,024 rows.
const MIN_STEP_ROWS = 1024;

/**
 * attention()'s exact engine as a generator of steps: each step runs some query rows and yields `{ done, total }`
 * (rows). The steps subdivide attention()'s own chunks, so every row gets the same arithmetic. Causal and
 * leave-one-out masks index queries absolutely: a step passes them as a general mask of its rows (and, causal,
 * only the keys its last row may see).
 */
function* exactSteps(module, threads, call) {
  const { I, J, M, D } = call;
  if (I === 0) return new Float32Array(0);
  const chunk = Math.max(16, Math.floor(QUERY_CHUNK_BYTES / ((M + D) * 4) / 16) * 16);
  const absolute = call.causal || call.leaveOneOut;
  let step = Math.max(MIN_STEP_ROWS, Math.round(STEP_WORK / (J * (M + D)) / 16) * 16);
  step = Math.min(step, chunk);
  // A step's mask is step × J bytes: within the chunk budget.
  if (absolute || call.general) step = Math.min(step, Math.max(16, Math.floor(QUERY_CHUNK_BYTES / J / 16) * 16));
  // Steps: each of attention()'s chunks (all of I when it makes one call) cut into `step` rows, a short tail joining
  // the step before it.
  const whole = I <= chunk || absolute ? [[0, I]] : Array.from({ length: Math.ceil(I / chunk) }, (_, c) => [c * chunk, Math.min(I, (c + 1) * chunk)]);
  const steps = [];
  for (const [from, to] of whole) {
    for (let first = from; first < to; first += step) {
      const last = Math.min(to, first + step);
      if (steps.length && first > from && last - first < UNSHARDED_ROWS && steps.at(-1)[1] === first) steps.at(-1)[1] = last;
      else steps.push([first, last]);
    }
  }
  const rows = Math.max(...steps.map(([a, b]) => b - a));
  const heap = openHeap(module);
  try {
    const { k, v, options: opts } = copyCall(heap, { ...call, queries: [], general: null, queryGroups: null });
    opts.causal = false;
    opts.leaveOneOut = false;
    const q = heap.alloc(rows * M * 4);
    const out = heap.alloc(rows * D * 4);
    const masked = absolute || call.general;
    const mask = masked ? heap.alloc(rows * J) : 0;
    if (masked) opts.generalMask = mask;
    if (call.queryGroups) opts.queryGroups = heap.alloc(rows * 4);
    const result = new Float32Array(I * D);
    for (const [first, last] of steps) {
      const count = last - first;
      // Causal: the keys after the step's last query are masked for all of its rows.
      const keys = call.causal ? Math.min(J, last) : J;
      module.HEAPF32.set(rowsOf(call.queries, first * M, count * M), q >> 2);
      if (masked) {
        const m = module.HEAPU8.subarray(mask, mask + count * keys);
        if (call.general) {
          for (let r = 0; r < count; r++) m.set(call.general.subarray((first + r) * J, (first + r) * J + keys), r * keys);
        } else m.fill(0);
        for (let r = 0; r < count; r++) {
          if (call.causal) m.fill(1, r * keys + first + r + 1, (r + 1) * keys);
          if (call.leaveOneOut && first + r < keys) m[r * keys + first + r] = 1;
        }
      }
      if (call.queryGroups) module.HEAP32.set(call.queryGroups.subarray(first, last), opts.queryGroups >> 2);
      checkResult(module, module._attention(q, k, v, out, count, keys, M, D, opts, threads), first);
      result.set(module.HEAPF32.subarray(out >> 2, (out >> 2) + count * D), first * D);
      yield { done: last, total: I };
    }
    return result;
  } finally {
    heap.free();
  }
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
