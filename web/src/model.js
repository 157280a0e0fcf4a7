// The kernelRegression model: its sample resident in the wasm heap, predictions, bands, derivatives, robust refits
// and withBandwidth (docs/regression.md, "Model lifetime and bandwidth changes"). regression.js reads the options and
// chooses the bandwidth; the local variance smoother is itself a kernelRegression, hence the import back.
import { tooLarge } from './attention.js';
import { fitOptions } from './bandwidth.js';
import { checkResult, describe, KernelAttentionError } from './errors.js';
import { sparseFit } from './sparse.js';
import { robustSteps } from './robust.js';
import { localVarianceAt, logSquaredResiduals, VARIANCE_FLOOR, varianceScale } from './variance.js';
import { spanCount, spanDistances } from './span.js';
import { CONTROL_OPTIONS, drive, readControl } from './progress.js';
import { bandwidths, checkOptionNames, numericArray, oneOf, rowsOf } from './validate.js';
import { fitWarnings, medianSpacing, precisionWarnings } from './warnings.js';
import { makeRegression, makeRegressionAsync } from './regression.js';
import { back64, coreEmpty, shifted32 } from './frame.js';

/**
 * The standard normal quantile Φ⁻¹(p), 0 < p < 1: Acklam's rational approximation (relative error below 1.2e-9),
 * enough for confidence levels.
 */
function normalQuantile(p) {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q) =>
    (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
  );
}

/**
 * The model's own float32 copy of the sample in its frame (x and y minus `frame`'s shifts, frame.js; later changes to
 * the caller's arrays do not change it), in the order of the first coordinate when `sort` (the exact engine then
 * skips the key tiles far from each query; the grid needs no order).
 */
export function ownCopy(x, y, weights, n, dim, width, sort, frame) {
  const x32 = shifted32(x, dim, frame.x);
  if (!sort) return { x: x32, y: shifted32(y, width, frame.y), weights: weights && Float32Array.from(weights) };
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => x32[a * dim] - x32[b * dim] || a - b);
  const data = {
    x: new Float32Array(n * dim),
    y: new Float32Array(n * width),
    weights: weights && new Float32Array(n),
  };
  order.forEach((from, to) => {
    data.x.set(x32.subarray(from * dim, (from + 1) * dim), to * dim);
    for (let c = 0; c < width; c++) data.y[to * width + c] = y[from * width + c] - (frame.y ? frame.y[c] : 0);
    if (weights) data.weights[to] = weights[from];
  });
  return data;
}

/**
 * `p` refitted with Cleveland's bisquare robustness weights (robust.js) when options.robust asks for them, on the
 * bandwidth already chosen (a search is not rerun on the reweighted data), as a generator for drive(): every step is
 * a model of buildModel at the final bandwidth, predicted at its own sample. Returns `p` with the final weights
 * (observation weight × robustness weight) in its data copy and `robustnessWeights` (n, input order).
 */
export function* robustFit(engine, threads, p, h, selection, searches) {
  if (!p.robust) return p;
  const { n, dim, width, sample } = p;
  const reweighted = (weights) => ({
    ...p,
    fitWeights: weights,
    data: ownCopy(sample.x, sample.y, weights, n, dim, width, p.approximation === 'exact', p.frame),
  });
  // A point the fit cannot reach (compact kernel, its own weight 0) gets NaN, not the empty policy's value or error.
  const fit = (weights) => {
    const model = buildModel(engine, threads, { ...reweighted(weights), empty: 'nan' }, h, selection, searches);
    try {
      return model.predict(sample.x);
    } finally {
      model.dispose();
    }
  };
  const r = yield* robustSteps(fit, sample.y, p.fitWeights, p.robust.iterations);
  // observationWeights: the weights before robustness, for a refit at another bandwidth (withBandwidth).
  return { ...reweighted(r.weights), robustnessWeights: r.robustnessWeights, observationWeights: p.fitWeights };
}

/**
 * The rows of `sample` ({ x, y }, input order) with a positive weight and a finite fitted value, with those fitted
 * values and weights: { x, y, fitted, weights (undefined when all weights are 1), n }.
 */
function positiveRows(sample, fitted, weights, n, dim, width) {
  const keep = [];
  for (let j = 0; j < n; j++) {
    let finite = true;
    for (let c = 0; c < width; c++) finite &&= Number.isFinite(fitted[j * width + c]);
    if (finite && (!weights || weights[j] > 0)) keep.push(j);
  }
  if (keep.length === n) return { x: sample.x, y: sample.y, fitted, weights, n };
  const rows = (a, cols) => {
    const out = new Float64Array(keep.length * cols);
    keep.forEach((j, k) => out.set(a.subarray(j * cols, (j + 1) * cols), k * cols));
    return out;
  };
  return {
    x: rows(sample.x, dim),
    y: rows(sample.y, width),
    fitted: rows(Float64Array.from(fitted), width),
    weights: weights && rows(weights, 1),
    n: keep.length,
  };
}

// Multiply-adds per step of predictAsync (as attentionAsync's steps, attention.js).
const STEP_WORK = 2 ** 25;

// The safety net for models dropped without dispose(): gives back their resident sample when the model is collected.
// dispose() is the way (collection may come late, or never, while the heap stays full).
const collected =
  typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((store) => store.release()) : null;
const NO_CURVE = () => ({ bandwidths: new Float64Array(0), scores: new Float64Array(0) });

/**
 * The model of `p` at bandwidth h. Its sample (p.data) is copied into the wasm heap once, as a resident copy that
 * every call reads; `shared` ({ store, spacings, precision }, from withBandwidth) reuses another model's copy (one
 * more owner: disposing either model keeps the other working) and what the warnings read from the sample.
 */
export function buildModel(engine, threads, p, h, selection, searches, shared = null) {
  const { data } = p;
  const store = shared?.store ?? engine.resident([data.x, data.y, data.weights]);
  if (shared?.store) store.retain();
  try {
    const spacings =
      shared?.spacings ?? Float64Array.from({ length: p.dim }, (_, d) => medianSpacing(data.x, p.n, p.dim, d));
    const precision =
      shared?.precision ??
      precisionWarnings([
        [p.stored?.x, p.dim, 'x'],
        [p.stored?.y, p.width, 'y'],
      ]);
    return residentModel(engine, threads, p, h, selection, searches, { store, spacings, precision }, !!shared);
  } catch (e) {
    store.release();
    throw e;
  }
}

/** buildModel's model on its resident sample `shared.store`; `lazySummary`: the summary waits for its first read. */
function residentModel(engine, threads, p, h, selection, searches, shared, lazySummary) {
  const { n, width, dim, kernel, estimator, empty, approximation, tolerance, sparse, frame } = p;
  // What the closures below keep (not `p`, whose `stored` holds the caller's own arrays, nor its data: both must not
  // stay alive; the sample lives in the heap, at `xr`, `yr` and `wr`).
  let { sample, fitWeights } = p;
  let { reason } = p;
  const base = { ...p, data: null, stored: null };
  const { store } = shared;
  const [xr, yr, wr] = store.offsets;
  const h32 = Float32Array.from(h);
  // Grid nodes for this bandwidth (0: the grid cannot reach the tolerance, so the model runs exactly).
  let nodes = 0;
  if (approximation === 'grid') {
    ({ nodes, reason } = engine.withHeap((heap) =>
      engine.gridNodes(
        xr,
        n,
        dim,
        fitOptions({
          kernel,
          estimator,
          bandwidth: heap.f32(h32),
          threads,
          tolerance,
        }),
      ),
    ));
  }
  const options32 = (heap, extra = {}) => ({
    ...fitOptions({
      kernel,
      estimator,
      bandwidth: heap.f32(h32),
      weights: wr,
      threads,
      tolerance: nodes ? tolerance : 0,
      ...extra,
    }),
    queryScale: extra.queryScale ?? 0, // span models: the heap offset of the queries' d_i (fitOptions has no field for it)
  });

  // The grid (methods/grid/model.h) over the resident sample, made by the first grid fit and shared by every model on
  // it: it keeps the sample's bins (re-binned only for a bandwidth they do not serve) and the moments of the last
  // bandwidth, so a prediction after withBandwidth re-convolves instead of re-binning.
  const gridModel = () => {
    if (!store.grid) {
      const handle = engine.gridModelCreate(xr, yr, n, dim, width, wr);
      if (!handle) throw new KernelAttentionError('OutOfMemory', 'could not allocate a grid model');
      store.grid = handle;
      store.attach(() => engine.gridModelFree(handle));
    }
    return store.grid;
  };

  // Span bandwidths: the heap offset of query scales d_i for the I queries at qp (h_i = d_i × the column scales h).
  const { span } = p;
  const spanK = span === null ? 0 : spanCount(span, n);
  const queryScales = (heap, xp, qp, I) =>
    spanDistances(engine, heap, { xp, n, qp, I, dim, scale32: h32, k: spanK, threads });

  // The fit at its own sample: degrees of freedom, residual variances, the warnings' counts. A model made by
  // withBandwidth computes it on first use (a bandwidth slider then pays for its predictions only).
  let summaryOnce = null;
  const summarize = () => {
    if (summaryOnce) return summaryOnce;
    live();
    summaryOnce = fitSummaryOf();
    return summaryOnce;
  };
  const fitSummaryOf = () =>
    engine.withHeap((heap) => {
      const sigma2 = heap.alloc(width * 8);
      const xp = xr;
      const scales = span === null ? 0 : queryScales(heap, xp, xp, n);
      const r = engine.fitSummary(xp, yr, n, dim, width, options32(heap, { queryScale: scales }), sigma2);
      checkResult(r);
      // For the warnings, a span fit's bandwidth is the median over the sample of each dimension's h_i.
      const median = scales && heap.readF64(scales, n).sort()[n >> 1];
      return {
        trace: r.trace,
        sigma2: heap.readF64(sigma2, width),
        guardChanged: r.guardChanged,
        typical: span === null ? h : h.map((s) => s * median),
      };
    });

  let disposed = false;
  let warnings = null;
  if (!lazySummary) summaryOnce = fitSummaryOf();
  const live = () => {
    if (disposed) throw new KernelAttentionError('Disposed', 'this kernelRegression model was disposed', 'model');
  };

  /**
   * The fit at xq as a generator of steps; `extra` asks for Σℓ², effective keys and log-denominators. On a grid,
   * `errorEstimate` is the measured error of up to 64 of the rows against exact fits, relative to the range of y (0
   * when exact). `stepwise`: exact fits run in steps of query rows (rows are independent, so the bytes are those of
   * one call), each yielding `{ done, total }` rows; a grid fit is one step (its error estimate is of the whole call).
   */
  function* fitSteps(xq, extra, stepwise, emptyPolicy = empty) {
    live();
    xq = numericArray(xq, 'xq');
    const I = rowsOf(xq, dim, 'xq', 'options.dim');
    tooLarge(I * width, 'predict()', 'xq', 'I·D');
    const step =
      stepwise && !nodes
        ? Math.max(
            16,
            Math.round(STEP_WORK / (n * (dim + width) * (estimator === 'local-linear' ? dim + 1 : 1)) / 16) * 16,
          )
        : I;
    const heap = engine.openHeap();
    try {
      const o = options32(heap, { empty: coreEmpty(emptyPolicy, frame.y) });
      const mean = heap.alloc(I * width * 4);
      const sumSq = extra ? heap.alloc(I * 8) : 0;
      const eff = extra ? heap.alloc(I * 8) : 0;
      const logden = extra ? heap.alloc(I * 8) : 0;
      const error = heap.alloc(8);
      heap.setF64(error, 0);
      const [xp, yp, qp] = [xr, yr, heap.f32Shifted(xq, dim, frame.x)];
      const scales = span === null ? 0 : queryScales(heap, xp, qp, I);
      for (let first = 0; first < I || first === 0; first += step) {
        const count = Math.min(step, I - first);
        const at = (ptr, bytes) => (ptr ? ptr + first * bytes : 0);
        checkResult(
          sparse
            ? sparseFit(engine, heap, {
                xp,
                yp,
                qp: at(qp, dim * 4),
                n,
                count,
                dim,
                width,
                kernel,
                bandwidth: o.bandwidth,
                empty: coreEmpty(emptyPolicy, frame.y),
                tolerance,
                threads,
                mean: at(mean, width * 4),
                sumSq: at(sumSq, 8),
                eff: at(eff, 8),
                logden: at(logden, 8),
                error: extra ? error : 0,
              })
            : nodes
              ? engine.gridModelFit(
                  gridModel(),
                  xp,
                  yp,
                  qp,
                  n,
                  I,
                  dim,
                  width,
                  o,
                  nodes,
                  mean,
                  sumSq,
                  eff,
                  logden,
                  extra ? error : 0,
                )
              : engine.localFit(
                  xp,
                  yp,
                  at(qp, dim * 4),
                  n,
                  count,
                  dim,
                  width,
                  scales ? { ...o, queryScale: at(scales, 8) } : o,
                  at(mean, width * 4),
                  at(sumSq, 8),
                  0,
                  at(eff, 8),
                  at(logden, 8),
                ),
          first,
        );
        if (stepwise) yield { done: first + count, total: I };
        if (I === 0) break;
      }
      return {
        I,
        mean: back64(heap.readF32(mean, I * width), width, frame.y, emptyPolicy), // in y's units, in double
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
      throw new KernelAttentionError(
        'BadArgument',
        `\`intervalOptions.level\` must be a number strictly between 0 and 1; got ${describe(level)}`,
        'intervalOptions.level',
      );
    }
    return level;
  }

  /** Reads predictInterval's variance: 'global' (one σ̂² per column, the default) or 'local' (σ²(x), variance.js). */
  const readVariance = ({ variance = 'global' } = {}) =>
    oneOf(variance, ['global', 'local'], 'intervalOptions.variance');

  // The local variance estimate (variance.js), made on first use: the variance smoother (a local-linear
  // kernelRegression of the log squared residuals on x, its bandwidth chosen by leave-one-out CV) and its scale.
  let variance = null;
  const varianceSample = () => {
    // The points of weight 0 (given, or rejected by robustness) take no part; the fit may not reach them (NaN).
    const fitted = drive(fitSteps(sample.x, false, false, 'nan'), null).mean;
    const s = positiveRows(sample, fitted, fitWeights, n, dim, width);
    return {
      ...s,
      z: logSquaredResiduals(s.y, s.fitted, summarize().sigma2, s.n, width),
      options: { dim, kernel, estimator: 'local-linear', bandwidth: 'cv', ...(s.weights && { weights: s.weights }) },
    };
  };
  const keepVariance = (smoother, s) => {
    const scale = varianceScale(smoother.predict(s.x), s.weights, summarize().sigma2, s.n, width);
    variance = {
      smoother,
      scale,
      info: Object.freeze({
        bandwidth: smoother.bandwidth,
        selection: smoother.selection,
        effectiveDegreesOfFreedom: smoother.effectiveDegreesOfFreedom,
        warnings: smoother.warnings,
        scale: Float64Array.from(scale),
        floor: summarize().sigma2.map((s) => VARIANCE_FLOOR * s),
      }),
    };
    return variance;
  };
  const localVariance = () => {
    live();
    if (variance) return variance;
    const s = varianceSample();
    return keepVariance(
      makeRegression(engine, threads, searches.selectBandwidth, searches.selectBandwidthAsync)(s.x, s.z, s.options),
      s,
    );
  };
  const localVarianceAsync = async (signal) => {
    live();
    if (variance) return variance;
    const s = varianceSample();
    const smoother = await makeRegressionAsync(
      engine,
      threads,
      searches.selectBandwidthAsync,
      searches.selectBandwidth,
    )(s.x, s.z, { ...s.options, signal });
    live();
    if (variance) {
      // another call estimated it meanwhile
      smoother.dispose();
      return variance;
    }
    return keepVariance(smoother, s);
  };
  // σ²(q) per query row and column, I × width.
  const varianceAt = (v, xq) => localVarianceAt(v.smoother.predict(xq), v.scale, summarize().sigma2, width);

  function interval(fit, level, local) {
    const z = normalQuantile(0.5 + level / 2);
    const stderr = new Float64Array(fit.I * width);
    const lower = new Float64Array(fit.I * width);
    const upper = new Float64Array(fit.I * width);
    for (let i = 0; i < fit.I; i++) {
      for (let c = 0; c < width; c++) {
        const at = i * width + c;
        const s = Math.sqrt((local ? local[at] : summarize().sigma2[c]) * fit.sumSq[i]);
        stderr[at] = s;
        lower[at] = fit.mean[at] - z * s;
        upper[at] = fit.mean[at] + z * s;
      }
    }
    const result = {
      mean: fit.mean,
      lower,
      upper,
      stderr,
      effectiveKeys: fit.effectiveKeys,
      logDenominator: fit.logDenominator,
      errorEstimate: fit.errorEstimate,
    };
    if (fit.queryScales) result.bandwidths = spanBandwidths(fit.queryScales);
    return result;
  }

  /** Span models: each query's bandwidth per dimension (I × dim), d_i times the column scales. */
  const spanBandwidths = (d) =>
    Float64Array.from({ length: d.length * dim }, (_, at) => d[Math.floor(at / dim)] * h[at % dim]);

  /**
   * ∂f/∂x at xq, exactly (grid and sparse models too), with σ² Σℓ'² as the squared standard error (local_rows.h);
   * both I × dim × width, [(i·dim + d)·width + c].
   */
  function gradient(xq) {
    live();
    if (!engine.kernel(kernel).gradient) {
      throw new KernelAttentionError(
        'BadArgument',
        `the '${kernel}' kernel has no derivative (it is flat inside its support): fit with another kernel for gradient()`,
        'kernel',
      );
    }
    xq = numericArray(xq, 'xq');
    const I = rowsOf(xq, dim, 'xq', 'options.dim');
    tooLarge(I * dim * width, 'gradient()', 'xq', 'I·dim·D');
    return engine.withHeap((heap) => {
      const [xp, yp, qp] = [xr, yr, heap.f32Shifted(xq, dim, frame.x)];
      const scales = span === null ? 0 : queryScales(heap, xp, qp, I);
      const g = heap.alloc(Math.max(I * dim * width, 1) * 8);
      const ss = heap.alloc(Math.max(I * dim, 1) * 8);
      const o = options32(heap, { tolerance: 0, queryScale: scales });
      // A grid model keeps its sample sorted for the rows beyond the grid: each query reads the keys in its reach.
      checkResult(
        nodes
          ? engine.gridModelGradient(gridModel(), xp, yp, qp, n, I, dim, width, o, g, ss, 0)
          : engine.localGradient(xp, yp, qp, n, I, dim, width, o, g, ss, 0),
      );
      const out = heap.readF64(g, I * dim * width);
      const sumSq = heap.readF64(ss, I * dim);
      const stderr = new Float64Array(I * dim * width);
      for (let at = 0; at < stderr.length; at++)
        stderr[at] = Math.sqrt(summarize().sigma2[at % width] * sumSq[Math.floor(at / width)]);
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
    get effectiveDegreesOfFreedom() {
      return summarize().trace;
    },
    get residualVariance() {
      return summarize().sigma2;
    },
    /** Bisquare robustness weights of the final fit (n, input order) with options.robust; else null. */
    robustnessWeights: p.robustnessWeights,
    /**
     * The local variance estimate of predictInterval's variance: 'local' ({ bandwidth, selection,
     * effectiveDegreesOfFreedom, warnings, scale, floor }), made by the first such call; null before (and after dispose).
     */
    get localVariance() {
      return variance?.info ?? null;
    },
    get warnings() {
      warnings ??= fitWarnings({
        n,
        dim,
        width,
        bandwidth: summarize().typical,
        effectiveParameters: summarize().trace,
        guardChanged: summarize().guardChanged,
        spacings: shared.spacings,
        precision: shared.precision,
      });
      return warnings;
    },
    predict(xq) {
      return drive(fitSteps(xq, false, false), null).mean;
    },
    predictInterval(xq, intervalOptions) {
      live();
      const level = readLevel(intervalOptions, ['level', 'variance']);
      const local = readVariance(intervalOptions) === 'local';
      const fit = drive(fitSteps(xq, true, false), null);
      return interval(fit, level, local ? varianceAt(localVariance(), xq) : null);
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
      const level = readLevel(intervalOptions, ['level', 'variance', ...CONTROL_OPTIONS]);
      const local = readVariance(intervalOptions) === 'local';
      const control = readControl(intervalOptions, 'intervalOptions');
      const fit = await drive(fitSteps(xq, true, true), control);
      return interval(fit, level, local ? varianceAt(await localVarianceAsync(control.signal), xq) : null);
    },
    /**
     * The model at another (fixed) bandwidth, as kernelRegression with `bandwidth: h` and this model's other options
     * would fit it, sharing this model's copy of the sample in the wasm heap (each model still needs its dispose()).
     * Its summary (degrees of freedom, residual variance, warnings) is computed on first use. A robust model's
     * robustness weights are refitted at h (on a copy of its own).
     */
    withBandwidth(h) {
      live();
      const fixed = Float64Array.from(bandwidths(h, dim, 'h'));
      const selection = { rule: 'fixed', score: null, curve: NO_CURVE() };
      const next = { ...base, span: null };
      const { spacings, precision } = shared;
      if (!base.robust) return buildModel(engine, threads, next, fixed, selection, searches, shared);
      const start = { ...next, fitWeights: base.observationWeights, robustnessWeights: null };
      const fitted = drive(robustFit(engine, threads, start, fixed, selection, searches), null);
      return buildModel(engine, threads, fitted, fixed, selection, searches, { spacings, precision });
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      collected?.unregister(token);
      store.release();
      sample = fitWeights = null;
      variance?.smoother.dispose();
      variance = null;
    },
  };
  if (typeof Symbol.dispose === 'symbol') model[Symbol.dispose] = model.dispose;
  const token = {};
  collected?.register(model, store, token);
  return Object.freeze(model);
}
