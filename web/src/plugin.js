// selectBandwidth's rule 'plugin': the direct plug-in bandwidth of Ruppert, Sheather & Wand (1995), as KernSmooth's
// dpill() computes it (the core's plugin_bandwidth, cpp/core/stats/plugin.h; docs/regression.md, "Bandwidth
// selection"), for 1-D local-linear fits.
import { checkResult, KernelAttentionError } from './errors.js';

/** What the plug-in rule cannot be asked for, each an error naming its option; `rule` names it as the caller did. */
export function checkPlugin(engine, { dim, width, estimator, kernel, weights, rule }) {
  const refuse = (argument, why) => {
    throw new KernelAttentionError('BadArgument', `\`${argument}\` ${why}`, argument);
  };
  if (dim !== 1) refuse('options.dim', `must be 1 for ${rule}: dpill's plug-in rule is for one regressor; got ${dim}`);
  if (width !== 1) refuse('y', `must have one column for ${rule}; got ${width}`);
  if (estimator !== 'local-linear') {
    refuse(
      'options.estimator',
      `must be 'local-linear' for ${rule}: its formula is the asymptotically optimal bandwidth of a local-linear ` +
        "fit (Ruppert, Sheather & Wand 1995); Nadaraya–Watson's bias has another form and a local-quadratic fit's " +
        `another order; got '${estimator}'`,
    );
  }
  if (!Number.isFinite(engine.pluginKernelFactor({ kernel }))) {
    refuse(
      'options.kernel',
      `'${kernel}' has no finite second moment, so no plug-in bandwidth (${rule}); use another kernel or rule 'cv'`,
    );
  }
  if (weights !== undefined) refuse('options.weights', `are not supported by ${rule} (dpill has none); use rule 'cv'`);
}

/** Why the core could not compute the rule on this sample (its PluginIssue), as an error naming x or y. */
function issueError(issue, n) {
  const why = {
    'too-few-points': ['x', `must hold at least 6 points after the 1 % at each end is trimmed; got ${n} points`],
    'too-few-distinct': ['x', 'must take at least 5 distinct values: the pilot fits quartics'],
    'exact-quartic': ['y', 'is fitted exactly by the pilot quartics: there is no residual variance to estimate'],
    'flat-quartic': ['y', "has a pilot quartic with θ24 = 0, so the rule's pilot bandwidth is infinite"],
    'sparse-pilot': [
      'x',
      "has gaps wider than the rule's pilot bandwidth: a pilot fit around some point sees too few others (R's " +
        'dpill fails here too)',
    ],
    'no-curvature': ['y', 'shows no curvature (the estimated m′′ vanishes), so the plug-in bandwidth is infinite'],
    'no-variance': ['y', 'gives a residual variance estimate ≤ 0'],
  }[issue];
  return new KernelAttentionError(
    'BadArgument',
    `\`${why[0]}\` ${why[1]}; the plug-in rule cannot be computed: choose a bandwidth or use rule 'cv'`,
    why[0],
  );
}

/**
 * The selection for rule 'plugin' as a generator of one step: dpill's h on the float64 sample, in `s.kernel`'s
 * bandwidth (plugin_kernel_factor). No CV score: the rule's point is not to evaluate one (at 10⁶ points a CV score
 * costs several times the rule); cvScore() gives it at the bandwidth chosen.
 */
export function* pluginSteps(engine, threads, s, stepwise) {
  const { n, x, y, plan } = s;
  const r = engine.withHeap((heap) => engine.pluginBandwidth({ x: heap.f64(x), y: heap.f64(y), n }));
  if (r.status === 'BadArgument' && r.issue !== 'none') throw issueError(r.issue, n);
  checkResult(r);
  const result = {
    rule: 'plugin',
    method: plan.method,
    reason: plan.reason,
    bandwidth: Float64Array.of(r.h * engine.pluginKernelFactor({ kernel: s.kernel })),
    score: null,
    curve: { bandwidths: new Float64Array(0), scores: new Float64Array(0) },
    plugin: {
      gaussianBandwidth: r.h,
      n: r.n,
      blocks: r.blocks,
      maxBlocks: r.blocksMax,
      sigma2: r.sigma2,
      theta22: r.theta22,
      sigma2Quartic: r.sigma2Quartic,
      theta24Quartic: r.theta24Quartic,
      pilotCurvature: r.gamma,
      pilotVariance: r.lambda,
    },
  };
  if (stepwise) yield { done: 1, total: 1 };
  return result;
}
