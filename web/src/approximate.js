// attention() by random features or Nyström: reads the method options and runs the core's approximation.
import { describe, fail, KernelAttentionError } from './errors.js';
import { withHeap } from './heap.js';
import { copyCall } from './options.js';
import { KERNELS, oneOf } from './validate.js';

export const METHODS = ['exact', 'random-features', 'nystrom'];
export const SAMPLINGS = ['kmeans++', 'uniform'];
/** Options of attention() beyond those it shares with weights() and attentionState(). */
export const METHOD_OPTIONS = ['method', 'tolerance', 'seed', 'features', 'landmarks', 'sampling'];

// The core's limits (random_features.h kMaxFeatures, nystrom.h kMaxLandmarks).
const MAX_FEATURES = 8192;
const MAX_LANDMARKS = 1024;
const KERNELS_OF = { 'random-features': ['softmax', 'gaussian'], nystrom: ['softmax', 'gaussian', 'laplacian', 'cauchy'] };

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
  const { method = 'exact', tolerance = 1e-2, seed = 0, features, landmarks, sampling } = options;
  oneOf(method, METHODS, 'options.method');
  if (typeof tolerance !== 'number' || !(tolerance > 0 && tolerance < 1)) {
    fail('BadArgument', 'options.tolerance', 'a number strictly between 0 and 1', tolerance);
  }
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) fail('BadArgument', 'options.seed', 'an integer from 0 to 2³² − 1', seed);
  const count = countOption(features, method, 'random-features', MAX_FEATURES, 'options.features') ||
    countOption(landmarks, method, 'nystrom', MAX_LANDMARKS, 'options.landmarks');
  if (sampling !== undefined) {
    if (method !== 'nystrom') {
      throw new KernelAttentionError('BadArgument', `\`options.sampling\` applies to method 'nystrom'; got method '${method}'`, 'options.sampling');
    }
    oneOf(sampling, SAMPLINGS, 'options.sampling');
  }
  if (method !== 'exact') {
    if (!KERNELS_OF[method].includes(kernelName)) {
      throw new KernelAttentionError('BadArgument',
        `\`options.method\` '${method}' approximates the kernels ${KERNELS_OF[method].map((k) => `'${k}'`).join(', ')}; ` +
        `got kernel '${kernelName}'`, 'options.method');
    }
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

/**
 * The approximate attention of `call` by `how` (from readMethod): { output (a new Float32Array of I·D), method,
 * errorEstimate, features or landmarks, exactRows }. `checkResult` turns the core's Result into a thrown error
 * (attention.js's, passed in to keep the modules free of an import cycle).
 */
export function approximateAttention(module, call, how, checkResult) {
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
