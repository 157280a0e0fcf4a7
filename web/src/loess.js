// loess(x, y, options): R's loess() as a model with R's statistics, predictions and standard errors
// (cpp/core/stats/loess/loess.h has the method; docs/regression.md, "loess (R's loess)").
import { checkResult, fail, KernelAttentionError } from './errors.js';
import { MAX_WASM_BYTES } from './heap.js';
import { boolean, checkOptionNames, numericArray, oneOf, rowsOf } from './validate.js';

const OPTIONS = [
  'dim',
  'span',
  'degree',
  'family',
  'surface',
  'normalize',
  'iterations',
  'cell',
  'weights',
  'statistics',
  'traceHat',
];

// The local design's columns per degree (R's tau for the statistics uses the same count).
const columns = (degree, dim) => (degree === 0 ? 1 : degree === 1 ? dim + 1 : ((dim + 1) * (dim + 2)) / 2);

/** The options after their checks, with R's defaults. */
function readOptions(options) {
  const o = checkOptionNames(options, OPTIONS);
  const {
    dim = 1,
    span = 0.75,
    degree = 2,
    family = 'gaussian',
    surface = 'interpolate',
    normalize = true,
    iterations = 4,
    cell = 0.2,
    statistics = 'approximate',
    traceHat = 'exact',
  } = o;
  if (!Number.isInteger(dim) || dim < 1 || dim > 4) fail('BadArgument', 'options.dim', 'an integer from 1 to 4', dim);
  if (typeof span !== 'number' || !(span > 0 && span < Infinity))
    fail('BadArgument', 'options.span', 'a finite number > 0', span);
  oneOf(degree, [0, 1, 2], 'options.degree');
  oneOf(family, ['gaussian', 'symmetric'], 'options.family');
  oneOf(surface, ['interpolate', 'direct'], 'options.surface');
  boolean(normalize, 'options.normalize');
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > 1000)
    fail('BadArgument', 'options.iterations', 'an integer from 1 to 1000', iterations);
  if (typeof cell !== 'number' || !(cell > 0 && cell < Infinity))
    fail('BadArgument', 'options.cell', 'a finite number > 0', cell);
  oneOf(statistics, ['approximate', 'exact', 'none'], 'options.statistics');
  oneOf(traceHat, ['exact', 'approximate'], 'options.traceHat');
  return { dim, span, degree, family, surface, normalize, iterations, cell, statistics, traceHat };
}

/** The checked inputs: x (n × dim), y (n) and the weights (n positive values, or null) as Float64Arrays. */
function readData(x, y, weights, dim) {
  const xs = Float64Array.from(numericArray(x, 'x'));
  const n = rowsOf(xs, dim, 'x', 'options.dim');
  if (n < 1) fail('BadShape', 'x', 'at least one point', x);
  // A model keeps about (dim + 8) doubles per point and a fit needs as much again.
  if (2 * (dim + 8) * 8 * n > MAX_WASM_BYTES) {
    throw new KernelAttentionError(
      'OutOfMemory',
      `\`x\` has ${n} points; loess() in ${dim}-D needs about ${2 * (dim + 8)} doubles per point, beyond the 2 GiB ` +
        'WebAssembly memory',
      'x',
    );
  }
  const ys = Float64Array.from(numericArray(y, 'y'));
  if (ys.length !== n) fail('BadShape', 'y', `one value per point of \`x\` (${n})`, y);
  let ws = null;
  if (weights !== undefined) {
    ws = Float64Array.from(numericArray(weights, 'options.weights'));
    if (ws.length !== n) fail('BadShape', 'options.weights', `one weight per point of \`x\` (${n})`, weights);
    const bad = ws.findIndex((w) => !(w >= 0));
    if (bad >= 0) {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.weights\` must be numbers ≥ 0; got ${ws[bad]} at index ${bad}`,
        'options.weights',
      );
    }
    if (!ws.some((w) => w > 0)) fail('BadArgument', 'options.weights', 'numbers ≥ 0, not all 0', weights);
  }
  return { xs, ys, ws, n };
}

/** The error for a fit the core refused after validation passed. */
function fitError(result, o, n) {
  const q = Math.min(n, Math.floor(n * o.span));
  if (result.problem === 'spanTooSmall') spanTooSmall(o, n, q);
  if (result.problem === 'zeroWidth') {
    throw new KernelAttentionError(
      'BadArgument',
      `\`options.span\` gives ${q} points per fit, and at least that many points share one location (R's ` +
        `"zero-width neighborhood"); use a larger span`,
      'options.span',
    );
  }
  if (result.status === 'BadShape' && o.normalize && o.dim > 1) {
    throw new KernelAttentionError(
      'BadShape',
      '`x` has a column whose values, less the 10 % at each end, do not spread, so `options.normalize` cannot scale it',
      'x',
    );
  }
  checkResult(result);
}

function spanTooSmall(o, n, q) {
  const k = columns(o.degree, o.dim);
  throw new KernelAttentionError(
    'BadArgument',
    `\`options.span\` must give at least ${k + 1} points per fit for degree ${o.degree} in ${o.dim}-D ` +
      `(${k} coefficients); got ${o.span}, which gives ⌊${n}·${o.span}⌋ = ${q}`,
    'options.span',
  );
}

/** The loess() function of the API; its local fits run on up to `threads` threads (the same results). */
export function makeLoess(engine, threads = 1) {
  return function loess(x, y, options) {
    const o = readOptions(options);
    const { xs, ys, ws, n } = readData(x, y, options?.weights, o.dim);
    const q = Math.min(n, Math.floor(n * o.span));
    if (columns(o.degree, o.dim) > q - 1) spanTooSmall(o, n, q);
    const handle = engine.loessCreate();
    if (!handle) throw new KernelAttentionError('OutOfMemory', 'could not allocate a loess model');
    try {
      return engine.withHeap((heap) => {
        const fields = { model: handle, x: heap.f64(xs), y: heap.f64(ys), n, options: o, threads };
        if (ws) fields.weights = heap.f64(ws);
        const result = engine.loessFit(fields);
        if (result.status !== 'Ok') fitError(result, o, n);
        const out = heap.alloc(n * 8);
        const read = (fill) => {
          fill({ model: handle, out });
          return heap.readF64(out, n);
        };
        const fitted = read(engine.loessFitted);
        const residuals = read(engine.loessResiduals);
        const robustnessWeights = read(engine.loessRobustnessWeights);
        return makeModel(engine, handle, o, n, { fitted, residuals, robustnessWeights });
      });
    } catch (e) {
      engine.loessFree({ model: handle });
      throw e;
    }
  };
}

function makeModel(engine, handle, options, n, arrays) {
  const summary = engine.loessSummary({ model: handle });
  let live = handle;
  const use = () => {
    if (!live) throw new KernelAttentionError('Disposed', 'this loess model was disposed', 'model');
    return live;
  };
  const readQueries = (xq) => {
    const qs = Float64Array.from(numericArray(xq, 'xq'));
    return { qs, m: rowsOf(qs, options.dim, 'xq', 'options.dim') };
  };
  const run = (xq, withSe) => {
    const model = use();
    const { qs, m } = readQueries(xq);
    return engine.withHeap((heap) => {
      const fields = { model, q: heap.f64(qs), m, fit: heap.alloc(m * 8) };
      if (withSe) fields.se = heap.alloc(m * 8);
      checkResult(engine.loessPredict(fields));
      return { mean: heap.readF64(fields.fit, m), stderr: withSe ? heap.readF64(fields.se, m) : null };
    });
  };
  const df = (summary.oneDelta * summary.oneDelta) / summary.twoDelta;
  const model = {
    options: Object.freeze({ ...options }),
    size: n,
    ...arrays,
    enp: summary.enp,
    residualScale: summary.residualScale,
    oneDelta: summary.oneDelta,
    twoDelta: summary.twoDelta,
    traceHat: summary.traceHat,
    degreesOfFreedom: df,
    pseudoInverse: summary.pseudoInverse,
    predict(xq) {
      return run(xq, false).mean;
    },
    predictInterval(xq, intervalOptions) {
      use();
      const { level = 0.95 } = checkOptionNames(intervalOptions, ['level'], 'intervalOptions');
      if (typeof level !== 'number' || !(level > 0 && level < 1))
        fail('BadArgument', 'intervalOptions.level', 'a number strictly between 0 and 1', level);
      if (options.statistics === 'none') {
        throw new KernelAttentionError(
          'BadArgument',
          "this model was fitted with `options.statistics` 'none', which gives no residual scale for standard errors",
          'options.statistics',
        );
      }
      const { mean, stderr } = run(xq, true);
      const t = engine.studentTQuantile({ p: (1 + level) / 2, df });
      const lower = mean.map((f, i) => f - t * stderr[i]);
      const upper = mean.map((f, i) => f + t * stderr[i]);
      return { mean, stderr, lower, upper, degreesOfFreedom: df, quantile: t };
    },
    dispose() {
      if (live) engine.loessFree({ model: live });
      live = 0;
    },
  };
  if (typeof Symbol.dispose === 'symbol') model[Symbol.dispose] = model.dispose;
  return Object.freeze(model);
}
