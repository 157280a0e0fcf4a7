// selectBandwidth() and cvScore(): rules of thumb, leave-one-out cross-validation and AICc, for the Nadaraya–Watson
// and local-linear estimators, with optional observation weights.
import { checkResult } from './attention.js';
import { describe, KernelAttentionError } from './errors.js';
import { withHeap } from './heap.js';
import {
  bandwidths, boolean, checkOptionNames, KERNELS, numericArray, oneOf, positiveInteger, rowsOf,
} from './validate.js';

export const ESTIMATORS = ['nadaraya-watson', 'local-linear'];
export const REGRESSION_KERNELS = KERNELS.filter((k) => k !== 'softmax');
const METHODS = ['cv', 'aicc', 'scott', 'silverman'];
const CURVE_CAPACITY = 256;

/**
 * Validates a regression sample (x: n × dim, y: n × D, optional weights: n); returns n, the value width D and the
 * checked arrays (numericArray's copies of plain arrays), which are what the caller must use from then on.
 */
export function readSample(x, y, dim, weights) {
  positiveInteger(dim, 'options.dim');
  const xs = numericArray(x, 'x');
  const ys = numericArray(y, 'y');
  const n = rowsOf(xs, dim, 'x', 'options.dim');
  if (n < 2) throw new KernelAttentionError('BadShape', `\`x\` must hold at least 2 rows; got ${n}`, 'x');
  if (ys.length === 0 || ys.length % n !== 0) {
    throw new KernelAttentionError('BadShape', `\`y\` must have n·D entries for n = ${n} rows of x; got length ${ys.length}`, 'y');
  }
  let ws;
  if (weights !== undefined) {
    ws = numericArray(weights, 'options.weights');
    if (ws.length !== n) {
      throw new KernelAttentionError('BadShape', `\`options.weights\` must have one entry per row of x (${n}); got length ${ws.length}`, 'options.weights');
    }
    let total = 0;
    for (let i = 0; i < n; i++) {
      if (!(ws[i] >= 0)) {
        throw new KernelAttentionError('BadArgument', `\`options.weights[${i}]\` must be >= 0; got ${ws[i]}`, 'options.weights');
      }
      total += ws[i];
    }
    if (!(total > 0)) throw new KernelAttentionError('BadArgument', '`options.weights` must not all be zero', 'options.weights');
  }
  return { n, width: ys.length / n, x: xs, y: ys, weights: ws };
}

/** The core's FitOptions for a regression call; `weights` and `bandwidth` are heap offsets (0 when absent). */
export function fitOptions({ kernel, estimator, weights = 0, bandwidth = 0, empty = 0, threads, tolerance = 0 }) {
  return {
    kernel: KERNELS.indexOf(kernel), estimator: ESTIMATORS.indexOf(estimator), bandwidth, weights, empty, threads, tolerance,
  };
}

export const APPROXIMATIONS = ['auto', 'exact', 'grid'];
// 'auto' runs on a grid from this many points on (1-D, 2-D): below it the exact O(n²) work takes well under a second.
export const AUTO_GRID_POINTS = 20000;

/**
 * Which computation runs: 'exact' or 'grid'. The grid needs one or two dimensions and a product kernel with a finite
 * reach (not Cauchy); asking for it otherwise is an error naming `name`.
 */
export function resolveApproximation(approximation, tolerance, { dim, kernel, n }, name) {
  if (METHODS.includes(approximation)) {  // kernelRegression's `method` is how to compute, not how to choose h
    throw new KernelAttentionError('BadArgument',
      `\`${name}\` is how the fit is computed (${APPROXIMATIONS.map((a) => `'${a}'`).join(', ')}); ` +
      `to choose the bandwidth by '${approximation}', pass \`bandwidth: '${approximation}'\``, name);
  }
  oneOf(approximation, APPROXIMATIONS, name);
  const tolName = name.replace(/\.[^.]*$/, '.tolerance');
  if (typeof tolerance !== 'number' || !(tolerance > 0 && tolerance < 1)) {
    throw new KernelAttentionError('BadArgument', `\`${tolName}\` must be a number strictly between 0 and 1; got ${describe(tolerance)}`, tolName);
  }
  const possible = (dim === 1 || dim === 2) && kernel !== 'cauchy';
  if (approximation === 'grid' && !possible) {
    throw new KernelAttentionError('BadArgument',
      `\`${name}\` 'grid' needs dim 1 or 2 and a kernel other than 'cauchy'; got dim ${dim}, kernel '${kernel}'`, name);
  }
  if (approximation === 'auto') return possible && n >= AUTO_GRID_POINTS ? 'grid' : 'exact';
  return approximation;
}

export function makeBandwidth(module, threads = 1) {
  function cvScore(x, y, options) {
    if (options === undefined) {
      throw new KernelAttentionError('BadArgument', '`options` is required: `{ dim, bandwidth }`', 'options');
    }
    checkOptionNames(options, ['dim', 'kernel', 'bandwidth', 'estimator', 'weights', 'approximation', 'tolerance']);
    let {
      dim, kernel = 'gaussian', bandwidth, estimator = 'nadaraya-watson', weights, approximation = 'auto', tolerance = 1e-3,
    } = options;
    const sample = readSample(x, y, dim, weights);
    const { n, width } = sample;
    [x, y, weights] = [sample.x, sample.y, sample.weights];
    oneOf(kernel, REGRESSION_KERNELS, 'options.kernel');
    oneOf(estimator, ESTIMATORS, 'options.estimator');
    const grid = resolveApproximation(approximation, tolerance, { dim, kernel, n }, 'options.approximation') === 'grid';
    if (bandwidth === undefined) throw new KernelAttentionError('BadArgument', '`options.bandwidth` is required', 'options.bandwidth');
    const h = Float64Array.from(bandwidths(bandwidth, dim, 'options.bandwidth'));
    return withHeap(module, (heap) => {
      const score = heap.alloc(8);
      const o = fitOptions({ kernel, estimator, weights: weights ? heap.f32(weights) : 0, threads, tolerance: grid ? tolerance : 0 });
      checkResult(module, { status: module._cvScore(heap.f32(x), heap.f32(y), n, dim, width, o, 0, heap.f64(h), score) });
      return heap.readF64(score, 1)[0];
    });
  }

  function selectBandwidth(x, y, options) {
    if (options === undefined) {
      throw new KernelAttentionError('BadArgument', '`options` is required: at least `{ dim }`, the number of columns of x', 'options');
    }
    checkOptionNames(options, ['dim', 'kernel', 'estimator', 'method', 'perDimension', 'weights', 'approximation', 'tolerance']);
    let {
      dim, kernel = 'gaussian', estimator = 'nadaraya-watson', method = 'cv', perDimension = false, weights,
      approximation = 'auto', tolerance = 1e-3,
    } = options;
    const sample = readSample(x, y, dim, weights);
    const { n, width } = sample;
    [x, y, weights] = [sample.x, sample.y, sample.weights];
    oneOf(kernel, REGRESSION_KERNELS, 'options.kernel');
    oneOf(estimator, ESTIMATORS, 'options.estimator');
    oneOf(method, METHODS, 'options.method');
    boolean(perDimension, 'options.perDimension');
    // Leave-one-out CV (the search, and the score reported for the rules) may run on a grid; AICc runs exactly.
    const resolved = resolveApproximation(approximation, tolerance, { dim, kernel, n }, 'options.approximation');
    const grid = resolved === 'grid' && method !== 'aicc';

    return withHeap(module, (heap) => {
      const xp = heap.f32(x);
      const yp = heap.f32(y);
      const o = fitOptions({ kernel, estimator, weights: weights ? heap.f32(weights) : 0, threads, tolerance: grid ? tolerance : 0 });
      const h = heap.alloc(dim * 8);
      const score = heap.alloc(8);
      const rule = method === 'silverman' ? 1 : 0;
      checkResult(module, { status: module._ruleOfThumb(xp, n, dim, rule, h) });
      const criterion = method === 'aicc' ? 1 : 0;
      let count = 0;
      let curveH = 0;
      let curveScore = 0;
      if (method === 'cv' || method === 'aicc') {
        curveH = heap.alloc(CURVE_CAPACITY * dim * 8);
        curveScore = heap.alloc(CURVE_CAPACITY * 8);
        const r = module._selectCv(xp, yp, n, dim, width, o, criterion, perDimension, h, score, curveH, curveScore, CURVE_CAPACITY);
        checkResult(module, r);
        count = r.count;
      } else {
        checkResult(module, { status: module._cvScore(xp, yp, n, dim, width, o, 0, h, score) });
      }
      const best = heap.readF64(score, 1)[0];
      if (count && !Number.isFinite(best)) {
        throw new KernelAttentionError('BadShape', `no bandwidth gives a finite ${method === 'aicc' ? 'AICc' : 'CV score'} ` +
          `for these ${n} points (${method === 'aicc' ? 'AICc needs more points than the fit\'s degrees of freedom + 2' :
            'some point never has another within the kernel\'s reach'}); choose a bandwidth or use a rule`, 'x');
      }
      return {
        method,
        approximation: grid ? 'grid' : 'exact',
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
