// kernelRegression(): its options read and checked, the bandwidth chosen (bandwidth.js) or given, and the model
// built (model.js); docs/regression.md has the formulas.
import { readExclude, readSample, regressionKernels, resolveApproximation } from './bandwidth.js';
import { KernelAttentionError } from './errors.js';
import { readSparseRegression } from './sparse.js';
import { readRobust } from './robust.js';
import { readSpan, spanScales } from './span.js';
import { CONTROL_OPTIONS, drive, nextTask, readControl, throwIfAborted } from './progress.js';
import { bandwidths, boolean, checkOptionNames, oneOf } from './validate.js';
import { sampleFrame } from './frame.js';
import { buildModel, ownCopy, robustFit } from './model.js';

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
];

/** kernelRegression() on `engine` (engine.js); `selectBandwidth` chooses the bandwidth when one is asked for by name. */
export function makeRegression(engine, threads, selectBandwidth, selectBandwidthAsync) {
  return function kernelRegression(x, y, options) {
    const p = readRegression(engine, x, y, options, REGRESSION_OPTIONS);
    const { h, selection } = p.chosen ?? fromSelection(p, selectBandwidth(p.data.x, p.data.y, selectionOptions(p)));
    const searches = { selectBandwidth, selectBandwidthAsync };
    const fitted = drive(robustFit(engine, threads, p, h, selection, searches), null);
    return buildModel(engine, threads, fitted, h, selection, searches);
  };
}

/**
 * kernelRegressionAsync() on `engine`: kernelRegression() with the bandwidth search run by `selectBandwidthAsync`
 * (one step per criterion evaluation) and the fit summary as a last step; `options.onProgress` receives
 * `{ done, total }` steps (total is an estimate until the search ends) and `options.signal` stops it between steps.
 */
export function makeRegressionAsync(engine, threads, selectBandwidthAsync, selectBandwidth) {
  const searches = { selectBandwidth, selectBandwidthAsync };
  return async function kernelRegressionAsync(x, y, options) {
    const p = readRegression(engine, x, y, options, [...REGRESSION_OPTIONS, ...CONTROL_OPTIONS]);
    const { signal, onProgress } = readControl(options);
    throwIfAborted(signal);
    let steps = 0;
    let chosen = p.chosen;
    const iterations = p.robust ? p.robust.iterations : 0;
    if (!chosen) {
      // The search's own last report (done === total) is left out: the robustness fits and the summary's step follow.
      const report =
        onProgress && (({ done, total }) => done < total && onProgress({ done, total: total + 1 + iterations }));
      const selection = await selectBandwidthAsync(p.data.x, p.data.y, {
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
    const fitted = await drive(robustFit(engine, threads, p, chosen.h, chosen.selection, searches), {
      signal,
      onProgress: report,
    });
    if (p.robust) {
      await nextTask();
      throwIfAborted(signal);
    }
    const model = buildModel(engine, threads, fitted, chosen.h, chosen.selection, searches);
    if (onProgress) onProgress({ done: total, total });
    return model;
  };
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
    throw new KernelAttentionError(
      'BadArgument',
      `\`options.method\` '${method}' does not apply to span bandwidths, ` +
        "which run exactly; pass method 'auto' or 'exact'",
      'options.method',
    );
  }
  if (span !== null) method = 'exact';
  const sparse = readSparseRegression(engine, { method, dim, estimator, weights }); // searches and summaries run exactly
  const plan = resolveApproximation(
    engine,
    sparse ? 'exact' : method,
    options.tolerance,
    { dim, kernel, n },
    'options.method',
  );
  const { method: approximation, tolerance } = plan;
  const reason = sparse ? 'sparse: asked for' : span !== null ? 'exact: span bandwidths run exactly' : plan.reason;
  let chosen = null;
  if (typeof bandwidth === 'string') oneOf(bandwidth, engine.selections, 'options.bandwidth');
  else if (span !== null) {
    chosen = {
      h: spanScales(x, n, dim),
      selection: { rule: 'span', score: null, curve: { bandwidths: new Float64Array(0), scores: new Float64Array(0) } },
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
  // The model's frame, once (frame.js): its sample and every query are shifted by it, predictions shifted back.
  const frame = sampleFrame(x, dim, y, width);
  const data = ownCopy(x, y, weights, n, dim, width, approximation === 'exact', frame);
  const stored = { x, y }; // for the 'precision' warning: what the caller's storage kept
  return {
    n,
    width,
    dim,
    kernel,
    estimator,
    empty,
    perDimension,
    approximation,
    reason,
    tolerance,
    bandwidth,
    data,
    chosen,
    sparse,
    frame,
    stored,
    exclude,
    span,
    // The sample in the input's order, in double (residuals for robustness and local variance): own copies too.
    robust,
    sample: { x: Float64Array.from(x), y: Float64Array.from(y) },
    fitWeights: weights && Float64Array.from(weights),
    robustnessWeights: null,
  };
}

const selectionOptions = (p) => ({
  dim: p.dim,
  kernel: p.kernel,
  estimator: p.estimator,
  rule: p.bandwidth,
  perDimension: p.perDimension,
  weights: p.data.weights,
  method: p.approximation,
  tolerance: p.tolerance,
  ...(p.exclude > 0 ? { exclude: p.exclude } : {}),
});
const fromSelection = (p, chosen) => ({
  h: chosen.bandwidth,
  selection: { rule: p.bandwidth, score: chosen.score, curve: chosen.curve },
});
