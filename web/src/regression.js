// kernelRegression(): its options read and checked, its fits and its bandwidth search planned (plan.js), the
// bandwidth chosen (bandwidth.js) or given, and the model built (model.js); docs/regression.md has the formulas.
import { KernelAttentionError } from './errors.js';
import { readRobust } from './robust.js';
import { readSpan, spanScales } from './span.js';
import { CONTROL_OPTIONS, drive, nextTask, readControl, throwIfAborted } from './progress.js';
import { criterionOf, MODEL_METHODS, planRegression, sortsSample } from './plan.js';
import { checkPlugin } from './plugin.js';
import { ownCopy, readExclude, regressionKernels, regressionRules } from './sample.js';
import { codedRows, readColumns, readMixedBandwidth, refuseMixed } from './categories.js';
import { bandwidths, boolean, checkOptionNames, oneOf } from './validate.js';
import { sampleFrame } from './frame.js';
import { buildModel, robustModel } from './model.js';

const REGRESSION_OPTIONS = [
  'dim',
  'kernel',
  'bandwidth',
  'estimator',
  'weights',
  'empty',
  'perDimension',
  'method',
  'tolerance',
  'exclude',
  'robust',
  'types',
  'orderedKernel',
];

/**
 * The context every model of these regressions gets: the engine, the threads, and kernelRegression and
 * kernelRegressionAsync themselves (a model's local variance smoother is one), over the searches `selectBandwidth`
 * and `selectBandwidthAsync` (bandwidth.js).
 */
function regressions(engine, threads, selectBandwidth, selectBandwidthAsync) {
  const ctx = { engine, threads };
  ctx.kernelRegression = function kernelRegression(x, y, options) {
    const p = readRegression(engine, x, y, options, REGRESSION_OPTIONS);
    const [sx, sy] = searchSample(p);
    const chosen = p.chosen ?? fromSelection(p, selectBandwidth(sx, sy, selectionOptions(p)));
    const { h, selection } = chosen;
    const q = { ...p, lambda: chosen.lambda };
    const fitted = drive(robustModel(ctx, q, h, selection), null);
    return buildModel(ctx, fitted, h, selection);
  };
  ctx.kernelRegressionAsync = (x, y, options) => fitAsync(ctx, selectBandwidthAsync, x, y, options);
  return ctx;
}

/** kernelRegression() on `engine` (engine.js); `selectBandwidth` chooses the bandwidth when one is asked for by name. */
export const makeRegression = (engine, threads, selectBandwidth, selectBandwidthAsync) =>
  regressions(engine, threads, selectBandwidth, selectBandwidthAsync).kernelRegression;

/**
 * kernelRegressionAsync() on `engine`: kernelRegression() with the bandwidth search run by `selectBandwidthAsync`
 * (one step per criterion evaluation) and the fit summary as a last step; `options.onProgress` receives
 * `{ done, total }` steps (total is an estimate until the search ends) and `options.signal` stops it between steps.
 */
export const makeRegressionAsync = (engine, threads, selectBandwidthAsync, selectBandwidth) =>
  regressions(engine, threads, selectBandwidth, selectBandwidthAsync).kernelRegressionAsync;

async function fitAsync(ctx, selectBandwidthAsync, x, y, options) {
  const p = readRegression(ctx.engine, x, y, options, [...REGRESSION_OPTIONS, ...CONTROL_OPTIONS]);
  const { signal, onProgress } = readControl(options);
  throwIfAborted(signal);
  let steps = 0;
  let chosen = p.chosen;
  const iterations = p.robust ? p.robust.iterations : 0;
  if (!chosen) {
    // The search's own last report (done === total) is left out: the robustness fits and the summary's step follow.
    const report =
      onProgress && (({ done, total }) => done < total && onProgress({ done, total: total + 1 + iterations }));
    const selection = await selectBandwidthAsync(...searchSample(p), {
      ...selectionOptions(p),
      signal,
      onProgress: report,
    });
    chosen = fromSelection(p, selection);
    steps = Math.max(selection.curve.scores.length, 1);
    await nextTask();
    throwIfAborted(signal);
  }
  // Robustness fits are steps of their own (an early stop, on an exact fit, jumps to the last step).
  const total = steps + iterations + 1;
  const report = onProgress && (({ done }) => onProgress({ done: steps + done, total }));
  const q = { ...p, lambda: chosen.lambda };
  const fitted = await drive(robustModel(ctx, q, chosen.h, chosen.selection), { signal, onProgress: report });
  if (p.robust) {
    await nextTask();
    throwIfAborted(signal);
  }
  const model = buildModel(ctx, fitted, chosen.h, chosen.selection);
  if (onProgress) onProgress({ done: total, total });
  return model;
}

/** Validates kernelRegression's arguments; the model's own copy of the sample; the bandwidth when it is given. */
function readRegression(engine, x, y, options, known) {
  if (options === undefined) {
    throw new KernelAttentionError(
      'BadArgument',
      '`options` is required: at least `{ dim }`, the number of columns of x',
      'options',
    );
  }
  checkOptionNames(options, known);
  let {
    dim,
    kernel = 'gaussian',
    bandwidth = 'cv',
    estimator = 'local-linear',
    weights,
    empty = 'nan',
    perDimension = false,
    method = 'auto',
  } = options;
  // Mixed data (categories.js): x, dim and the bandwidths below are the continuous columns'; `mixed` has the rest.
  const sample = readColumns(x, y, options, weights);
  const { n, width, mixed } = sample;
  const userDim = dim;
  [x, y, weights, dim] = [sample.x, sample.y, sample.weights, sample.dim];
  oneOf(kernel, regressionKernels(engine), 'options.kernel');
  oneOf(estimator, engine.estimators, 'options.estimator');
  oneOf(empty, engine.emptyPolicies, 'options.empty');
  boolean(perDimension, 'options.perDimension');
  // What the model's fits run on (plan.js): span bandwidths, observation weights and the estimator decide with the rest.
  const span = readSpan(bandwidth, 'options.bandwidth');
  if (mixed && span !== null) {
    throw new KernelAttentionError(
      'BadArgument',
      '`options.bandwidth` span bandwidths are not supported with discrete columns (`options.types`); ' +
        'give the bandwidths or choose them by a criterion',
      'options.bandwidth',
    );
  }
  const fit = { criterion: 'fit', weights: weights !== undefined, span: span !== null, discrete: !!mixed };
  const call = { n, dim, kernel, estimator, ...fit };
  const names = { method: 'options.method' };
  const plan = planRegression(engine, method, options.tolerance, call, names, MODEL_METHODS);
  let chosen = null;
  if (typeof bandwidth === 'string') {
    oneOf(bandwidth, regressionRules(engine), 'options.bandwidth');
    if (mixed) refuseMixed({ rule: bandwidth }, 'options.bandwidth'); // before the plug-in rule's own checks
    if (bandwidth === 'plugin') {
      const rule = "`bandwidth: 'plugin'`";
      checkPlugin(engine, { dim, width, estimator, kernel, weights, rule });
    }
  } else if (span !== null) {
    chosen = {
      h: spanScales(x, n, dim),
      selection: { rule: 'span', score: null, curve: { bandwidths: new Float64Array(0), scores: new Float64Array(0) } },
    };
  } else if (mixed) {
    chosen = {
      ...readMixedBandwidth(mixed, bandwidth, 'options.bandwidth'),
      selection: {
        rule: 'fixed',
        score: null,
        curve: { bandwidths: new Float64Array(0), scores: new Float64Array(0) },
      },
    };
  } else {
    chosen = {
      h: Float64Array.from(bandwidths(bandwidth, dim, 'options.bandwidth')),
      selection: {
        rule: 'fixed',
        score: null,
        curve: { bandwidths: new Float64Array(0), scores: new Float64Array(0) },
      },
    };
  }
  const robust = readRobust(options.robust, width);
  // Blocked CV's radius, for the bandwidth search 'cv' only (a given bandwidth has no search to pass it to).
  const exclude = readExclude(options.exclude, typeof bandwidth === 'string' ? bandwidth : 'fixed');
  if (mixed && typeof bandwidth === 'string') refuseMixed({ rule: bandwidth, exclude }, 'options.bandwidth');
  // What the bandwidth search computes its criterion on (AICc, or leave-one-out CV, blocked with `exclude`): the plan's
  // answer for the rule's criterion, which kernelRegression asks selectBandwidth for.
  const searchCall = { ...call, criterion: criterionOf(bandwidth), exclude };
  const search = chosen ? null : planRegression(engine, method, options.tolerance, searchCall, names, MODEL_METHODS);
  // The model's frame, once (frame.js): its sample and every query are shifted by it, predictions shifted back.
  const frame = sampleFrame(x, dim, y, width);
  const sorted = sortsSample(plan, !!mixed);
  const data = ownCopy(x, y, weights, n, dim, width, sorted, frame, sample.codes);
  const stored = { x, y }; // for the 'precision' warning: what the caller's storage kept
  const columns = { x: Float64Array.from(x), codes: sample.codes };
  return {
    n,
    width,
    dim,
    userDim,
    mixed,
    lambda: chosen?.lambda ?? null,
    kernel,
    estimator,
    empty,
    perDimension,
    plan,
    search,
    bandwidth,
    data,
    sorted,
    chosen,
    frame,
    stored,
    exclude,
    span,
    // The sample in the input's order, in double (residuals for robustness and local variance): own copies too.
    robust,
    sample: { x: mixed ? codedRows(mixed, x, sample.codes, n) : columns.x, y: Float64Array.from(y) },
    // The continuous columns (the sample's x without discrete columns) and the levels, input order (robust refits).
    columns,
    fitWeights: weights && Float64Array.from(weights),
    robustnessWeights: null,
  };
}

// The sample a search is given: the model's float32 copy (discrete columns as codes in the user layout), or for the
// plug-in rule, which computes in double as R's dpill does, the sample in double.
const searchSample = (p) => {
  if (p.bandwidth === 'plugin') return [p.sample.x, p.sample.y];
  return [p.mixed ? codedRows(p.mixed, p.data.x, p.data.codes, p.n) : p.data.x, p.data.y];
};
const selectionOptions = (p) => ({
  dim: p.userDim,
  ...(p.mixed && { types: p.mixed.types, orderedKernel: p.mixed.orderedKernel }),
  kernel: p.kernel,
  estimator: p.estimator,
  rule: p.bandwidth,
  perDimension: p.perDimension,
  weights: p.data.weights,
  method: p.search.method,
  tolerance: p.search.tolerance,
  ...(p.exclude > 0 ? { exclude: p.exclude } : {}),
});
const fromSelection = (p, chosen) => ({
  ...(p.mixed ? readMixedBandwidth(p.mixed, chosen.bandwidth, 'bandwidth') : { h: chosen.bandwidth, lambda: null }),
  selection: {
    rule: p.bandwidth,
    score: chosen.score,
    curve: chosen.curve,
    ...(chosen.plugin ? { plugin: chosen.plugin } : {}),
  },
});
