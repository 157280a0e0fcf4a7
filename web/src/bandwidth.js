// selectBandwidth(): rules of thumb and leave-one-out cross-validation for the Nadaraya–Watson estimator.
import { checkResult } from './attention.js';
import { KernelAttentionError } from './errors.js';
import { withHeap } from './heap.js';
import {
  bandwidths, boolean, checkOptionNames, KERNELS, numericArray, oneOf, positiveInteger, rowsOf,
} from './validate.js';

const METHODS = ['cv', 'scott', 'silverman'];
const ESTIMATORS = ['nadaraya-watson'];
const CURVE_CAPACITY = 256;

/** Validates the sample shared by selectBandwidth() and cvScore(); returns n and the value width. */
function readSample(x, y, dim) {
  positiveInteger(dim, 'options.dim');
  numericArray(x, 'x');
  numericArray(y, 'y');
  const n = rowsOf(x, dim, 'x', 'options.dim');
  if (n < 2) throw new KernelAttentionError('BadShape', `\`x\` must hold at least 2 rows; got ${n}`, 'x');
  if (y.length === 0 || y.length % n !== 0) {
    throw new KernelAttentionError('BadShape', `\`y\` must have n·D entries for n = ${n} rows of x; got length ${y.length}`, 'y');
  }
  return { n, width: y.length / n };
}

export function makeBandwidth(module) {
  function cvScore(x, y, options) {
    if (options === undefined) {
      throw new KernelAttentionError('BadArgument', '`options` is required: `{ dim, bandwidth }`', 'options');
    }
    checkOptionNames(options, ['dim', 'kernel', 'bandwidth']);
    const { dim, kernel = 'gaussian', bandwidth } = options;
    const { n, width } = readSample(x, y, dim);
    oneOf(kernel, KERNELS.filter((k) => k !== 'softmax'), 'options.kernel');
    if (bandwidth === undefined) throw new KernelAttentionError('BadArgument', '`options.bandwidth` is required', 'options.bandwidth');
    const h = Float64Array.from(bandwidths(bandwidth, dim, 'options.bandwidth'));
    return withHeap(module, (heap) => {
      const score = heap.alloc(8);
      checkResult(module, { status: module._cvScore(heap.f32(x), heap.f32(y), n, dim, width, KERNELS.indexOf(kernel), heap.f64(h), score) });
      return heap.readF64(score, 1)[0];
    });
  }

  function selectBandwidth(x, y, options) {
    if (options === undefined) {
      throw new KernelAttentionError('BadArgument', '`options` is required: at least `{ dim }`, the number of columns of x', 'options');
    }
    checkOptionNames(options, ['dim', 'kernel', 'estimator', 'method', 'perDimension']);
    const { dim, kernel = 'gaussian', estimator = 'nadaraya-watson', method = 'cv', perDimension = false } = options;
    const { n, width } = readSample(x, y, dim);
    oneOf(kernel, KERNELS.filter((k) => k !== 'softmax'), 'options.kernel');
    oneOf(estimator, ESTIMATORS, 'options.estimator');
    oneOf(method, METHODS, 'options.method');
    boolean(perDimension, 'options.perDimension');
    const kernelCode = KERNELS.indexOf(kernel);

    return withHeap(module, (heap) => {
      const xp = heap.f32(x);
      const yp = heap.f32(y);
      const h = heap.alloc(dim * 8);
      const score = heap.alloc(8);
      const rule = method === 'silverman' ? 1 : 0;
      checkResult(module, { status: module._ruleOfThumb(xp, n, dim, rule, h) });
      let count = 0;
      let curveH = 0;
      let curveScore = 0;
      if (method === 'cv') {
        curveH = heap.alloc(CURVE_CAPACITY * dim * 8);
        curveScore = heap.alloc(CURVE_CAPACITY * 8);
        const r = module._selectCv(xp, yp, n, dim, width, kernelCode, perDimension, h, score, curveH, curveScore, CURVE_CAPACITY);
        checkResult(module, r);
        count = r.count;
      } else {
        checkResult(module, { status: module._cvScore(xp, yp, n, dim, width, kernelCode, h, score) });
      }
      return {
        method,
        bandwidth: heap.readF64(h, dim),
        score: heap.readF64(score, 1)[0],
        curve: {
          bandwidths: count ? heap.readF64(curveH, count * dim) : new Float64Array(0),
          scores: count ? heap.readF64(curveScore, count) : new Float64Array(0),
        },
      };
    });
  }

  return { selectBandwidth, cvScore };
}
