// selectBandwidth()'s options read and checked into what its search needs (search.js, gradient-search.js): the rule,
// the method the plan gives it (plan.js), the sample, the gradient search's own options.
import { KernelAttentionError } from './errors.js';
import { smoothCompact } from './attention-gradients.js';
import { criterionOf, planRegression } from './plan.js';
import { checkPlugin } from './plugin.js';
import { readExclude, regressionKernels, selectRules } from './sample.js';
import { readColumns, refuseMixed } from './categories.js';
import { boolean, checkOptionNames, oneOf, positiveInteger } from './validate.js';
import { deprecated, renamed } from './deprecate.js';

export const SELECT_OPTIONS = [
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
  'types',
  'orderedKernel',
];
export const METRICS = ['diagonal', 'full'];

// As a destructuring default: only an absent option (undefined) takes it; null stays, for the check to name.
const orDefault = (value, fallback) => (value === undefined ? fallback : value);

/**
 * selectBandwidth's rule and computation from its options: `rule`, and `method` ('auto' | 'exact' | 'grid'), with
 * the names before 0.2.0 read with a deprecation message: `method` naming a rule (the two value sets are disjoint)
 * and `approximation`.
 */
function readRuleAndMethod(engine, options) {
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

/** What the gradient search (select_cv_gradient) cannot do but for the method (plan.js), each an error naming its option. */
function checkGradientSearch(engine, { estimator, kernel, weights }) {
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
}

/**
 * Validates selectBandwidth's arguments (with `known` option names) and plans its criterion; returns what the search
 * needs: the sample, the options, and `plan` ({ method, reason, tolerance }: what the criterion runs on, and why).
 */
export function readSelection(engine, x, y, options, known) {
  if (options === undefined) {
    throw new KernelAttentionError(
      'BadArgument',
      '`options` is required: at least `{ dim }`, the number of columns of x',
      'options',
    );
  }
  checkOptionNames(options, known);
  const { rule, method, methodName } = readRuleAndMethod(engine, options);
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
  // Mixed data (categories.js): the sample's x and `dim` below are its continuous columns.
  const sample = readColumns(x, y, options, weights);
  oneOf(kernel, regressionKernels(engine), 'options.kernel');
  oneOf(estimator, engine.estimators, 'options.estimator');
  oneOf(rule, selectRules(engine), 'options.rule');
  boolean(perDimension, 'options.perDimension');
  oneOf(metric, METRICS, 'options.metric');
  positiveInteger(maxIterations, 'options.maxIterations');
  const exclude = readExclude(options.exclude, rule);
  if (sample.mixed) refuseMixed({ rule, exclude });
  const gradient = rule === 'cv-gradient';
  if (gradient) checkGradientSearch(engine, { estimator, kernel, weights });
  if (rule === 'plugin') {
    const { width } = sample;
    checkPlugin(engine, { dim, width, estimator, kernel, weights, rule: "rule 'plugin'" });
  }
  if (!gradient) {
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
  const call = {
    n: sample.n,
    dim: sample.dim,
    kernel,
    estimator,
    criterion: criterionOf(rule),
    exclude,
    weights: !!weights,
    discrete: !!sample.mixed,
  };
  const plan = planRegression(engine, method, options.tolerance, call, {
    method: methodName,
    criterion: 'options.rule',
  });
  return { ...sample, kernel, estimator, rule, perDimension, plan, metric, maxIterations, exclude };
}
