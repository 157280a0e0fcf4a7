// A kernelRegression model's prediction core: its fits at a bandwidth, as the plan decides them (plan.js: exact, the
// grid where one serves the bandwidth, or sparse), over the sample resident in the wasm heap; the fit summary at its
// own sample (degrees of freedom, residual variances); span bandwidths per query. model.js assembles the model.
import { checkResult, KernelAttentionError } from './errors.js';
import { back64, coreEmpty } from './frame.js';
import { tooLarge } from './heap.js';
import { planModelFit } from './plan.js';
import { STEP_WORK } from './progress.js';
import { fitOptions } from './sample.js';
import { codedRows, discreteOptions, splitQueries } from './categories.js';
import { spanDistances, spanEnlargement, spanNeighbours } from './span.js';
import { numericArray, rowsOf } from './validate.js';

/**
 * One sparse Nadaraya–Watson pass on `heap`: `count` queries at heap offset `qp` over the model's n keys `xp` and
 * values `yp`; writes `mean` and, where their offsets are not 0, Σℓ², effective keys and log-denominators. Raises the
 * double at heap offset `error` (when not 0) to the call's error estimate (relative to the range of y). Returns the
 * core's result for checkResult().
 */
function sparseFit(
  engine,
  heap,
  {
    xp,
    yp,
    qp,
    n,
    count,
    dim,
    width,
    kernel,
    bandwidth,
    empty,
    tolerance,
    threads,
    mean,
    sumSq = 0,
    eff = 0,
    logden = 0,
    error = 0,
  },
) {
  const options = {
    kernel,
    scale: 1,
    bandwidth,
    heads: 1,
    causal: false,
    leaveOneOut: false,
    keyPadding: 0,
    generalMask: 0,
    queryGroups: 0,
    keyGroups: 0,
    empty,
  };
  const result = engine.sparseAttention({
    q: qp,
    k: xp,
    v: yp,
    out: mean,
    I: count,
    J: n,
    M: dim,
    D: width,
    options,
    tolerance,
    threads,
    dropped: 0,
    sumSq,
    eff,
    logden,
  });
  if (error && result.status === 'Ok') heap.setF64(error, Math.max(heap.getF64(error), result.errorEstimate));
  return result;
}

/**
 * Per method of a model's fits: one engine call over the rows [first, first + count) of the I queries (`a`: the call's
 * heap offsets and options, at(ptr, bytes) the offset of row `first` of an array of rows of `bytes`), and whether a
 * prediction may be cut into such steps of rows (a grid fit is one step: its error estimate is of the whole call).
 */
/** The columns of an estimator's local design (1, 1 + dim, or 1 + dim + dim(dim + 1)/2): the work per key of a row. */
const designColumns = (estimator, dim) =>
  estimator === 'nadaraya-watson' ? 1 : estimator === 'local-linear' ? 1 + dim : 1 + dim + (dim * (dim + 1)) / 2;

// The arguments of an exact fit of the rows [first, first + count) over the model's sample (FITS).
const exactCall = (m, a, at) => ({
  x: m.xr,
  y: m.yr,
  q: at(a.qp, m.dim * 4),
  n: m.n,
  I: a.count,
  dim: m.dim,
  width: m.width,
  options: { ...a.options, queryScale: at(a.scales, 8), queryCategories: at(a.codes, 4 * m.count) },
  mean: at(a.mean, m.width * 4),
  sumSq: at(a.sumSq, 8),
  eff: at(a.eff, 8),
  logden: at(a.logden, 8),
});

const FITS = {
  exact: { stepwise: true, run: (m, a, at) => m.engine.localFit(exactCall(m, a, at)) },
  // Mixed data on the grid: the core bins every group over the whole sample per call (mixed.h), so one step.
  mixedGrid: { stepwise: false, run: (m, a, at) => m.engine.localFit(exactCall(m, a, at)) },
  // A model planned on the grid at a bandwidth no grid serves: the exact fit over the grid model's sample, sorted once.
  sorted: {
    stepwise: true,
    run: (m, a, at) => m.engine.gridModelFit({ ...exactCall(m, a, at), model: m.gridModel(), nodes: 0, error: 0 }),
  },
  sparse: {
    stepwise: true,
    run: (m, a, at) =>
      sparseFit(m.engine, a.heap, {
        xp: m.xr,
        yp: m.yr,
        qp: at(a.qp, m.dim * 4),
        n: m.n,
        count: a.count,
        dim: m.dim,
        width: m.width,
        kernel: m.kernel,
        bandwidth: a.options.bandwidth,
        empty: a.options.empty,
        tolerance: m.tolerance,
        threads: m.threads,
        mean: at(a.mean, m.width * 4),
        sumSq: at(a.sumSq, 8),
        eff: at(a.eff, 8),
        logden: at(a.logden, 8),
        error: a.error,
      }),
  },
  grid: {
    stepwise: false,
    run: (m, a) =>
      m.engine.gridModelFit({
        model: m.gridModel(),
        x: m.xr,
        y: m.yr,
        q: a.qp,
        n: m.n,
        I: a.I,
        dim: m.dim,
        width: m.width,
        options: a.options,
        nodes: m.fit.nodes,
        mean: a.mean,
        sumSq: a.sumSq,
        eff: a.eff,
        logden: a.logden,
        error: a.error,
      }),
  },
};

/**
 * The fits of model `p` (regression.js) at bandwidth h over its resident sample `store` (heap.js resident()):
 * { fit ({ method, reason, nodes, gridTolerance }: what its fits run on, plan.js planModelFit), fitSteps, summarize,
 * options32, queryScales, spanBandwidths, live, … }. `live()` throws once `disposed` is set (model.js sets it).
 */
export function modelFits({ engine, threads }, p, h, store) {
  const { n, width, dim, kernel, estimator, empty, frame, span, mixed } = p;
  const [xr, yr, wr, cr] = store.offsets;
  const h32 = Float32Array.from(h);
  const m = { engine, threads, n, width, dim, kernel, estimator, frame, span, xr, yr, wr, h, h32 };
  // Mixed data (categories.js): `dim` counts the continuous columns; the sample's levels are resident at cr, and λ
  // is p.lambda. userDim: the columns of x as the caller gives them.
  Object.assign(m, { mixed, count: mixed ? mixed.count : 0, lambda: p.lambda, userDim: p.userDim ?? dim });
  m.tolerance = p.plan.tolerance;
  m.fit = planModelFit(engine, p.plan, { xp: xr, n, dim, kernel, estimator, h32, threads, mixed: !!mixed });
  const fits = mixed
    ? m.fit.nodes
      ? FITS.mixedGrid
      : FITS.exact
    : m.fit.onGridModel && !m.fit.nodes
      ? FITS.sorted
      : FITS[m.fit.method];
  m.disposed = false;
  m.live = () => {
    if (m.disposed) throw new KernelAttentionError('Disposed', 'this kernelRegression model was disposed', 'model');
  };
  /** The engine's FitOptions at h (`extra` overrides or adds fields: empty, tolerance, queryScale). */
  m.options32 = (heap, extra = {}) => ({
    ...fitOptions({
      kernel,
      estimator,
      bandwidth: heap.f32(h32),
      weights: wr,
      threads,
      tolerance: m.fit.gridTolerance,
      discrete: discreteOptions(engine, heap, mixed, { codes: cr, lambda: p.lambda }),
      ...extra,
    }),
    queryScale: extra.queryScale ?? 0, // span models: the heap offset of the queries' d_i (fitOptions has no field for it)
    queryCategories: extra.queryCategories ?? 0, // mixed data: the heap offset of the queries' levels
  });
  /** The queries xq (user layout) as the model's fits take them: { I, x (continuous columns), codes (or null) }. */
  m.queries = (xq, name = 'xq') => {
    if (mixed) return splitQueries(mixed, xq, name);
    const x = numericArray(xq, name);
    return { I: rowsOf(x, dim, name, 'options.dim'), x, codes: null };
  };
  /** The queries xq in the user's layout with labels replaced by their codes (what a model fitted on codes takes). */
  m.codedQueries = (xq) => {
    if (!mixed) return xq;
    const q = splitQueries(mixed, xq);
    return codedRows(mixed, q.x, q.codes, q.I);
  };

  // The grid (methods/grid/model.h) over the resident sample, made by the first grid fit and shared by every model on
  // it: it keeps the sample's bins (re-binned only for a bandwidth they do not serve) and the moments of the last
  // bandwidth, so a prediction after withBandwidth re-convolves instead of re-binning.
  m.gridModel = () => {
    if (!store.grid) {
      const handle = engine.gridModelCreate({ x: xr, y: yr, n, dim, width, weights: wr });
      if (!handle) throw new KernelAttentionError('OutOfMemory', 'could not allocate a grid model');
      store.grid = handle;
      store.attach(() => engine.gridModelFree({ model: handle }));
    }
    return store.grid;
  };

  // Span bandwidths: the heap offset of query scales d_i for the I queries at qp (h_i = d_i × the column scales h).
  m.spanK = span === null ? 0 : spanNeighbours(span, n, estimator, dim);
  const enlarge = span === null ? 1 : spanEnlargement(span);
  m.queryScales = (heap, xp, qp, I) =>
    spanDistances(engine, heap, { xp, n, qp, I, dim, scale32: h32, k: m.spanK, enlarge, threads });
  /** Span models: each query's bandwidth per dimension (I × dim), d_i times the column scales. */
  m.spanBandwidths = (d) =>
    Float64Array.from({ length: d.length * dim }, (_, at) => d[Math.floor(at / dim)] * h[at % dim]);

  /**
   * The fit at its own sample: degrees of freedom, residual variances, the warnings' typical bandwidth; computed on
   * first use (a model made by withBandwidth then pays for its predictions only, until it is asked for).
   */
  let summary = null;
  m.summarize = () => {
    if (summary) return summary;
    m.live();
    summary = fitSummary();
    return summary;
  };
  const fitSummary = () =>
    engine.withHeap((heap) => {
      const sigma2 = heap.alloc(width * 8);
      const scales = span === null ? 0 : m.queryScales(heap, xr, xr, n);
      const options = m.options32(heap, { queryScale: scales });
      const call = { x: xr, y: yr, n, dim, width, options, sigma2 };
      const r =
        fits === FITS.sorted ? engine.gridModelSummary({ ...call, model: m.gridModel() }) : engine.fitSummary(call);
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

  /**
   * The fit at xq as a generator of steps; `extra` asks for Σℓ², effective keys and log-denominators. On a grid,
   * `errorEstimate` is the measured error of up to 64 of the rows against exact fits, relative to the range of y (0
   * when exact). `stepwise`: fits that allow it run in steps of query rows (rows are independent, so the bytes are
   * those of one call), each yielding `{ done, total }` rows.
   */
  m.fitSteps = function* fitSteps(xq, extra, stepwise, emptyPolicy = empty) {
    m.live();
    const queries = m.queries(xq);
    const { I } = queries;
    xq = queries.x;
    tooLarge(I * width, 'predict()', 'xq', 'I·D');
    const perRow = n * (dim + width) * designColumns(estimator, dim);
    const step = stepwise && fits.stepwise ? Math.max(16, Math.round(STEP_WORK / perRow / 16) * 16) : I;
    const heap = engine.openHeap();
    try {
      const a = { heap, I, options: m.options32(heap, { empty: coreEmpty(emptyPolicy, frame.y) }) };
      a.mean = heap.alloc(I * width * 4);
      [a.sumSq, a.eff, a.logden] = extra ? [heap.alloc(I * 8), heap.alloc(I * 8), heap.alloc(I * 8)] : [0, 0, 0];
      const error = heap.alloc(8);
      heap.setF64(error, 0);
      a.error = extra ? error : 0;
      a.qp = heap.f32Shifted(xq, dim, frame.x);
      a.codes = queries.codes ? heap.i32(queries.codes) : 0;
      a.scales = span === null ? 0 : m.queryScales(heap, xr, a.qp, I);
      for (let first = 0; first < I || first === 0; first += step) {
        a.count = Math.min(step, I - first);
        checkResult(
          fits.run(m, a, (ptr, bytes) => (ptr ? ptr + first * bytes : 0)),
          first,
        );
        if (stepwise) yield { done: first + a.count, total: I };
        if (I === 0) break;
      }
      return {
        I,
        mean: back64(heap.readF32(a.mean, I * width), width, frame.y, emptyPolicy), // in y's units, in double
        sumSq: extra && heap.readF64(a.sumSq, I),
        effectiveKeys: extra && heap.readF64(a.eff, I),
        logDenominator: extra && heap.readF64(a.logden, I),
        errorEstimate: heap.readF64(error, 1)[0],
        queryScales: a.scales ? heap.readF64(a.scales, I) : null,
      };
    } finally {
      heap.free();
    }
  };
  return m;
}
