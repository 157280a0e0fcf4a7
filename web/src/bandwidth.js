// selectBandwidth() and cvScore(): rules of thumb, the plug-in rule, leave-one-out cross-validation and AICc, for the
// Nadaraya–Watson and local-linear estimators, with optional observation weights. The options are read in
// selection.js, the searches run in search.js (CV, AICc) and gradient-search.js (CV by its gradient), the plug-in
// rule in plugin.js.
import { checkResult, KernelAttentionError } from './errors.js';
import { gradientSearchSteps } from './gradient-search.js';
import { CONTROL_OPTIONS, drive, readControl } from './progress.js';
import { gridTolerance, planRegression, REGRESSION_METHODS } from './plan.js';
import { fitOptions, readExclude, regressionKernels, selectRules } from './sample.js';
import { discreteOptions, readColumns, readMixedBandwidth, refuseMixed } from './categories.js';
import { pluginSteps } from './plugin.js';
import { searchSteps } from './search.js';
import { readSelection, SELECT_OPTIONS } from './selection.js';
import { bandwidths, checkOptionNames, oneOf } from './validate.js';
import { withSelectionWarnings } from './warnings.js';
import { sampleFrame } from './frame.js';
import { renamed } from './deprecate.js';

const CV_SCORE_OPTIONS = [
  'dim',
  'kernel',
  'bandwidth',
  'estimator',
  'weights',
  'method',
  'approximation',
  'tolerance',
  'exclude',
  'types',
  'orderedKernel',
];

/** cvScore()'s options read and checked, and its plan (plan.js): what the score runs on. */
function readCvScore(engine, x, y, options) {
  if (options === undefined) {
    throw new KernelAttentionError('BadArgument', '`options` is required: `{ dim, bandwidth }`', 'options');
  }
  checkOptionNames(options, CV_SCORE_OPTIONS);
  const { dim, kernel = 'gaussian', bandwidth, estimator = 'local-linear', weights } = options;
  const given = renamed(options, 'approximation', 'method');
  const method = given === undefined ? 'auto' : given;
  const methodName = options.approximation === undefined ? 'options.method' : 'options.approximation'; // as given
  if (selectRules(engine).includes(method)) {
    // planRegression's hint (pass it as `bandwidth`) is kernelRegression's
    throw new KernelAttentionError(
      'BadArgument',
      `\`${methodName}\` is how the score is computed (${REGRESSION_METHODS.map((a) => `'${a}'`).join(', ')}); ` +
        `cvScore scores the bandwidth given, it does not choose one by '${method}'`,
      methodName,
    );
  }
  const sample = readColumns(x, y, options, weights); // mixed data: x and dim are the continuous columns'
  const { mixed } = sample;
  oneOf(kernel, regressionKernels(engine), 'options.kernel');
  oneOf(estimator, engine.estimators, 'options.estimator');
  const exclude = readExclude(options.exclude);
  if (mixed) refuseMixed({ exclude });
  const columns = { dim: sample.dim, weights: !!weights, discrete: !!mixed };
  const call = { n: sample.n, kernel, estimator, criterion: 'cv', exclude, ...columns };
  const plan = planRegression(engine, method, options.tolerance, call, { method: methodName });
  if (bandwidth === undefined)
    throw new KernelAttentionError('BadArgument', '`options.bandwidth` is required', 'options.bandwidth');
  if (mixed) {
    // The core takes (h, λ): the continuous bandwidths, then λ per discrete column (cpp/core/stats/mixed.h).
    const { h, lambda } = readMixedBandwidth(mixed, bandwidth, 'options.bandwidth');
    return { ...sample, kernel, estimator, exclude, plan, h: Float64Array.of(...h, ...lambda) };
  }
  const h = Float64Array.from(bandwidths(bandwidth, dim, 'options.bandwidth'));
  return { ...sample, kernel, estimator, exclude, plan, h };
}

export function makeBandwidth(engine, threads = 1) {
  function cvScore(x, y, options) {
    const s = readCvScore(engine, x, y, options);
    const { n, dim, width } = s;
    return engine.withHeap((heap) => {
      const score = heap.alloc(8);
      const fit = fitOptions({
        kernel: s.kernel,
        estimator: s.estimator,
        weights: s.weights ? heap.f32(s.weights) : 0,
        threads,
        tolerance: gridTolerance(s.plan),
        exclude: s.exclude,
        discrete: discreteOptions(engine, heap, s.mixed, { codes: s.codes }),
      });
      const frame = sampleFrame(s.x, dim, s.y, width); // CV is invariant to shifting x and y (frame.js)
      const [xp, yp] = [heap.f32Shifted(s.x, dim, frame.x), heap.f32Shifted(s.y, width, frame.y)];
      const h = heap.f64(s.h);
      checkResult(engine.cvScore({ x: xp, y: yp, n, dim, width, options: fit, score: 'cv', h, out: score }));
      return heap.readF64(score, 1)[0];
    });
  }

  const steps = (s, stepwise) =>
    withSelectionWarnings(
      engine,
      (s.rule === 'cv-gradient' ? gradientSearchSteps : s.rule === 'plugin' ? pluginSteps : searchSteps)(
        engine,
        threads,
        s,
        stepwise,
      ),
      s,
    );

  function selectBandwidth(x, y, options) {
    return drive(steps(readSelection(engine, x, y, options, SELECT_OPTIONS), false), null);
  }

  /**
   * selectBandwidth() one criterion evaluation at a time, reporting `{ done, total }` evaluations to
   * `options.onProgress` and yielding to the event loop between them, so that `options.signal` can stop it.
   * Resolves to the result selectBandwidth() returns, byte for byte.
   */
  async function selectBandwidthAsync(x, y, options) {
    const s = readSelection(engine, x, y, options, [...SELECT_OPTIONS, ...CONTROL_OPTIONS]);
    return drive(steps(s, true), readControl(options));
  }

  return { selectBandwidth, selectBandwidthAsync, cvScore };
}
