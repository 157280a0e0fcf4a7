// attention() by random features, Nyström, certified sparsity or top-k: reads the method options (resolving 'auto')
// and runs the core's method.
import { describe, fail, KernelAttentionError } from './errors.js';
import { withHeap } from './heap.js';
import { copyCall } from './options.js';
import { KERNELS, oneOf } from './validate.js';

export const METHODS = ['exact', 'random-features', 'nystrom', 'sparse', 'top-k', 'auto'];
export const SAMPLINGS = ['kmeans++', 'uniform'];
/** Options of attention() beyond those it shares with weights() and attentionState(). */
export const METHOD_OPTIONS = ['method', 'tolerance', 'seed', 'features', 'landmarks', 'sampling', 'topK'];

// The core's limits (random_features.h kMaxFeatures, nystrom.h kMaxLandmarks).
const MAX_FEATURES = 8192;
const MAX_LANDMARKS = 1024;
// top_k_attention's k is an int32 (k ≥ J keeps every key).
const MAX_TOP_K = 2 ** 31 - 1;
const KERNELS_OF = {
  'random-features': ['softmax', 'gaussian', 'laplacian', 'cauchy'],
  nystrom: ['softmax', 'gaussian', 'laplacian', 'cauchy'],
  sparse: ['gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'],
  'top-k': KERNELS,
};
/** Dimensions per head the sparse method's cell grid serves (sparse.h kSparseMaxDims). */
export const SPARSE_MAX_DIMS = 3;
/** The sparse method's default tolerance (a weight ratio; the other methods' is an RMS error target, 1e-2). */
export const SPARSE_TOLERANCE = 1e-3;

// method 'auto' (docs/approximations.md, "Choosing a method"): certified sparsity where it measured at least 2× faster
// than exact, else exact. Random features and Nyström only estimate their error, so 'auto' never picks them. The
// kernels sparsity pays for, with their reach in bandwidths at a weight ratio t (sparse.h's radius before widening);
// Cauchy's tail makes its certificate visit every key.
const AUTO_REACH = {
  gaussian: (t) => Math.sqrt(2 * Math.log(1 / t)), laplacian: (t) => Math.log(1 / t),
  epanechnikov: () => 1, tricube: () => 1, uniform: () => 1,
};
// Below this many query-key pairs the exact engine takes milliseconds: building an index does not pay.
const AUTO_MIN_PAIRS = 2 ** 20;
// The largest share of the keys within reach for which 'auto' runs sparse (measured 2.2× at 0.14, 1.7× at 0.17).
const AUTO_MAX_SHARE = 0.15;

function countOption(value, method, needs, most, name) {
  if (value === undefined) return 0;
  if (method !== needs) {
    throw new KernelAttentionError('BadArgument', `\`${name}\` applies to method '${needs}'; got method '${method}'`, name);
  }
  if (!Number.isInteger(value) || value < 1 || value > most) fail('BadArgument', name, `an integer from 1 to ${most}`, value);
  return value;
}

/**
 * Reads method, tolerance, seed, features, landmarks and sampling from attention()'s options (already checked
 * for unknown names) against the call readCall() described. Throws before anything is allocated.
 */
export function readMethod(options, call) {
  const kernelName = KERNELS[call.kernel];
  const { seed = 0, features, landmarks, sampling, topK } = options;
  let { method = 'auto' } = options;
  oneOf(method, METHODS, 'options.method');
  const tolerance = options.tolerance === undefined ? (method === 'sparse' || method === 'auto' ? SPARSE_TOLERANCE : 1e-2) : options.tolerance;
  if (typeof tolerance !== 'number' || !(tolerance > 0 && tolerance < 1)) {
    fail('BadArgument', 'options.tolerance', 'a number strictly between 0 and 1', tolerance);
  }
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) fail('BadArgument', 'options.seed', 'an integer from 0 to 2³² − 1', seed);
  const count = countOption(features, method, 'random-features', MAX_FEATURES, 'options.features') ||
    countOption(landmarks, method, 'nystrom', MAX_LANDMARKS, 'options.landmarks') ||
    countOption(topK, method, 'top-k', MAX_TOP_K, 'options.topK');
  if (method === 'top-k' && !count) {
    throw new KernelAttentionError('BadArgument', "method 'top-k' needs `options.topK`, the number of keys each query keeps", 'options.topK');
  }
  if (sampling !== undefined) {
    if (method !== 'nystrom') {
      throw new KernelAttentionError('BadArgument', `\`options.sampling\` applies to method 'nystrom'; got method '${method}'`, 'options.sampling');
    }
    oneOf(sampling, SAMPLINGS, 'options.sampling');
  }
  // Resolved after the options above, whose messages name the method the caller asked for.
  if (method === 'auto') method = chooseMethod(call, kernelName, tolerance);
  if (method !== 'exact') {
    if (!KERNELS_OF[method].includes(kernelName)) {
      throw new KernelAttentionError('BadArgument',
        `\`options.method\` '${method}' approximates the kernels ${KERNELS_OF[method].map((k) => `'${k}'`).join(', ')}; ` +
        `got kernel '${kernelName}'`, 'options.method');
    }
    if (method === 'sparse') {
      readSparse(call);
      return { method, tolerance, seed, count: 0, sampling: 0 };
    }
    if (method === 'top-k') return { method, tolerance, seed, count, sampling: 0 };  // every mask, group and kernel
    const masked = call.leaveOneOut || call.keyPadding !== null || call.general !== null;
    for (const [name, present] of [['mask', masked], ['groups', call.queryGroups !== null]]) {
      if (present) {
        throw new KernelAttentionError('BadArgument',
          `\`options.${name}\` is not available with method '${method}' (only \`causal\` is); use method 'exact'`, `options.${name}`);
      }
    }
    if (call.J === 0) throw new KernelAttentionError('BadShape', '`keys` must hold at least one row', 'keys');
  }
  return { method, tolerance, seed, count, sampling: SAMPLINGS.indexOf(sampling ?? 'kmeans++') };
}

/** 'sparse' or 'exact' for method 'auto' (see AUTO_REACH). */
function chooseMethod(call, kernelName, tolerance) {
  const reach = AUTO_REACH[kernelName];
  if (!reach || call.M / call.heads > SPARSE_MAX_DIMS || call.general || call.queryGroups || call.I * call.J < AUTO_MIN_PAIRS) {
    return 'exact';
  }
  return shareInReach(call, reach(tolerance)) <= AUTO_MAX_SHARE ? 'sparse' : 'exact';
}

/**
 * The share of the keys within `reach` bandwidths of a query, were the keys spread evenly over their bounding box:
 * per head, the product over its dimensions of min(1, 2·reach·h / extent), averaged over the heads. Clustered keys
 * make the true share larger, which costs time, never accuracy.
 */
function shareInReach(call, reach) {
  const { J, M, heads, keys, bandwidth } = call;
  const lo = new Float64Array(M).fill(Infinity);
  const hi = new Float64Array(M).fill(-Infinity);
  for (let j = 0; j < J; j++) {
    for (let d = 0; d < M; d++) {
      const x = keys[j * M + d];
      if (x < lo[d]) lo[d] = x;
      if (x > hi[d]) hi[d] = x;
    }
  }
  const perHead = M / heads;
  let sum = 0;
  for (let h = 0; h < heads; h++) {
    let share = 1;
    for (let d = h * perHead; d < (h + 1) * perHead; d++) {
      const extent = hi[d] - lo[d];  // not finite with infinite keys (or none but NaN): counted as all in reach
      share *= Number.isFinite(extent) ? Math.min(1, (2 * reach * bandwidth[d]) / extent) : 1;
    }
    sum += share;
  }
  return sum / heads;
}

/** What method 'sparse' refuses: more than 3 dimensions per head, a general mask, groups. */
function readSparse(call) {
  const perHead = call.M / call.heads;
  if (perHead > SPARSE_MAX_DIMS) {
    throw new KernelAttentionError('BadArgument',
      `method 'sparse' needs at most ${SPARSE_MAX_DIMS} dimensions per head (\`options.dim\` / \`options.heads\`); got ${perHead}`, 'options.dim');
  }
  for (const [name, present] of [['mask', call.general !== null], ['groups', call.queryGroups !== null]]) {
    if (present) {
      throw new KernelAttentionError('BadArgument',
        `\`options.${name}\` is not available with method 'sparse' (causal, leaveOneOut and keyPadding are); use method 'exact'`,
        `options.${name}`);
    }
  }
}

/**
 * Certified sparse attention of `call` (method 'sparse'): { output, method, errorEstimate, droppedMass (Float64Array
 * I·H: per query and head, a bound on the skipped weight relative to the kept weight; NaN for an empty row),
 * keptKeys, skippedKeys, exactRows: 0 }. kernelRegression's sparse model calls the core through sparse.js instead.
 */
export function sparseAttention(module, call, tolerance, checkResult, threads = 1) {
  return withHeap(module, (heap) => {
    const { q, k, v, options: opts } = copyCall(heap, call);
    const out = heap.alloc(call.I * call.D * 4);
    const dropped = heap.alloc(call.I * call.heads * 8);
    const result = module._sparseAttention(q, k, v, out, call.I, call.J, call.M, call.D, opts, tolerance, threads,
      dropped, 0, 0, 0);
    checkResult(module, result);
    return {
      output: heap.readF32(out, call.I * call.D), method: 'sparse', errorEstimate: result.errorEstimate,
      droppedMass: heap.readF64(dropped, call.I * call.heads), keptKeys: result.keptKeys, skippedKeys: result.skippedKeys,
      exactRows: 0,
    };
  });
}

/**
 * Top-k attention of `call` (method 'top-k', k = `topK`): { output, method, errorEstimate, droppedMass (Float64Array
 * I·H: per query and head, the weight dropped relative to the weight kept; NaN for an empty row), keptKeys,
 * skippedKeys, exactRows: 0 }.
 */
function topKAttention(module, call, topK, checkResult) {
  return withHeap(module, (heap) => {
    const { q, k, v, options: opts } = copyCall(heap, call);
    const out = heap.alloc(call.I * call.D * 4);
    const dropped = heap.alloc(call.I * call.heads * 8);
    const result = module._topKAttention(q, k, v, out, call.I, call.J, call.M, call.D, opts, topK, dropped);
    checkResult(module, result);
    return {
      output: heap.readF32(out, call.I * call.D), method: 'top-k', errorEstimate: result.errorEstimate,
      droppedMass: heap.readF64(dropped, call.I * call.heads), keptKeys: result.keptKeys, skippedKeys: result.skippedKeys,
      exactRows: 0,
    };
  });
}

/**
 * The approximate attention of `call` by `how` (from readMethod): { output (a new Float32Array of I·D), method,
 * errorEstimate, features or landmarks, exactRows }. `checkResult` turns the core's Result into a thrown error
 * (attention.js's, passed in to keep the modules free of an import cycle).
 */
export function approximateAttention(module, call, how, checkResult, threads = 1) {
  if (how.method === 'sparse') return sparseAttention(module, call, how.tolerance, checkResult, threads);
  if (how.method === 'top-k') return topKAttention(module, call, how.count, checkResult);
  return withHeap(module, (heap) => {
    const { q, k, v, options: opts } = copyCall(heap, call);
    const out = heap.alloc(call.I * call.D * 4);
    const result = module._approxAttention(q, k, v, out, call.I, call.J, call.M, call.D, opts, {
      method: how.method === 'nystrom' ? 2 : 1, tolerance: how.tolerance, seed: how.seed, count: how.count, sampling: how.sampling,
    });
    checkResult(module, result);
    return {
      output: heap.readF32(out, call.I * call.D), method: how.method, errorEstimate: result.errorEstimate,
      [how.method === 'nystrom' ? 'landmarks' : 'features']: result.count, exactRows: result.exactRows,
    };
  });
}
