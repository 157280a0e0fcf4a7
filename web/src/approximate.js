// attention() by random features, Nyström, certified sparsity or top-k: reads the method options (the core resolves
// 'auto', plan.h) and runs the core's method.
import { checkResult, fail, KernelAttentionError } from './errors.js';
import { copyCall, frameOf } from './options.js';
import { outputOf } from './frame.js';
import { oneOf } from './validate.js';

export const METHODS = ['exact', 'random-features', 'nystrom', 'sparse', 'top-k', 'auto'];
/** Options of attention() beyond those it shares with weights() and attentionState(). */
export const METHOD_OPTIONS = ['method', 'tolerance', 'seed', 'features', 'landmarks', 'sampling', 'topK'];

// top_k_attention's k is an int32 (k ≥ J keeps every key).
const MAX_TOP_K = 2 ** 31 - 1;
/** Whether `method` approximates kernel `k` (the core's kernel traits, engine.kernels; top-k serves every kernel). */
const SERVES = {
  'random-features': (k) => k.randomFeatures,
  nystrom: (k) => k.nystrom,
  sparse: (k) => k.sparse,
  'top-k': () => true,
};

function countOption(value, method, needs, most, name) {
  if (value === undefined) return 0;
  if (method !== needs) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`${name}\` applies to method '${needs}'; got method '${method}'`,
      name,
    );
  }
  if (!Number.isInteger(value) || value < 1 || value > most)
    fail('BadArgument', name, `an integer from 1 to ${most}`, value);
  return value;
}

/**
 * Reads method, tolerance, seed, features, landmarks and sampling from attention()'s options (already checked
 * for unknown names) against the call readCall() described. Throws before anything is allocated.
 */
export function readMethod(engine, options, call) {
  const { seed = 0, features, landmarks, sampling, topK } = options;
  const { maxFeatures, maxLandmarks } = engine.limits;
  let { method = 'auto' } = options;
  oneOf(method, METHODS, 'options.method');
  if (
    options.tolerance !== undefined &&
    (typeof options.tolerance !== 'number' || !(options.tolerance > 0 && options.tolerance < 1))
  ) {
    fail('BadArgument', 'options.tolerance', 'a number strictly between 0 and 1', options.tolerance);
  }
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    fail('BadArgument', 'options.seed', 'an integer from 0 to 2³² − 1', seed);
  const count =
    countOption(features, method, 'random-features', maxFeatures, 'options.features') ||
    countOption(landmarks, method, 'nystrom', maxLandmarks, 'options.landmarks') ||
    countOption(topK, method, 'top-k', MAX_TOP_K, 'options.topK');
  if (method === 'top-k' && !count) {
    throw new KernelAttentionError(
      'BadArgument',
      "method 'top-k' needs `options.topK`, the number of keys each query keeps",
      'options.topK',
    );
  }
  if (sampling !== undefined) {
    if (method !== 'nystrom') {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.sampling\` applies to method 'nystrom'; got method '${method}'`,
        'options.sampling',
      );
    }
    oneOf(sampling, engine.samplings, 'options.sampling');
  }
  // Resolved after the options above, whose messages name the method the caller asked for. The core decides 'auto'
  // and the default tolerance (plan.h).
  const plan = planAttention(engine, call, method, options.tolerance ?? 0);
  const { tolerance, reason } = plan;
  method = plan.method;
  if (method !== 'exact') {
    if (!SERVES[method](engine.kernel(call.kernel))) {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.method\` '${method}' approximates the kernels ` +
          `${engine.kernels
            .filter(SERVES[method])
            .map((k) => `'${k.name}'`)
            .join(', ')}; got kernel '${call.kernel}'`,
        'options.method',
      );
    }
    if (method === 'sparse') {
      readSparse(engine, call);
      return { method, reason, tolerance, seed, count: 0, sampling: null };
    }
    if (method === 'top-k') return { method, reason, tolerance, seed, count, sampling: null }; // every mask, group and kernel
    const masked = call.leaveOneOut || call.keyPadding !== null || call.general !== null;
    for (const [name, present] of [
      ['mask', masked],
      ['groups', call.queryGroups !== null],
    ]) {
      if (present) {
        throw new KernelAttentionError(
          'BadArgument',
          `\`options.${name}\` is not available with method '${method}' (only \`causal\` is); use method 'exact'`,
          `options.${name}`,
        );
      }
    }
    if (call.J === 0) throw new KernelAttentionError('BadShape', '`keys` must hold at least one row', 'keys');
  }
  return { method, reason, tolerance, seed, count, sampling: sampling ?? engine.samplings[0] };
}

/**
 * The core's plan (engine.plan) for `call` when `method` is asked for: { method, reason, tolerance }. The keys are
 * copied in only when the core asks for them (a call 'auto' may run sparsely, whose keys' spread decides).
 */
export function planAttention(engine, call, method, tolerance) {
  const shape = {
    task: 'attention',
    kernel: call.kernel,
    queries: call.I,
    keys: call.J,
    dims: call.M,
    heads: call.heads,
    generalMask: call.general !== null,
    groups: call.queryGroups !== null,
  };
  const plan = engine.plan(shape, method, tolerance);
  if (plan.method !== 'auto') return plan;
  // The keys in the call's frame, as the method that runs will see them.
  const keyData = (heap) => heap.f32Shifted(call.keys, call.M, frameOf(call).keys);
  return engine.withHeap((heap) =>
    engine.plan({ ...shape, keyData: keyData(heap), bandwidth: heap.f32(call.bandwidth) }, method, tolerance),
  );
}

/** What method 'sparse' refuses: more than the core's dimensions per head (3), a general mask, groups. */
function readSparse(engine, call) {
  const perHead = call.M / call.heads;
  const { sparseMaxDims } = engine.limits;
  if (perHead > sparseMaxDims) {
    throw new KernelAttentionError(
      'BadArgument',
      `method 'sparse' needs at most ${sparseMaxDims} dimensions per head (\`options.dim\` / \`options.heads\`); got ${perHead}`,
      'options.dim',
    );
  }
  for (const [name, present] of [
    ['mask', call.general !== null],
    ['groups', call.queryGroups !== null],
  ]) {
    if (present) {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.${name}\` is not available with method 'sparse' (causal, leaveOneOut and keyPadding are); use method 'exact'`,
        `options.${name}`,
      );
    }
  }
}

/**
 * Certified sparse attention of `call` (method 'sparse'): { output, method, errorEstimate, droppedMass (Float64Array
 * I·H: per query and head, a bound on the skipped weight relative to the kept weight; NaN for an empty row),
 * keptKeys, skippedKeys, exactRows: 0 }. kernelRegression's sparse model calls the core through sparse.js instead.
 */
export function sparseAttention(engine, call, tolerance, threads = 1, reason = 'sparse: asked for') {
  return engine.withHeap((heap) => {
    const { q, k, v, options: opts } = copyCall(heap, call);
    const out = heap.alloc(call.I * call.D * 4);
    const dropped = heap.alloc(call.I * call.heads * 8);
    const result = engine.sparseAttention(
      q,
      k,
      v,
      out,
      call.I,
      call.J,
      call.M,
      call.D,
      opts,
      tolerance,
      threads,
      dropped,
      0,
      0,
      0,
    );
    return keptResult(heap, call, 'sparse', reason, result, out, dropped);
  });
}

/**
 * Top-k attention of `call` (method 'top-k', k = `topK`): { output, method, errorEstimate, droppedMass (Float64Array
 * I·H: per query and head, the weight dropped relative to the weight kept; NaN for an empty row), keptKeys,
 * skippedKeys, exactRows: 0 }.
 */
function topKAttention(engine, call, topK, reason) {
  return engine.withHeap((heap) => {
    const { q, k, v, options: opts } = copyCall(heap, call);
    const out = heap.alloc(call.I * call.D * 4);
    const dropped = heap.alloc(call.I * call.heads * 8);
    const result = engine.topKAttention(q, k, v, out, call.I, call.J, call.M, call.D, opts, topK, dropped);
    return keptResult(heap, call, 'top-k', reason, result, out, dropped);
  });
}

/** What sparse and top-k attention return, from the core's report `result` and the heap's `out` and `dropped`. */
function keptResult(heap, call, method, reason, result, out, dropped) {
  checkResult(result);
  return {
    output: outputOf(heap.readF32(out, call.I * call.D), call),
    method,
    reason,
    errorEstimate: result.errorEstimate,
    droppedMass: heap.readF64(dropped, call.I * call.heads),
    keptKeys: result.keptKeys,
    skippedKeys: result.skippedKeys,
    exactRows: 0,
  };
}

/**
 * The approximate attention of `call` by `how` (from readMethod): { output (a new Float32Array of I·D), method,
 * errorEstimate, features or landmarks, exactRows }.
 */
export function approximateAttention(engine, call, how, threads = 1) {
  if (how.method === 'sparse') return sparseAttention(engine, call, how.tolerance, threads, how.reason);
  if (how.method === 'top-k') return topKAttention(engine, call, how.count, how.reason);
  const run = how.method === 'nystrom' ? engine.nystromAttention : engine.randomFeaturesAttention;
  return engine.withHeap((heap) => {
    const { q, k, v, options: opts } = copyCall(heap, call);
    const out = heap.alloc(call.I * call.D * 4);
    const { tolerance, seed, count, sampling } = how;
    const result = run(q, k, v, out, call.I, call.J, call.M, call.D, opts, { tolerance, seed, count, sampling });
    checkResult(result);
    return {
      output: outputOf(heap.readF32(out, call.I * call.D), call),
      method: how.method,
      reason: how.reason,
      errorEstimate: result.errorEstimate,
      [how.method === 'nystrom' ? 'landmarks' : 'features']: result.count,
      exactRows: result.exactRows,
    };
  });
}
