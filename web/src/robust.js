// Robustness for any kernel regression: Cleveland's (1979) bisquare reweighting, the step LOWESS iterates
// (docs/regression.md, "Robustness"). Cleveland, W. S. (1979), Robust locally weighted regression and smoothing
// scatterplots, JASA 74, 829–836.
import { describe, KernelAttentionError } from './errors.js';
import { checkOptionNames, positiveInteger } from './validate.js';

/** `options.robust`: undefined or false → null; true → { iterations: 3 }; { iterations } with a positive integer. */
export function readRobust(robust, width) {
  if (robust === undefined || robust === false) return null;
  if (robust !== true && (robust === null || typeof robust !== 'object' || Array.isArray(robust))) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`options.robust\` must be true, false or { iterations }; got ${describe(robust)}`,
      'options.robust',
    );
  }
  checkOptionNames(robust === true ? undefined : robust, ['iterations'], 'options.robust');
  const { iterations = 3 } = robust === true ? {} : robust;
  positiveInteger(iterations, 'options.robust.iterations');
  if (width !== 1) {
    // A residual per observation needs one y column (a norm across columns would be a choice of scale).
    throw new KernelAttentionError(
      'BadShape',
      `\`options.robust\` needs one column of y (one residual per observation); got ${width} columns`,
      'options.robust',
    );
  }
  return { iterations };
}

// The fits run in float32, whose rounding of a fitted value is about 1e-7–1e-6 of range(y): a residual scale below
// this fraction of range(y) is rounding, i.e. the fit is already exact (R stops at 6·median < 1e-7·mean|y|, in double).
const EXACT_SCALE = 1e-5;

/**
 * One bisquare step: from the residuals r (n, input order) of the observations with `weights` > 0 (all when
 * absent), s = 6·median|r| and the robustness weights (1 − (r/s)²)² for |r| < s, else 0. Returns null when
 * s ≤ 1e-5·range(y) (the fit is exact: R stops iterating there too).
 */
export function bisquareWeights(residuals, weights, rangeY) {
  const n = residuals.length;
  const abs = [];
  // A point the fit cannot reach (NaN: a compact kernel, the point's own weight 0) counts as infinitely far.
  for (let j = 0; j < n; j++)
    if (!weights || weights[j] > 0) abs.push(Number.isNaN(residuals[j]) ? Infinity : Math.abs(residuals[j]));
  abs.sort((a, b) => a - b);
  const m = abs.length;
  const median = m % 2 ? abs[(m - 1) / 2] : (abs[m / 2 - 1] + abs[m / 2]) / 2;
  const s = 6 * median;
  if (!(s > EXACT_SCALE * rangeY)) return null;
  if (s === Infinity) return null; // most points out of the fit's reach: nothing to weigh them by
  const out = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    const u = residuals[j] / s;
    out[j] = Math.abs(u) < 1 ? (1 - u * u) ** 2 : 0;
  }
  return { weights: out, scale: s };
}

/**
 * The bisquare iteration on a fixed bandwidth, as a generator for progress.js's drive(): `fit(weights)` (weights: n,
 * input order, or undefined for none) returns the fitted values at the sample (n, input order). Starts from the fit
 * with the observation weights ω, then `iterations` times computes robustness weights and (but for the last time,
 * whose fit is the caller's model) refits with ω × robustness weight, yielding `{ done, total: iterations }` after
 * each fit. Returns { weights (ω × robustness, for the final fit), robustnessWeights (Float64Array n), iterations
 * (how many ran: fewer when the fit became exact), scale (the last s) }.
 */
export function* robustSteps(fit, y, observationWeights, iterations) {
  const n = y.length;
  let lo = Infinity;
  let hi = -Infinity;
  for (let j = 0; j < n; j++) {
    lo = Math.min(lo, y[j]);
    hi = Math.max(hi, y[j]);
  }
  let robustnessWeights = new Float64Array(n).fill(1);
  let weights = observationWeights;
  let fitted = fit(weights);
  let done = 0;
  let scale = null;
  const residuals = new Float64Array(n);
  yield { done: 1, total: iterations };
  while (done < iterations) {
    for (let j = 0; j < n; j++) residuals[j] = y[j] - fitted[j];
    const step = bisquareWeights(residuals, observationWeights, hi - lo);
    if (!step) break;
    robustnessWeights = step.weights;
    scale = step.scale;
    weights = observationWeights ? robustnessWeights.map((r, j) => r * observationWeights[j]) : robustnessWeights;
    done++;
    // (Some weight stays positive: at least half the points have |r| <= median < s.)
    if (done < iterations) {
      fitted = fit(weights);
      yield { done: done + 1, total: iterations };
    }
  }
  return { weights, robustnessWeights, iterations: done, scale };
}
