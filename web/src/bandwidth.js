// selectBandwidth() and cvScore(): rules of thumb, leave-one-out cross-validation and AICc, for the Nadaraya–Watson
// and local-linear estimators, with optional observation weights.
import { checkResult, describe, KernelAttentionError } from './errors.js';
import { smoothCompact } from './gradients.js';
import { CONTROL_OPTIONS, drive, readControl } from './progress.js';
import { bandwidths, boolean, checkOptionNames, numericArray, oneOf, positiveInteger, rowsOf } from './validate.js';
import { withSelectionWarnings } from './warnings.js';
import { sampleFrame } from './frame.js';
import { deprecated, renamed } from './deprecate.js';

/** The kernels a regression takes: those with a bandwidth (the core's kernel traits). */
export const regressionKernels = (engine) => engine.kernels.filter((k) => k.distance).map((k) => k.name);
// selectBandwidth's rules: the core's criteria and rules of thumb (engine.selections), and 'cv-gradient', L-BFGS on the
// exact CV gradient (bandwidth.h, select_cv_gradient).
const selectRules = (engine) => [...engine.selections, 'cv-gradient'];
export const METRICS = ['diagonal', 'full'];
// As a destructuring default: only an absent option (undefined) takes it; null stays, for the check to name.
const orDefault = (value, fallback) => (value === undefined ? fallback : value);
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
    throw new KernelAttentionError(
      'BadShape',
      `\`y\` must have n·D entries for n = ${n} rows of x; got length ${ys.length}`,
      'y',
    );
  }
  let ws;
  if (weights !== undefined) {
    ws = numericArray(weights, 'options.weights');
    if (ws.length !== n) {
      throw new KernelAttentionError(
        'BadShape',
        `\`options.weights\` must have one entry per row of x (${n}); got length ${ws.length}`,
        'options.weights',
      );
    }
    let total = 0;
    for (let i = 0; i < n; i++) {
      if (!(ws[i] >= 0)) {
        throw new KernelAttentionError(
          'BadArgument',
          `\`options.weights[${i}]\` must be >= 0; got ${ws[i]}`,
          'options.weights',
        );
      }
      total += ws[i];
    }
    if (!(total > 0))
      throw new KernelAttentionError('BadArgument', '`options.weights` must not all be zero', 'options.weights');
  }
  return { n, width: ys.length / n, x: xs, y: ys, weights: ws };
}

/** The engine's FitOptions for a regression call; `weights` and `bandwidth` are heap offsets (0 when absent). */
export function fitOptions({
  kernel,
  estimator,
  weights = 0,
  bandwidth = 0,
  empty = 'nan',
  threads,
  tolerance = 0,
  exclude = 0,
}) {
  return { kernel, estimator, bandwidth, weights, empty, threads, tolerance, exclude };
}

/**
 * Blocked CV's radius (Chu & Marron 1991): `exclude` (undefined: 0, leave-one-out) must be a finite number >= 0 in
 * x's units, and applies to the CV criterion only (`method`: the criterion asked for, 'fixed' for a given bandwidth,
 * undefined for cvScore).
 */
export function readExclude(exclude, rule, name = 'options.exclude') {
  if (exclude === undefined) return 0;
  if (typeof exclude !== 'number' || !(exclude >= 0) || !Number.isFinite(exclude)) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`${name}\` must be a finite number >= 0 (in x's units); got ${describe(exclude)}`,
      name,
    );
  }
  if (exclude > 0 && rule !== undefined && rule !== 'cv') {
    const what = rule === 'fixed' ? 'a given bandwidth' : `the rule '${rule}'`;
    throw new KernelAttentionError(
      'BadArgument',
      `\`${name}\` (blocked CV) applies to the criterion 'cv' only, not to ${what}`,
      name,
    );
  }
  return exclude;
}

export const APPROXIMATIONS = ['auto', 'exact', 'grid'];

/**
 * Which computation runs, as the core plans it (plan.h): { method: 'exact' or 'grid', reason, tolerance } (the
 * tolerance given, or the core's default when it is undefined). The grid needs at most the core's grid dimensions (2)
 * and a kernel with a finite reach (not Cauchy: the core's kernel traits); asking for it otherwise is an error naming
 * `name`.
 */
export function resolveApproximation(engine, approximation, tolerance, { dim, kernel, n }, name) {
  if (engine.selections.includes(approximation)) {
    // kernelRegression's `method` is how to compute, not how to choose h
    throw new KernelAttentionError(
      'BadArgument',
      `\`${name}\` is how the fit is computed (${APPROXIMATIONS.map((a) => `'${a}'`).join(', ')}); ` +
        `to choose the bandwidth by '${approximation}', pass \`bandwidth: '${approximation}'\``,
      name,
    );
  }
  oneOf(approximation, APPROXIMATIONS, name);
  const tolName = name.replace(/\.[^.]*$/, '.tolerance');
  if (tolerance !== undefined && (typeof tolerance !== 'number' || !(tolerance > 0 && tolerance < 1))) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`${tolName}\` must be a number strictly between 0 and 1; got ${describe(tolerance)}`,
      tolName,
    );
  }
  const { maxGridDims } = engine.limits;
  if (approximation === 'grid' && !(dim <= maxGridDims && engine.kernel(kernel).grid)) {
    const dims = Array.from({ length: maxGridDims }, (_, d) => d + 1);
    const dimsText = dims.length > 1 ? `${dims.slice(0, -1).join(', ')} or ${dims.at(-1)}` : `${dims[0]}`;
    const others = engine.kernels
      .filter((k) => k.distance && !k.grid)
      .map((k) => `'${k.name}'`)
      .join(', ');
    throw new KernelAttentionError(
      'BadArgument',
      `\`${name}\` 'grid' needs dim ${dimsText} and a kernel other than ${others}; got dim ${dim}, kernel '${kernel}'`,
      name,
    );
  }
  return engine.plan({ task: 'regression', kernel, queries: n, keys: n, dims: dim }, approximation, tolerance ?? 0);
}

/** Per evaluation of a metric search (count matrices L, rank × dim), the bandwidth along each axis: 1/‖L e_d‖. */
function columnScales(transforms, count, rank, dim) {
  const out = new Float64Array(count * dim);
  for (let e = 0; e < count; e++) {
    for (let d = 0; d < dim; d++) {
      let norm = 0;
      for (let r = 0; r < rank; r++) norm += transforms[(e * rank + r) * dim + d] ** 2;
      out[e * dim + d] = 1 / Math.sqrt(norm);
    }
  }
  return out;
}

export function makeBandwidth(engine, threads = 1) {
  const kernels = regressionKernels(engine);
  function cvScore(x, y, options) {
    if (options === undefined) {
      throw new KernelAttentionError('BadArgument', '`options` is required: `{ dim, bandwidth }`', 'options');
    }
    checkOptionNames(options, [
      'dim',
      'kernel',
      'bandwidth',
      'estimator',
      'weights',
      'method',
      'approximation',
      'tolerance',
      'exclude',
    ]);
    let { dim, kernel = 'gaussian', bandwidth, estimator = 'local-linear', weights } = options;
    const method = orDefault(renamed(options, 'approximation', 'method'), 'auto');
    const methodName = options.approximation === undefined ? 'options.method' : 'options.approximation'; // as given
    if (selectRules(engine).includes(method)) {
      // resolveApproximation's hint (pass it as `bandwidth`) is kernelRegression's
      throw new KernelAttentionError(
        'BadArgument',
        `\`${methodName}\` is how the score is computed (${APPROXIMATIONS.map((a) => `'${a}'`).join(', ')}); ` +
          `cvScore scores the bandwidth given, it does not choose one by '${method}'`,
        methodName,
      );
    }
    const sample = readSample(x, y, dim, weights);
    const { n, width } = sample;
    [x, y, weights] = [sample.x, sample.y, sample.weights];
    oneOf(kernel, kernels, 'options.kernel');
    oneOf(estimator, engine.estimators, 'options.estimator');
    const plan = resolveApproximation(engine, method, options.tolerance, { dim, kernel, n }, methodName);
    const { tolerance } = plan;
    const exclude = readExclude(options.exclude);
    const grid = plan.method === 'grid' && !(exclude > 0); // blocked CV runs exactly
    if (bandwidth === undefined)
      throw new KernelAttentionError('BadArgument', '`options.bandwidth` is required', 'options.bandwidth');
    const h = Float64Array.from(bandwidths(bandwidth, dim, 'options.bandwidth'));
    return engine.withHeap((heap) => {
      const score = heap.alloc(8);
      const o = fitOptions({
        kernel,
        estimator,
        weights: weights ? heap.f32(weights) : 0,
        threads,
        tolerance: grid ? tolerance : 0,
        exclude,
      });
      const frame = sampleFrame(x, dim, y, width); // CV is invariant to shifting x and y (frame.js)
      checkResult(
        engine.cvScore(
          heap.f32Shifted(x, dim, frame.x),
          heap.f32Shifted(y, width, frame.y),
          n,
          dim,
          width,
          o,
          'cv',
          heap.f64(h),
          score,
        ),
      );
      return heap.readF64(score, 1)[0];
    });
  }

  const SELECT_OPTIONS = [
    'dim',
    'kernel',
    'estimator',
    'rule',
    'method',
    'perDimension',
    'weights',
    'approximation',
    'tolerance',
    'metric',
    'maxIterations',
    'exclude',
  ];

  /**
   * selectBandwidth's rule and computation from its options: `rule`, and `method` ('auto' | 'exact' | 'grid'), with
   * the names before 0.2.0 read with a deprecation message: `method` naming a rule (the two value sets are disjoint)
   * and `approximation`.
   */
  function readRuleAndMethod(options) {
    let { rule, method } = options;
    if (selectRules(engine).includes(method)) {
      if (rule !== undefined) {
        throw new KernelAttentionError(
          'BadArgument',
          `\`options.method\` '${method}' is a rule, the deprecated spelling of ` +
            '`options.rule`, and `options.rule` is given too; pass the rule as `options.rule` only',
          'options.method',
        );
      }
      deprecated(
        'options.method=rule',
        `\`options.method: '${method}'\` (a bandwidth rule) is now \`options.rule: '${method}'\`; ` +
          "`options.method` is how the criterion is computed ('auto', 'exact', 'grid')",
      );
      [rule, method] = [method, undefined];
    }
    return {
      rule: orDefault(rule, 'cv'),
      method: orDefault(renamed({ method, approximation: options.approximation }, 'approximation', 'method'), 'auto'),
      methodName: options.approximation === undefined ? 'options.method' : 'options.approximation', // as given
    };
  }

  /** Validates selectBandwidth's arguments (with `known` option names); returns what the search needs. */
  function readSelection(x, y, options, known) {
    if (options === undefined) {
      throw new KernelAttentionError(
        'BadArgument',
        '`options` is required: at least `{ dim }`, the number of columns of x',
        'options',
      );
    }
    checkOptionNames(options, known);
    const { rule, method, methodName } = readRuleAndMethod(options);
    const {
      dim,
      kernel = 'gaussian',
      perDimension = false,
      weights,
      metric = 'diagonal',
      maxIterations = 100,
      // The gradient search exists for Nadaraya–Watson only (checkGradientSearch): its default, local-linear elsewhere.
      estimator = rule === 'cv-gradient' ? 'nadaraya-watson' : 'local-linear',
    } = options;
    const sample = readSample(x, y, dim, weights);
    oneOf(kernel, kernels, 'options.kernel');
    oneOf(estimator, engine.estimators, 'options.estimator');
    oneOf(rule, selectRules(engine), 'options.rule');
    boolean(perDimension, 'options.perDimension');
    oneOf(metric, METRICS, 'options.metric');
    positiveInteger(maxIterations, 'options.maxIterations');
    // Leave-one-out CV (the search, and the score reported for the rules) may run on a grid; AICc runs exactly.
    const plan = resolveApproximation(engine, method, options.tolerance, { dim, kernel, n: sample.n }, methodName);
    const { tolerance } = plan;
    const exclude = readExclude(options.exclude, rule);
    const gradient = rule === 'cv-gradient';
    if (gradient) checkGradientSearch({ estimator, kernel, weights, method, methodName });
    else {
      for (const [name, value, fallback] of [
        ['metric', metric, 'diagonal'],
        ['maxIterations', maxIterations, 100],
      ]) {
        if (value !== fallback) {
          throw new KernelAttentionError(
            'BadArgument',
            `\`options.${name}\` applies to rule 'cv-gradient' only; got rule '${rule}'`,
            `options.${name}`,
          );
        }
      }
    }
    const grid = plan.method === 'grid' && rule !== 'aicc' && !gradient && !(exclude > 0);
    // What the search runs on, and why: the plan, unless the criterion runs exactly whatever was planned.
    const reason =
      grid || plan.method === 'exact'
        ? plan.reason
        : `exact: ${gradient ? "rule 'cv-gradient'" : exclude > 0 ? 'blocked CV (exclude)' : 'AICc'} runs exactly`;
    return {
      ...sample,
      dim,
      kernel,
      estimator,
      rule,
      perDimension,
      grid,
      reason,
      tolerance,
      metric,
      maxIterations,
      exclude,
    };
  }

  /** What the gradient search (select_cv_gradient) cannot do, each an error naming its option. */
  function checkGradientSearch({ estimator, kernel, weights, method, methodName }) {
    const refuse = (name, why) => {
      throw new KernelAttentionError('BadArgument', `\`options.${name}\` ${why}`, `options.${name}`);
    };
    if (estimator !== 'nadaraya-watson')
      refuse(
        'estimator',
        `must be 'nadaraya-watson' for rule 'cv-gradient' (its gradient is that of the Nadaraya–Watson CV); got '${estimator}'`,
      );
    if (!engine.kernel(kernel).gradient) {
      refuse(
        'kernel',
        `'${kernel}' has no gradient (its CV is piecewise constant in h); use ${smoothCompact(engine)} with rule 'cv-gradient'`,
      );
    }
    if (weights !== undefined)
      refuse('weights', "are not supported by rule 'cv-gradient'; use rule 'cv' with `perDimension: true`");
    if (method === 'grid')
      refuse(methodName.slice('options.'.length), "'grid' is not available to rule 'cv-gradient', which runs exactly");
  }

  /**
   * The gradient search as a generator, one step per CV evaluation, paused and resumed as the CV search below is
   * (its curve also holds each evaluation's gradient, which the replay needs).
   */
  function* gradientSteps(s, stepwise) {
    const { n, dim, width, x, y, metric, maxIterations } = s;
    const rank = metric === 'full' ? dim : 0;
    const params = rank ? rank * dim : dim;
    const heap = engine.openHeap();
    try {
      const frame = sampleFrame(x, dim, y, width); // bandwidths and scores are invariant to shifting x and y (frame.js)
      const xp = heap.f32Shifted(x, dim, frame.x);
      const yp = heap.f32Shifted(y, width, frame.y);
      const o = fitOptions({ kernel: s.kernel, estimator: s.estimator, threads });
      const h = heap.alloc(dim * 8);
      const score = heap.alloc(8);
      const transform = rank ? heap.alloc(params * 8) : 0;
      checkResult(engine.ruleOfThumb(xp, n, dim, 'scott', h));
      let count = 0;
      let iterations = 0;
      let capacity = CURVE_CAPACITY;
      let curve = [heap.alloc(capacity * params * 8), heap.alloc(capacity * 8), heap.alloc(capacity * params * 8)];
      const estimate = 15 + 4 * params; // typical evaluations: a little more than one per L-BFGS iteration
      for (;;) {
        if (count + 1 > capacity) {
          // A resumed search replays its whole curve (and a search without pauses must record it to report it).
          const bigger = [
            heap.alloc(2 * capacity * params * 8),
            heap.alloc(2 * capacity * 8),
            heap.alloc(2 * capacity * params * 8),
          ];
          [params, 1, params].forEach((per, k) => heap.moveF64(bigger[k], curve[k], count * per));
          [curve, capacity] = [bigger, 2 * capacity];
        }
        // Without pauses the search stops at the curve's capacity and resumes with a bigger one.
        const r = engine.selectCvGradient(
          xp,
          yp,
          n,
          dim,
          width,
          o,
          rank,
          transform,
          maxIterations,
          h,
          score,
          curve[0],
          curve[1],
          curve[2],
          capacity,
          count,
          stepwise ? count + 1 : capacity,
        );
        const paused = r.status === 'Cancelled' && r.count > count;
        count = r.count;
        iterations = r.iterations;
        if (!paused) {
          checkResult(r);
          break;
        }
        if (stepwise) yield { done: count, total: Math.max(estimate, count + 1) };
      }
      const best = heap.readF64(score, 1)[0];
      if (!Number.isFinite(best)) {
        throw new KernelAttentionError(
          'BadShape',
          `no bandwidth gives a finite CV score for these ${n} points ` +
            "(some point never has another within the kernel's reach); choose a bandwidth or use a rule",
          'x',
        );
      }
      const values = heap.readF64(curve[0], count * params);
      const result = {
        rule: 'cv-gradient',
        method: 'exact',
        reason: s.reason,
        bandwidth: heap.readF64(h, dim),
        score: best,
        curve: {
          bandwidths: rank ? columnScales(values, count, rank, dim) : values,
          scores: heap.readF64(curve[1], count),
        },
        metric,
        iterations,
      };
      if (rank) {
        result.transform = heap.readF64(transform, params);
        result.curve.transforms = values;
      }
      if (stepwise) yield { done: Math.max(count, 1), total: Math.max(count, 1) };
      return result;
    } finally {
      heap.free();
    }
  }

  /**
   * The selection as a generator: each criterion evaluation of a CV/AICc search is one step (the core's search is
   * stopped after it by its progress hook and resumed from its curve, bandwidth.h), yielding `{ done, total }`
   * evaluations; `total` is an estimate until the last step. Without `stepwise` the search runs in one call.
   */
  function* selectionSteps(s, stepwise) {
    const { n, dim, width, x, y, weights, rule, grid, tolerance } = s;
    const heap = engine.openHeap();
    // The core's state of this search across its steps (its sorted and binned sample), freed with the heap.
    let search = 0;
    try {
      const frame = sampleFrame(x, dim, y, width); // bandwidths and scores are invariant to shifting x and y (frame.js)
      const xp = heap.f32Shifted(x, dim, frame.x);
      const yp = heap.f32Shifted(y, width, frame.y);
      const o = fitOptions({
        kernel: s.kernel,
        estimator: s.estimator,
        weights: weights ? heap.f32(weights) : 0,
        threads,
        tolerance: grid ? tolerance : 0,
        exclude: s.exclude,
      });
      const h = heap.alloc(dim * 8);
      const score = heap.alloc(8);
      checkResult(engine.ruleOfThumb(xp, n, dim, rule === 'silverman' ? 'silverman' : 'scott', h));
      const criterion = rule === 'aicc' ? 'aicc' : 'cv';
      let count = 0;
      let capacity = CURVE_CAPACITY;
      let curveH = 0;
      let curveScore = 0;
      if (rule === 'cv' || rule === 'aicc') {
        curveH = heap.alloc(capacity * dim * 8);
        curveScore = heap.alloc(capacity * 8);
        // Typical evaluations: a scan of the whole range (7 a decade, about 30) and about 10 of Brent's, then, per
        // dimension, 18 more each.
        const estimate = 40 + (s.perDimension && dim > 1 ? 18 * dim : 0);
        if (stepwise) {
          search = engine.cvSearchCreate();
          if (!search) throw new KernelAttentionError('OutOfMemory', 'could not allocate the search state');
        }
        for (;;) {
          if (stepwise && count + 1 > capacity) {
            // A resumed search replays its whole curve: it must hold every evaluation.
            const [bigger, biggerScore] = [heap.alloc(2 * capacity * dim * 8), heap.alloc(2 * capacity * 8)];
            heap.moveF64(bigger, curveH, count * dim);
            heap.moveF64(biggerScore, curveScore, count);
            [curveH, curveScore, capacity] = [bigger, biggerScore, 2 * capacity];
          }
          const r = engine.selectCv(
            xp,
            yp,
            n,
            dim,
            width,
            o,
            criterion,
            s.perDimension,
            h,
            score,
            curveH,
            curveScore,
            capacity,
            count,
            stepwise ? count + 1 : 0,
            search,
          );
          const paused = stepwise && r.status === 'Cancelled' && r.count > count;
          if (!paused) {
            checkResult(r);
            count = r.count;
            break;
          }
          count = r.count;
          yield { done: count, total: Math.max(estimate, count + 1) };
        }
      } else {
        checkResult(engine.cvScore(xp, yp, n, dim, width, o, 'cv', h, score));
      }
      const best = heap.readF64(score, 1)[0];
      if (count && !Number.isFinite(best)) {
        throw new KernelAttentionError(
          'BadShape',
          `no bandwidth gives a finite ${rule === 'aicc' ? 'AICc' : 'CV score'} ` +
            `for these ${n} points (${
              rule === 'aicc'
                ? "AICc needs more points than the fit's degrees of freedom + 2"
                : "some point never has another within the kernel's reach"
            }); choose a bandwidth or use a rule`,
          'x',
        );
      }
      const shown = Math.min(count, CURVE_CAPACITY); // the curve holds the first 256 evaluations
      const result = {
        rule,
        method: grid ? 'grid' : 'exact',
        reason: s.reason,
        bandwidth: heap.readF64(h, dim),
        score: best,
        curve: {
          bandwidths: shown ? heap.readF64(curveH, shown * dim) : new Float64Array(0),
          scores: shown ? heap.readF64(curveScore, shown) : new Float64Array(0),
        },
      };
      if (stepwise) yield { done: Math.max(count, 1), total: Math.max(count, 1) };
      return result;
    } finally {
      if (search) engine.cvSearchFree(search);
      heap.free();
    }
  }

  const steps = (s, stepwise) =>
    withSelectionWarnings(s.rule === 'cv-gradient' ? gradientSteps(s, stepwise) : selectionSteps(s, stepwise), s);

  function selectBandwidth(x, y, options) {
    return drive(steps(readSelection(x, y, options, SELECT_OPTIONS), false), null);
  }

  /**
   * selectBandwidth() one criterion evaluation at a time, reporting `{ done, total }` evaluations to
   * `options.onProgress` and yielding to the event loop between them, so that `options.signal` can stop it.
   * Resolves to the result selectBandwidth() returns, byte for byte.
   */
  async function selectBandwidthAsync(x, y, options) {
    const s = readSelection(x, y, options, [...SELECT_OPTIONS, ...CONTROL_OPTIONS]);
    return drive(steps(s, true), readControl(options));
  }

  return { selectBandwidth, selectBandwidthAsync, cvScore };
}
