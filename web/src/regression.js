// kernelRegression(): a fitted Nadaraya–Watson or local-linear model with its bandwidth choice, predictions and
// pointwise confidence bands (docs/regression.md has the formulas).
import { tooLarge } from './attention.js';
import { fitOptions, readSample, regressionKernels, resolveApproximation } from './bandwidth.js';
import { checkResult, describe, KernelAttentionError } from './errors.js';
import { readSparseRegression, sparseFit } from './sparse.js';
import { readSpan, spanCount, spanDistances, spanScales } from './span.js';
import { CONTROL_OPTIONS, drive, nextTask, readControl, throwIfAborted } from './progress.js';
import {
  bandwidths, boolean, checkOptionNames, numericArray, oneOf, rowsOf,
} from './validate.js';
import { fitWarnings } from './warnings.js';

/**
 * The standard normal quantile Φ⁻¹(p), 0 < p < 1: Acklam's rational approximation (relative error below 1.2e-9),
 * enough for confidence levels.
 */
export function normalQuantile(p) {
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.3577518672690, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q) => (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/**
 * The model's own float32 copy of the sample (later changes to the caller's arrays do not change it), in the order
 * of the first coordinate when `sort` (the exact engine then skips the key tiles far from each query; the grid
 * needs no order).
 */
function ownCopy(x, y, weights, n, dim, width, sort) {
  const x32 = Float32Array.from(x);
  if (!sort) return { x: x32, y: Float32Array.from(y), weights: weights && Float32Array.from(weights) };
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => x32[a * dim] - x32[b * dim] || a - b);
  const data = { x: new Float32Array(n * dim), y: new Float32Array(n * width), weights: weights && new Float32Array(n) };
  order.forEach((from, to) => {
    data.x.set(x32.subarray(from * dim, (from + 1) * dim), to * dim);
    for (let c = 0; c < width; c++) data.y[to * width + c] = y[from * width + c];
    if (weights) data.weights[to] = weights[from];
  });
  return data;
}

const REGRESSION_OPTIONS = ['dim', 'kernel', 'bandwidth', 'estimator', 'weights', 'empty', 'perDimension', 'method', 'tolerance'];

/** kernelRegression() on `engine` (engine.js); `selectBandwidth` chooses the bandwidth when one is asked for by name. */
export function makeRegression(engine, threads, selectBandwidth) {
  return function kernelRegression(x, y, options) {
    const p = readRegression(engine, x, y, options, REGRESSION_OPTIONS);
    const { h, selection } = p.chosen ?? fromSelection(p, selectBandwidth(p.data.x, p.data.y, selectionOptions(p)));
    return buildModel(engine, threads, p, h, selection);
  };
}

/**
 * kernelRegressionAsync() on `engine`: kernelRegression() with the bandwidth search run by `selectBandwidthAsync`
 * (one step per criterion evaluation) and the fit summary as a last step; `options.onProgress` receives
 * `{ done, total }` steps (total is an estimate until the search ends) and `options.signal` stops it between steps.
 */
export function makeRegressionAsync(engine, threads, selectBandwidthAsync) {
  return async function kernelRegressionAsync(x, y, options) {
    const p = readRegression(engine, x, y, options, [...REGRESSION_OPTIONS, ...CONTROL_OPTIONS]);
    const { signal, onProgress } = readControl(options);
    throwIfAborted(signal);
    let steps = 0;
    let chosen = p.chosen;
    if (!chosen) {
      // The search's own last report (done === total) is left out: the summary's step follows.
      const report = onProgress && (({ done, total }) => done < total && onProgress({ done, total: total + 1 }));
      const selection = await selectBandwidthAsync(p.data.x, p.data.y, { ...selectionOptions(p), signal, onProgress: report });
      chosen = fromSelection(p, selection);
      steps = Math.max(selection.curve.scores.length, 1);
      await nextTask();
      throwIfAborted(signal);
    }
    const model = buildModel(engine, threads, p, chosen.h, chosen.selection);
    if (onProgress) onProgress({ done: steps + 1, total: steps + 1 });
    return model;
  };
}

/** Validates kernelRegression's arguments; the model's own copy of the sample; the bandwidth when it is given. */
function readRegression(engine, x, y, options, known) {
  if (options === undefined) {
    throw new KernelAttentionError('BadArgument', '`options` is required: at least `{ dim }`, the number of columns of x', 'options');
  }
  checkOptionNames(options, known);
  let {
    dim, kernel = 'gaussian', bandwidth = 'cv', estimator = 'local-linear', weights, empty = 'nan', perDimension = false,
    method = 'auto',
  } = options;
  const sample = readSample(x, y, dim, weights);
  const { n, width } = sample;
  [x, y, weights] = [sample.x, sample.y, sample.weights];
  oneOf(kernel, regressionKernels(engine), 'options.kernel');
  oneOf(estimator, engine.estimators, 'options.estimator');
  oneOf(empty, engine.emptyPolicies, 'options.empty');
  boolean(perDimension, 'options.perDimension');
  // Span bandwidths run exactly: each query has its own bandwidth, which neither the grid nor the sparse plan has.
  const span = readSpan(bandwidth, 'options.bandwidth');
  if (span !== null && method !== 'auto' && method !== 'exact') {
    throw new KernelAttentionError('BadArgument', `\`options.method\` '${method}' does not apply to span bandwidths, ` +
      "which run exactly; pass method 'auto' or 'exact'", 'options.method');
  }
  if (span !== null) method = 'exact';
  const sparse = readSparseRegression(engine, { method, dim, estimator, weights });  // searches and summaries run exactly
  const plan = resolveApproximation(engine, sparse ? 'exact' : method, options.tolerance, { dim, kernel, n }, 'options.method');
  const { method: approximation, tolerance } = plan;
  const reason = sparse ? 'sparse: asked for' : span !== null ? 'exact: span bandwidths run exactly' : plan.reason;
  let chosen = null;
  if (typeof bandwidth === 'string') oneOf(bandwidth, engine.selections, 'options.bandwidth');
  else if (span !== null) {
    chosen = {
      h: spanScales(x, n, dim),
      selection: { method: 'span', score: null, curve: { bandwidths: new Float64Array(0), scores: new Float64Array(0) } },
    };
  } else {
    chosen = {
      h: Float64Array.from(bandwidths(bandwidth, dim, 'options.bandwidth')),
      selection: { method: 'fixed', score: null, curve: { bandwidths: new Float64Array(0), scores: new Float64Array(0) } },
    };
  }
  const data = ownCopy(x, y, weights, n, dim, width, approximation === 'exact');
  return {
    n, width, dim, kernel, estimator, empty, perDimension, approximation, reason, tolerance, bandwidth, data, chosen, sparse, span,
  };
}

const selectionOptions = (p) => ({
  dim: p.dim, kernel: p.kernel, estimator: p.estimator, method: p.bandwidth, perDimension: p.perDimension,
  weights: p.data.weights, approximation: p.approximation, tolerance: p.tolerance,
});
const fromSelection = (p, chosen) => ({ h: chosen.bandwidth, selection: { method: p.bandwidth, score: chosen.score, curve: chosen.curve } });

// Multiply-adds per step of predictAsync (as attentionAsync's steps, attention.js).
const STEP_WORK = 2 ** 25;

function buildModel(engine, threads, p, h, selection) {
  const { n, width, dim, kernel, estimator, empty, approximation, tolerance, data, sparse } = p;
  let { reason } = p;
  const h32 = Float32Array.from(h);
  // Grid nodes for this bandwidth (0: the grid cannot reach the tolerance, so the model runs exactly).
  let nodes = 0;
  if (approximation === 'grid') {
    ({ nodes, reason } = engine.withHeap((heap) => engine.gridNodes(heap.f32(data.x), n, dim, fitOptions({
      kernel, estimator, bandwidth: heap.f32(h32), threads, tolerance,
    }))));
  }
  const options32 = (heap, extra = {}) => ({
    ...fitOptions({
      kernel, estimator, bandwidth: heap.f32(h32), weights: data.weights ? heap.f32(data.weights) : 0, threads,
      tolerance: nodes ? tolerance : 0, ...extra,
    }),
    queryScale: extra.queryScale ?? 0,  // span models: the heap offset of the queries' d_i (fitOptions has no field for it)
  });

  // Span bandwidths: the heap offset of query scales d_i for the I queries at qp (h_i = d_i × the column scales h).
  const { span } = p;
  const spanK = span === null ? 0 : spanCount(span, n);
  const queryScales = (heap, xp, qp, I) => spanDistances(engine, heap, { xp, n, qp, I, dim, scale32: h32, k: spanK, threads });

  const summary = engine.withHeap((heap) => {
    const sigma2 = heap.alloc(width * 8);
    const xp = heap.f32(data.x);
    const scales = span === null ? 0 : queryScales(heap, xp, xp, n);
    const r = engine.fitSummary(xp, heap.f32(data.y), n, dim, width, options32(heap, { queryScale: scales }), sigma2);
    checkResult(r);
    // For the warnings, a span fit's bandwidth is the median over the sample of each dimension's h_i.
    const median = scales && heap.readF64(scales, n).sort()[n >> 1];
    return {
      trace: r.trace, sigma2: heap.readF64(sigma2, width), guardChanged: r.guardChanged,
      typical: span === null ? h : h.map((s) => s * median),
    };
  });

  let disposed = false;
  const live = () => {
    if (disposed) throw new KernelAttentionError('Disposed', 'this kernelRegression model was disposed', 'model');
  };

  /**
   * The fit at xq as a generator of steps; `extra` asks for Σℓ², effective keys and log-denominators. On a grid,
   * `errorEstimate` is the measured error of up to 64 of the rows against exact fits, relative to the range of y (0
   * when exact). `stepwise`: exact fits run in steps of query rows (rows are independent, so the bytes are those of
   * one call), each yielding `{ done, total }` rows; a grid fit is one step (its error estimate is of the whole call).
   */
  function* fitSteps(xq, extra, stepwise) {
    live();
    xq = numericArray(xq, 'xq');
    const I = rowsOf(xq, dim, 'xq', 'options.dim');
    tooLarge(I * width, 'predict()', 'xq', 'I·D');
    const step = stepwise && !nodes ? Math.max(16, Math.round(STEP_WORK / (n * (dim + width) * (estimator === 'local-linear' ? dim + 1 : 1)) / 16) * 16) : I;
    const heap = engine.openHeap();
    try {
      const o = options32(heap, { empty });
      const mean = heap.alloc(I * width * 4);
      const sumSq = extra ? heap.alloc(I * 8) : 0;
      const eff = extra ? heap.alloc(I * 8) : 0;
      const logden = extra ? heap.alloc(I * 8) : 0;
      const error = heap.alloc(8);
      heap.setF64(error, 0);
      const [xp, yp, qp] = [heap.f32(data.x), heap.f32(data.y), heap.f32(xq)];
      const scales = span === null ? 0 : queryScales(heap, xp, qp, I);
      for (let first = 0; first < I || first === 0; first += step) {
        const count = Math.min(step, I - first);
        const at = (ptr, bytes) => (ptr ? ptr + first * bytes : 0);
        checkResult(sparse
          ? sparseFit(engine, heap, {
            xp, yp, qp: at(qp, dim * 4), n, count, dim, width, kernel, bandwidth: o.bandwidth, empty, tolerance,
            threads, mean: at(mean, width * 4), sumSq: at(sumSq, 8), eff: at(eff, 8), logden: at(logden, 8), error: extra ? error : 0,
          })
          : nodes
          ? engine.gridFit(xp, yp, qp, n, I, dim, width, o, nodes, mean, sumSq, eff, logden, extra ? error : 0)
          : engine.localFit(xp, yp, at(qp, dim * 4), n, count, dim, width, scales ? { ...o, queryScale: at(scales, 8) } : o,
            at(mean, width * 4), at(sumSq, 8), 0,
            at(eff, 8), at(logden, 8)), first);
        if (stepwise) yield { done: first + count, total: I };
        if (I === 0) break;
      }
      return {
        I,
        mean: heap.readF32(mean, I * width),
        sumSq: extra && heap.readF64(sumSq, I),
        effectiveKeys: extra && heap.readF64(eff, I),
        logDenominator: extra && heap.readF64(logden, I),
        errorEstimate: heap.readF64(error, 1)[0],
        queryScales: scales ? heap.readF64(scales, I) : null,
      };
    } finally {
      heap.free();
    }
  }

  /** Reads predictInterval's level (only a missing one defaults: null is an error). */
  function readLevel(intervalOptions, known) {
    checkOptionNames(intervalOptions, known, 'intervalOptions');
    const { level = 0.95 } = intervalOptions ?? {};
    if (typeof level !== 'number' || !(level > 0 && level < 1)) {
      throw new KernelAttentionError('BadArgument', `\`intervalOptions.level\` must be a number strictly between 0 and 1; got ${describe(level)}`,
        'intervalOptions.level');
    }
    return level;
  }

  function interval(fit, level) {
    const z = normalQuantile(0.5 + level / 2);
    const stderr = new Float32Array(fit.I * width);
    const lower = new Float32Array(fit.I * width);
    const upper = new Float32Array(fit.I * width);
    for (let i = 0; i < fit.I; i++) {
      for (let c = 0; c < width; c++) {
        const at = i * width + c;
        const s = Math.sqrt(summary.sigma2[c] * fit.sumSq[i]);
        stderr[at] = s;
        lower[at] = fit.mean[at] - z * s;
        upper[at] = fit.mean[at] + z * s;
      }
    }
    const result = {
      mean: fit.mean, lower, upper, stderr, effectiveKeys: fit.effectiveKeys, logDenominator: fit.logDenominator,
      errorEstimate: fit.errorEstimate,
    };
    if (fit.queryScales) result.bandwidths = spanBandwidths(fit.queryScales);
    return result;
  }

  /** Span models: each query's bandwidth per dimension (I × dim), d_i times the column scales. */
  const spanBandwidths = (d) => Float64Array.from({ length: d.length * dim }, (_, at) => d[Math.floor(at / dim)] * h[at % dim]);

  /**
   * ∂f/∂x at xq, exactly (grid and sparse models too), with σ² Σℓ'² as the squared standard error (local_rows.h);
   * both I × dim × width, [(i·dim + d)·width + c].
   */
  function gradient(xq) {
    live();
    if (!engine.kernel(kernel).gradient) {
      throw new KernelAttentionError('BadArgument',
        `the '${kernel}' kernel has no derivative (it is flat inside its support): fit with another kernel for gradient()`, 'kernel');
    }
    xq = numericArray(xq, 'xq');
    const I = rowsOf(xq, dim, 'xq', 'options.dim');
    tooLarge(I * dim * width, 'gradient()', 'xq', 'I·dim·D');
    return engine.withHeap((heap) => {
      const [xp, yp, qp] = [heap.f32(data.x), heap.f32(data.y), heap.f32(xq)];
      const scales = span === null ? 0 : queryScales(heap, xp, qp, I);
      const g = heap.alloc(Math.max(I * dim * width, 1) * 8);
      const ss = heap.alloc(Math.max(I * dim, 1) * 8);
      checkResult(engine.localGradient(xp, yp, qp, n, I, dim, width, options32(heap, { tolerance: 0, queryScale: scales }), g, ss, 0));
      const out = heap.readF64(g, I * dim * width);
      const sumSq = heap.readF64(ss, I * dim);
      const stderr = new Float64Array(I * dim * width);
      for (let at = 0; at < stderr.length; at++) stderr[at] = Math.sqrt(summary.sigma2[at % width] * sumSq[Math.floor(at / width)]);
      const result = { gradient: out, stderr };
      if (scales) result.bandwidths = spanBandwidths(heap.readF64(scales, I));
      return result;
    });
  }

  const model = {
    dim,
    kernel,
    estimator,
    bandwidth: span === null ? h : Object.freeze({ span, scale: h }),
    selection,
    /** What predictions run on: 'exact', or 'grid' (1-D, binned; see docs/regression.md). */
    method: sparse ? 'sparse' : nodes ? 'grid' : 'exact',
    /** Why that method runs (the core's plan, plan.h): "grid: 1-D gaussian, …". */
    reason,
    effectiveDegreesOfFreedom: summary.trace,
    residualVariance: summary.sigma2,
    warnings: fitWarnings({ ...data, n, dim, width, bandwidth: summary.typical, effectiveParameters: summary.trace, guardChanged: summary.guardChanged }),
    predict(xq) {
      return drive(fitSteps(xq, false, false), null).mean;
    },
    predictInterval(xq, intervalOptions) {
      live();
      const level = readLevel(intervalOptions, ['level']);
      return interval(drive(fitSteps(xq, true, false), null), level);
    },
    gradient,
    /** predict() in steps of query rows: `options.onProgress` gets `{ done, total }` rows, `options.signal` stops it. */
    async predictAsync(xq, options) {
      live();
      checkOptionNames(options, CONTROL_OPTIONS);
      const control = readControl(options);
      return (await drive(fitSteps(xq, false, true), control)).mean;
    },
    /** predictInterval() in steps, as predictAsync(); `intervalOptions` adds `signal` and `onProgress` to `level`. */
    async predictIntervalAsync(xq, intervalOptions) {
      live();
      const level = readLevel(intervalOptions, ['level', ...CONTROL_OPTIONS]);
      const control = readControl(intervalOptions, 'intervalOptions');
      return interval(await drive(fitSteps(xq, true, true), control), level);
    },
    dispose() {
      disposed = true;
      data.x = data.y = data.weights = null;
    },
  };
  if (typeof Symbol.dispose === 'symbol') model[Symbol.dispose] = model.dispose;
  return Object.freeze(model);
}
