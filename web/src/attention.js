// attention() and weights(): validate, copy in, run the exact engine (or an approximation, approximate.js), copy out, free.
import { checkResult } from './errors.js';
import { approximation } from './approximate.js';
import { tooLarge } from './heap.js';
import { copyCall, frameOf, readCall, requireValues, SHARED_OPTIONS } from './options.js';
import { METHOD_OPTIONS, planAttention } from './plan.js';
import { CONTROL_OPTIONS, drive, readControl, STEP_WORK } from './progress.js';
import { precisionWarnings } from './warnings.js';
import { outputOf } from './frame.js';

const ATTENTION_OPTIONS = [...SHARED_OPTIONS, ...METHOD_OPTIONS];

// Queries and outputs are copied in and out in chunks of about this many bytes, so the wasm heap holds the keys,
// the values and one chunk: attention over 65,536 × 64 queries, keys and values needs 32 MiB of heap, not 64.
const QUERY_CHUNK_BYTES = 4 << 20;

/** attention() on `engine` (engine.js), running the exact engine on up to `threads` threads (results do not depend on it). */
export function makeAttention(engine, threads = 1) {
  return function attention(queries, keys, values, options) {
    requireValues(values, 'attention');
    const call = readCall(engine, queries, keys, values, options, ATTENTION_OPTIONS);
    tooLarge(call.I * call.D, 'attention()', 'queries', 'I·D');
    const how = planAttention(engine, call, options);
    const approximate = approximation(how);
    if (approximate) return approximate(engine, call, how, threads).output;
    return drive(exactSteps(engine, threads, call, false), null);
  };
}

/** attentionWithInfo() on `engine`: attention() with what ran and its error estimate (sparse on `threads`, the other approximations on one). */
export function makeAttentionWithInfo(engine, threads = 1) {
  return function attentionWithInfo(queries, keys, values, options) {
    requireValues(values, 'attentionWithInfo');
    const call = readCall(engine, queries, keys, values, options, ATTENTION_OPTIONS);
    tooLarge(call.I * call.D, 'attentionWithInfo()', 'queries', 'I·D');
    const how = planAttention(engine, call, options);
    const warnings = precisionWarnings([
      [call.queries, call.M, 'queries'],
      [call.keys, call.M, 'keys'],
      [call.values, call.D, 'values'],
    ]);
    const approximate = approximation(how);
    if (approximate) return { ...approximate(engine, call, how, threads), warnings };
    return {
      output: drive(exactSteps(engine, threads, call, false), null),
      method: how.method,
      reason: how.reason,
      errorEstimate: 0,
      exactRows: 0,
      warnings,
    };
  };
}

/**
 * attentionAsync() on `engine`: attention() in steps of query rows, reporting `{ done, total }` rows to
 * `options.onProgress` and yielding to the event loop between steps, so that `options.signal` can stop it. Gives
 * the bytes attention() gives. Approximations run in one step.
 */
export function makeAttentionAsync(engine, threads = 1) {
  return async function attentionAsync(queries, keys, values, options) {
    requireValues(values, 'attentionAsync');
    const call = readCall(engine, queries, keys, values, options, [...ATTENTION_OPTIONS, ...CONTROL_OPTIONS]);
    tooLarge(call.I * call.D, 'attentionAsync()', 'queries', 'I·D');
    const how = planAttention(engine, call, options);
    const control = readControl(options);
    const approximate = approximation(how);
    if (approximate) {
      return drive(
        (function* oneStep() {
          const { output } = approximate(engine, call, how, threads);
          yield { done: call.I, total: call.I };
          return output;
        })(),
        control,
      );
    }
    return drive(exactSteps(engine, threads, call, true), control);
  };
}

// Each step is one call of the engine, which packs the keys again (J·M floats) and sets up its blocks: a cost per
// call of a fixed fraction of J·M, so its share of a step depends on the step's rows alone, not on J. Measured side
// by side (bench/progress.mjs, attention 4096², M = D = 64): 8 % at 64-row steps, 3–4 % at 256; hence 1,024 rows.
const MIN_STEP_ROWS = 1024;

/**
 * The rows each call of the engine runs: attention()'s chunks (all of I in one call when it fits the chunk budget,
 * or when causal and leave-one-out masks, which index queries absolutely, come as flags), and with `stepwise` those
 * chunks cut into steps of about STEP_WORK, a short tail joining the step before it. Steps subdivide the chunks, so
 * every row gets the same arithmetic.
 */
function planSteps(call, stepwise, { queryBlock: block, unshardedRows }) {
  const { I, J, M, D } = call;
  // Chunks are whole query blocks of the engine. The engine cuts the keys into shards for calls with fewer than
  // unshardedRows rows (exact.h): steps at least that long keep every step unsharded where attention()'s call over the
  // same rows is, so the bytes agree.
  const chunk = Math.max(block, Math.floor(QUERY_CHUNK_BYTES / ((M + D) * 4) / block) * block);
  const absolute = call.causal || call.leaveOneOut;
  const whole =
    I <= chunk || absolute
      ? [[0, I]]
      : Array.from({ length: Math.ceil(I / chunk) }, (_, c) => [c * chunk, Math.min(I, (c + 1) * chunk)]);
  if (!stepwise) return whole;
  let step = Math.max(MIN_STEP_ROWS, Math.round(STEP_WORK / (J * (M + D)) / block) * block);
  step = Math.min(step, chunk);
  // A step's mask is step × J bytes: within the chunk budget.
  if (absolute || call.general)
    step = Math.min(step, Math.max(block, Math.floor(QUERY_CHUNK_BYTES / J / block) * block));
  const steps = [];
  for (const [from, to] of whole) {
    for (let first = from; first < to; first += step) {
      const last = Math.min(to, first + step);
      if (steps.length && first > from && last - first < unshardedRows && steps.at(-1)[1] === first)
        steps.at(-1)[1] = last;
      else steps.push([first, last]);
    }
  }
  return steps;
}

/**
 * attention()'s exact engine as a generator of calls, one per step of planSteps(), each yielding `{ done, total }`
 * rows: attention() runs it to completion in chunks, attentionAsync() in steps, and both give the same bytes. A call
 * over every row passes the masks as given; a call over some rows passes causal and leave-one-out masks as a general
 * mask of its rows (and, causal, only the keys its last row may see).
 */
function* exactSteps(engine, threads, call, stepwise) {
  const { I, J, M, D } = call;
  if (I === 0) return call.values64 ? new Float64Array(0) : new Float32Array(0);
  const steps = planSteps(call, stepwise, engine.limits);
  const frame = frameOf(call); // before the copies below, which leave out the queries
  const heap = engine.openHeap();
  try {
    if (steps.length === 1) {
      const { q, k, v, options } = copyCall(heap, call);
      const out = heap.alloc(I * D * 4);
      checkResult(engine.attention({ q, k, v, out, I, J, M, D, options, threads }));
      const result = outputOf(heap.readF32(out, I * D), call);
      if (stepwise) yield { done: I, total: I };
      return result;
    }
    const rows = Math.max(...steps.map(([a, b]) => b - a));
    const absolute = call.causal || call.leaveOneOut;
    const { k, v, options } = copyCall(heap, { ...call, queries: [], general: null, queryGroups: null });
    options.causal = false;
    options.leaveOneOut = false;
    const q = heap.alloc(rows * M * 4);
    const out = heap.alloc(rows * D * 4);
    if (absolute || call.general) options.generalMask = heap.alloc(rows * J);
    if (call.queryGroups) options.queryGroups = heap.alloc(rows * 4);
    const mask = absolute ? new Uint8Array(rows * J) : null;
    const result = new Float32Array(I * D);
    for (const [first, last] of steps) {
      const count = last - first;
      // Causal: the keys after the step's last query are masked for all of its rows.
      const keys = call.causal ? Math.min(J, last) : J;
      heap.setF32Shifted(q, entries(call.queries, first * M, count * M), M, frame.queries);
      if (mask) {
        const m = mask.subarray(0, count * keys);
        if (call.general) {
          for (let r = 0; r < count; r++)
            m.set(call.general.subarray((first + r) * J, (first + r) * J + keys), r * keys);
        } else m.fill(0);
        for (let r = 0; r < count; r++) {
          if (call.causal) m.fill(1, r * keys + first + r + 1, (r + 1) * keys);
          if (call.leaveOneOut && first + r < keys) m[r * keys + first + r] = 1;
        }
        heap.setU8(options.generalMask, m);
      } else if (call.general) heap.setU8(options.generalMask, call.general.subarray(first * J, last * J));
      if (call.queryGroups) heap.setI32(options.queryGroups, call.queryGroups.subarray(first, last));
      checkResult(engine.attention({ q, k, v, out, I: count, J: keys, M, D, options, threads }), first);
      heap.readF32Into(out, count * D, result, first * D);
      if (stepwise) yield { done: last, total: I };
    }
    return outputOf(result, call);
  } finally {
    heap.free();
  }
}

/** Entries [from, from + count) of a typed or plain array, without copying a typed one. */
const entries = (array, from, count) =>
  ArrayBuffer.isView(array) ? array.subarray(from, from + count) : array.slice(from, from + count);

export function makeWeights(engine) {
  return function weights(queries, keys, options) {
    const call = readCall(engine, queries, keys, undefined, options);
    const count = call.heads * call.I * call.J;
    tooLarge(count, 'weights()', 'queries', 'H·I·J');
    return engine.withHeap((heap) => {
      const { q, k, options } = copyCall(heap, call);
      const out = heap.alloc(count * 4);
      checkResult(engine.weights({ q, k, out, I: call.I, J: call.J, M: call.M, options }));
      return heap.readF32(out, count);
    });
  };
}
