// A kernelRegression model's pointwise bands: predictInterval's level, its standard errors from σ̂² (one per column)
// or from the local variance σ²(x) (variance.js), whose smoother is itself a kernelRegression, made by the factory
// the model is given (regression.js), so that this file needs no import of it.
import { describe, KernelAttentionError } from './errors.js';
import { CONTROL_OPTIONS, drive, readControl } from './progress.js';
import { localVarianceAt, logSquaredResiduals, VARIANCE_FLOOR, varianceScale } from './variance.js';
import { checkOptionNames, oneOf } from './validate.js';

/**
 * The standard normal quantile Φ⁻¹(p), 0 < p < 1: Acklam's rational approximation (relative error below 1.2e-9),
 * enough for confidence levels.
 */
function normalQuantile(p) {
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q) =>
    (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) /
    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
  );
}

/**
 * The rows of `sample` ({ x, y }, input order) with a positive weight and a finite fitted value, with those fitted
 * values and weights: { x, y, fitted, weights (undefined when all weights are 1), n }.
 */
function positiveRows(sample, fitted, weights, n, dim, width) {
  const keep = [];
  for (let j = 0; j < n; j++) {
    let finite = true;
    for (let c = 0; c < width; c++) finite &&= Number.isFinite(fitted[j * width + c]);
    if (finite && (!weights || weights[j] > 0)) keep.push(j);
  }
  if (keep.length === n) return { x: sample.x, y: sample.y, fitted, weights, n };
  const rows = (a, cols) => {
    const out = new Float64Array(keep.length * cols);
    keep.forEach((j, k) => out.set(a.subarray(j * cols, (j + 1) * cols), k * cols));
    return out;
  };
  return {
    x: rows(sample.x, dim),
    y: rows(sample.y, width),
    fitted: rows(Float64Array.from(fitted), width),
    weights: weights && rows(weights, 1),
    n: keep.length,
  };
}

/** Reads predictInterval's level (only a missing one defaults: null is an error). */
function readLevel(intervalOptions, known) {
  checkOptionNames(intervalOptions, known, 'intervalOptions');
  const { level = 0.95 } = intervalOptions ?? {};
  if (typeof level !== 'number' || !(level > 0 && level < 1)) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`intervalOptions.level\` must be a number strictly between 0 and 1; got ${describe(level)}`,
      'intervalOptions.level',
    );
  }
  return level;
}

/** Reads predictInterval's variance: 'global' (one σ̂² per column, the default) or 'local' (σ²(x), variance.js). */
const readVariance = ({ variance = 'global' } = {}) => oneOf(variance, ['global', 'local'], 'intervalOptions.variance');

/**
 * The bands of the model whose fits are `m` (model-fit.js) over its sample `sample` ({ x, y } in double, input order)
 * with observation weights `fitWeights`: { predictInterval, predictIntervalAsync, localVariance (a getter), dispose }.
 * `regressions` ({ kernelRegression, kernelRegressionAsync }) make the variance smoother.
 */
export function modelIntervals(m, { sample, fitWeights }, regressions) {
  const { n, width, kernel, mixed } = m;
  const dim = m.userDim; // the sample's columns as given (mixed data: discrete ones as codes)
  const sigma2 = () => m.summarize().sigma2;

  // The local variance estimate (variance.js), made on first use: the variance smoother (a local-linear
  // kernelRegression of the log squared residuals on x, its bandwidth chosen by leave-one-out CV) and its scale.
  let variance = null;
  const varianceSample = () => {
    // The points of weight 0 (given, or rejected by robustness) take no part; the fit may not reach them (NaN).
    const fitted = drive(m.fitSteps(sample.x, false, false, 'nan'), null).mean;
    const s = positiveRows(sample, fitted, fitWeights, n, dim, width);
    return {
      ...s,
      z: logSquaredResiduals(s.y, s.fitted, sigma2(), s.n, width),
      options: {
        dim,
        kernel,
        estimator: 'local-linear',
        bandwidth: 'cv',
        ...(s.weights && { weights: s.weights }),
        ...(mixed && { types: mixed.types, orderedKernel: mixed.orderedKernel }),
      },
    };
  };
  const keepVariance = (smoother, s) => {
    const scale = varianceScale(smoother.predict(s.x), s.weights, sigma2(), s.n, width);
    variance = {
      smoother,
      scale,
      info: Object.freeze({
        bandwidth: smoother.bandwidth,
        selection: smoother.selection,
        effectiveDegreesOfFreedom: smoother.effectiveDegreesOfFreedom,
        warnings: smoother.warnings,
        scale: Float64Array.from(scale),
        floor: sigma2().map((s) => VARIANCE_FLOOR * s),
      }),
    };
    return variance;
  };
  const localVariance = () => {
    m.live();
    if (variance) return variance;
    const s = varianceSample();
    return keepVariance(regressions.kernelRegression(s.x, s.z, s.options), s);
  };
  const localVarianceAsync = async (signal) => {
    m.live();
    if (variance) return variance;
    const s = varianceSample();
    const smoother = await regressions.kernelRegressionAsync(s.x, s.z, { ...s.options, signal });
    m.live();
    if (variance) {
      // another call estimated it meanwhile
      smoother.dispose();
      return variance;
    }
    return keepVariance(smoother, s);
  };
  // σ²(q) per query row and column, I × width. The smoother's sample holds codes where a discrete column had labels.
  const varianceAt = (v, xq) => localVarianceAt(v.smoother.predict(m.codedQueries(xq)), v.scale, sigma2(), width);

  function interval(fit, level, local) {
    const z = normalQuantile(0.5 + level / 2);
    const stderr = new Float64Array(fit.I * width);
    const lower = new Float64Array(fit.I * width);
    const upper = new Float64Array(fit.I * width);
    for (let i = 0; i < fit.I; i++) {
      for (let c = 0; c < width; c++) {
        const at = i * width + c;
        const s = Math.sqrt((local ? local[at] : sigma2()[c]) * fit.sumSq[i]);
        stderr[at] = s;
        lower[at] = fit.mean[at] - z * s;
        upper[at] = fit.mean[at] + z * s;
      }
    }
    const result = {
      mean: fit.mean,
      lower,
      upper,
      stderr,
      effectiveKeys: fit.effectiveKeys,
      logDenominator: fit.logDenominator,
      errorEstimate: fit.errorEstimate,
    };
    if (fit.queryScales) result.bandwidths = m.spanBandwidths(fit.queryScales);
    return result;
  }

  return {
    predictInterval(xq, intervalOptions) {
      m.live();
      const level = readLevel(intervalOptions, ['level', 'variance']);
      const local = readVariance(intervalOptions) === 'local';
      const fit = drive(m.fitSteps(xq, true, false), null);
      return interval(fit, level, local ? varianceAt(localVariance(), xq) : null);
    },
    /** predictInterval() in steps, as predictAsync(); `intervalOptions` adds `signal` and `onProgress` to `level`. */
    async predictIntervalAsync(xq, intervalOptions) {
      m.live();
      const level = readLevel(intervalOptions, ['level', 'variance', ...CONTROL_OPTIONS]);
      const local = readVariance(intervalOptions) === 'local';
      const control = readControl(intervalOptions, 'intervalOptions');
      const fit = await drive(m.fitSteps(xq, true, true), control);
      return interval(fit, level, local ? varianceAt(await localVarianceAsync(control.signal), xq) : null);
    },
    /** The local variance estimate, once made: { bandwidth, selection, …, scale, floor }; null before. */
    get localVariance() {
      return variance?.info ?? null;
    },
    dispose() {
      sample = fitWeights = null;
      variance?.smoother.dispose();
      variance = null;
    },
  };
}
