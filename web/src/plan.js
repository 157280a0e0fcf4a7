// Which method runs a call, as the core decides it (cpp/core/methods/plan.h): the method options read, the call
// described to the core with everything that decides (kernel, dimensions, masks, groups, estimator, span, criterion,
// blocked CV, weights, size), and its answer obeyed: a method, the reason, the tolerance, or the refusal of a method
// asked for that cannot serve the call, thrown naming the option. No other file compares method names; plan() asks
// the same questions without running anything.
import { fail, KernelAttentionError } from './errors.js';
import { frameOf, readCall, SHARED_OPTIONS } from './options.js';
import { fitOptions, readExclude, regressionKernels, regressionRules, selectRules } from './sample.js';
import { readTypes, refuseMixed } from './categories.js';
import { boolean, checkOptionNames, oneOf, positiveInteger } from './validate.js';

/** attention()'s methods, and the options that choose and tune them. */
export const ATTENTION_METHODS = ['exact', 'random-features', 'nystrom', 'sparse', 'top-k', 'auto'];
export const METHOD_OPTIONS = ['method', 'tolerance', 'seed', 'features', 'landmarks', 'sampling', 'topK'];
/** How a regression's fits and criteria are computed (selectBandwidth, cvScore); kernelRegression also takes 'sparse'. */
export const REGRESSION_METHODS = ['auto', 'exact', 'grid'];
export const MODEL_METHODS = [...REGRESSION_METHODS, 'sparse'];

// top_k_attention's k is an int32 (k ≥ J keeps every key).
const MAX_TOP_K = 2 ** 31 - 1;

// Which argument a refusal blames: the option that brought what the method cannot serve (a mask, groups, observation
// weights, attention's dimensions per head); for every other field, the method asked for.
const BLAMED = { attention: ['dims', 'mask', 'groups'], regression: ['weights'] };

/**
 * The core's refusal of method `p.method` (p.refused: the field of the call that forbids it, p.reason: why) as a
 * KernelAttentionError. `names`: the option each field was given as, `method` among them.
 */
function refuse(task, p, names) {
  const field = names[p.refused] ?? names.method;
  throw new KernelAttentionError(
    'BadArgument',
    `\`${names.method}\` '${p.method}' cannot serve this call's \`${field}\`: ${p.reason}; use method 'auto' or 'exact'`,
    BLAMED[task].includes(p.refused) ? field : names.method,
  );
}

/** The tolerance option: undefined (the method's default) or a number strictly between 0 and 1. */
function readTolerance(tolerance, name) {
  if (tolerance !== undefined && (typeof tolerance !== 'number' || !(tolerance > 0 && tolerance < 1)))
    fail('BadArgument', name, 'a number strictly between 0 and 1', tolerance);
}

function countOption(value, method, needs, most, name) {
  if (value === undefined) return 0;
  if (method !== needs) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`${name}\` applies to method '${needs}'; got method '${method}'`,
      name,
    );
  }
  if (!Number.isInteger(value) || value < 1 || value > most)
    fail('BadArgument', name, `an integer from 1 to ${most}`, value);
  return value;
}

/**
 * Reads method, tolerance, seed, features, landmarks, sampling and topK from attention()'s options (already checked
 * for unknown names) and asks the core which method runs `call` (readCall's): { method, reason, tolerance, seed, count
 * (features, landmarks or topK; 0: chosen from the tolerance), sampling }. Throws before anything is allocated.
 */
export function planAttention(engine, call, options) {
  const { seed = 0, features, landmarks, sampling, topK, method = 'auto' } = options;
  const { maxFeatures, maxLandmarks } = engine.limits;
  oneOf(method, ATTENTION_METHODS, 'options.method');
  readTolerance(options.tolerance, 'options.tolerance');
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    fail('BadArgument', 'options.seed', 'an integer from 0 to 2³² − 1', seed);
  const count =
    countOption(features, method, 'random-features', maxFeatures, 'options.features') ||
    countOption(landmarks, method, 'nystrom', maxLandmarks, 'options.landmarks') ||
    countOption(topK, method, 'top-k', MAX_TOP_K, 'options.topK');
  if (method === 'top-k' && !count) {
    throw new KernelAttentionError(
      'BadArgument',
      "method 'top-k' needs `options.topK`, the number of keys each query keeps",
      'options.topK',
    );
  }
  if (sampling !== undefined) {
    if (method !== 'nystrom') {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.sampling\` applies to method 'nystrom'; got method '${method}'`,
        'options.sampling',
      );
    }
    oneOf(sampling, engine.samplings, 'options.sampling');
  }
  const p = askAttention(engine, call, method, options.tolerance ?? 0);
  if (p.refused !== 'none') {
    const names = { method: 'options.method', kernel: 'options.kernel', dims: 'options.dim' };
    refuse('attention', p, { ...names, mask: 'options.mask', groups: 'options.groups' });
  }
  const { reason, tolerance } = p;
  return { method: p.method, reason, tolerance, seed, count, sampling: sampling ?? engine.samplings[0] };
}

/**
 * The core's plan for `call` when `method` is asked for. The keys are copied in only when the core asks for them (a
 * call 'auto' may run sparsely, whose keys' spread decides).
 */
function askAttention(engine, call, method, tolerance) {
  const shape = {
    task: 'attention',
    kernel: call.kernel,
    queries: call.I,
    keys: call.J,
    dims: call.M,
    heads: call.heads,
    masked: call.leaveOneOut || call.keyPadding !== null || call.general !== null,
    generalMask: call.general !== null,
    groups: call.queryGroups !== null,
  };
  const p = engine.plan(shape, method, tolerance);
  if (p.method !== 'auto') return p;
  // The keys in the call's frame, as the method that runs will see them.
  const keyData = (heap) => heap.f32Shifted(call.keys, call.M, frameOf(call).keys);
  return engine.withHeap((heap) =>
    engine.plan({ ...shape, keyData: keyData(heap), bandwidth: heap.f32(call.bandwidth) }, method, tolerance),
  );
}

/**
 * Reads a regression's method (`names.method`: the option it was given as) and tolerance and asks the core which
 * method runs the call: { method, reason, tolerance } (the tolerance given, or the core's default). `call`: { n, dim,
 * kernel, estimator, criterion ('fit': a model's fits; 'cv', 'aicc', 'cv-gradient': a score or a search; 'plugin':
 * the plug-in rule), exclude (blocked CV's radius), weights (given or not), span (span bandwidths), discrete (discrete
 * columns: mixed data; dim counts the continuous ones) }. `methods`: the methods the caller takes.
 * `names`: the option each field of the call was given as (a refusal names it).
 */
export function planRegression(engine, method, tolerance, call, names, methods = REGRESSION_METHODS) {
  if (regressionRules(engine).includes(method)) {
    // a method is how to compute, not how to choose h
    throw new KernelAttentionError(
      'BadArgument',
      `\`${names.method}\` is how the fit is computed (${REGRESSION_METHODS.map((a) => `'${a}'`).join(', ')}); ` +
        `to choose the bandwidth by '${method}', pass \`bandwidth: '${method}'\``,
      names.method,
    );
  }
  oneOf(method, methods, names.method);
  readTolerance(tolerance, names.method.replace(/\.[^.]*$/, '.tolerance'));
  const { n, dim, kernel, estimator, criterion, exclude = 0, weights = false, span = false, discrete = false } = call;
  const shape = {
    task: 'regression',
    kernel,
    queries: n,
    keys: n,
    dims: dim,
    estimator,
    criterion,
    weights,
    span,
    discrete,
  };
  const p = engine.plan({ ...shape, exclude: exclude > 0 }, method, tolerance ?? 0);
  if (p.refused !== 'none') {
    const fields = { kernel: 'options.kernel', dims: 'options.dim', estimator: 'options.estimator' };
    const given = { weights: 'options.weights', span: 'options.bandwidth', discrete: 'options.types' };
    refuse('regression', p, { ...fields, ...given, ...names });
  }
  return { method: p.method, reason: p.reason, tolerance: p.tolerance };
}

/**
 * The criterion a bandwidth rule computes, as the plan sees it: the score a search minimises ('cv', 'aicc'), CV by
 * its gradient ('cv-gradient'), the plug-in rule's own binned estimates ('plugin'), or, for the rules of thumb, the CV
 * score they report ('cv').
 */
export const criterionOf = (rule) => (['aicc', 'cv-gradient', 'plugin'].includes(rule) ? rule : 'cv');

/** The FitOptions tolerance of a regression planned as `plan`: its tolerance on the grid, 0 (exact) otherwise. */
export const gridTolerance = (plan) => (plan.method === 'grid' ? plan.tolerance : 0);

/**
 * Whether a model planned as `plan` keeps its sample sorted by the first coordinate: the exact engine skips the key
 * tiles far from each query (and the sparse method indexes it); the grid bins the sample in its own order.
 */
export const sortsSample = (plan, mixed = false) => plan.method !== 'grid' || mixed;

/**
 * A model's fits at bandwidth h (h32: float32 × dim, its sample x at heap offset `xp`): { method, reason, nodes (grid
 * nodes per axis, 0 off the grid), gridTolerance (FitOptions' tolerance), onGridModel }. A model planned on the grid
 * bins where a grid serves h (the core's plan_grid_nodes) and runs exactly elsewhere; any other model runs as planned.
 * `onGridModel`: its fits run on the model's grid (methods/grid/model.h), exact ones over its sample sorted once by
 * the first coordinate (the grid bins the sample in its own order, so a model planned on the grid keeps it unsorted).
 */
export function planModelFit(engine, plan, { xp, n, dim, kernel, estimator, h32, threads, mixed = false }) {
  if (plan.method !== 'grid') {
    return { method: plan.method, reason: plan.reason, nodes: 0, gridTolerance: 0, onGridModel: false };
  }
  const { nodes, reason } = engine.withHeap((heap) =>
    engine.gridNodes({
      x: xp,
      n,
      dim,
      options: fitOptions({ kernel, estimator, bandwidth: heap.f32(h32), threads, tolerance: plan.tolerance }),
    }),
  );
  // Mixed data: each fit bins its groups on its own (the core's mixed fits at the tolerance), over the sample sorted
  // by its continuous column for the rows and bandwidths that run exactly; no grid model.
  return {
    method: nodes ? 'grid' : 'exact',
    reason,
    nodes,
    gridTolerance: nodes ? plan.tolerance : 0,
    onGridModel: !mixed,
  };
}

const PLAN_REGRESSION_OPTIONS = [
  'n',
  'dim',
  'kernel',
  'method',
  'tolerance',
  'estimator',
  'rule',
  'exclude',
  'weights',
  'span',
  'types',
];

/**
 * plan('attention', queries, keys, options): what attention() with these arguments would run ({ method, reason }).
 * plan('regression', { n, dim, kernel, method, tolerance, estimator, rule, exclude, weights, span, types }): without
 * `rule`, what kernelRegression() fits a model of n points with (method 'auto', 'exact', 'grid' or 'sparse'; a grid
 * model still fits exactly at a bandwidth no grid serves, and says so in its own `reason`); with `rule`, what
 * selectBandwidth() with that rule runs (cvScore: rule 'cv'). `weights` and `span` say whether observation weights
 * and span bandwidths are given; `exclude` is blocked CV's radius; `types` the column types (discrete columns run
 * exactly).
 */
export function makePlan(engine) {
  return function plan(task, ...args) {
    oneOf(task, ['attention', 'regression'], 'task');
    if (task === 'attention') {
      const [queries, keys, options] = args;
      const call = readCall(engine, queries, keys, undefined, options, [...SHARED_OPTIONS, ...METHOD_OPTIONS]);
      const { method, reason } = planAttention(engine, call, options);
      return { method, reason };
    }
    const [options] = args;
    if (options === undefined) {
      throw new KernelAttentionError('BadArgument', '`options` is required: at least `{ n, dim }`', 'options');
    }
    checkOptionNames(options, PLAN_REGRESSION_OPTIONS);
    const { n, dim, kernel = 'gaussian', method = 'auto', tolerance, rule } = options;
    const { exclude, weights = false, span = false } = options;
    positiveInteger(n, 'options.n');
    positiveInteger(dim, 'options.dim');
    // Mixed data: the plan counts the continuous columns (categories.js).
    const mixed = readTypes(options.types, undefined, dim);
    oneOf(kernel, regressionKernels(engine), 'options.kernel');
    if (rule !== undefined) oneOf(rule, selectRules(engine), 'options.rule');
    const { estimator = rule === 'cv-gradient' ? 'nadaraya-watson' : 'local-linear' } = options;
    oneOf(estimator, engine.estimators, 'options.estimator');
    boolean(weights, 'options.weights');
    boolean(span, 'options.span');
    const criterion = rule === undefined ? 'fit' : criterionOf(rule);
    if (mixed) refuseMixed({ rule, exclude: readExclude(exclude, rule) }); // as the call itself refuses
    const columns = { dim: mixed ? mixed.continuous.length || 1 : dim, discrete: !!mixed };
    const call = { n, kernel, estimator, criterion, exclude: readExclude(exclude, rule), weights, span, ...columns };
    const names = { method: 'options.method', span: 'options.span', criterion: 'options.rule' };
    const methods = rule === undefined ? MODEL_METHODS : REGRESSION_METHODS;
    const p = planRegression(engine, method, tolerance, call, names, methods);
    return { method: p.method, reason: p.reason };
  };
}
