// What the compute worker reports of a fitted model besides its curve: robustness, the derivative, the local
// variance smoother, a span's bandwidths, the library's warnings.

/** kernelRegression's `robust` option for `iterations` rounds of bisquare weights (0: none). */
export const robustOption = (iterations) => (iterations > 0 ? { robust: { iterations } } : {});

const RINGED_MAX = 2_000; // points set aside by robustness that the plot rings, at most (the first in x order)

/**
 * What robustness did: its rounds, how many points of the sample `s` it gave a weight below ½, and those points
 * (`ringX`, `ringY`: at most RINGED_MAX) for the plot to ring; null without it.
 */
export function robustSummary(model, iterations, s) {
  const w = model.robustnessWeights;
  if (!(iterations > 0) || !w) return null;
  const ringX = [];
  const ringY = [];
  let low = 0;
  for (let i = 0; i < w.length; i++) {
    if (!(w[i] < 0.5)) continue;
    low++;
    if (s.dim === 1 && ringX.length < RINGED_MAX) {
      ringX.push(s.x[i]);
      ringY.push(s.y[i]);
    }
  }
  return { iterations, low, n: w.length, ringX: Float64Array.from(ringX), ringY: Float64Array.from(ringY) };
}

/**
 * The fit's derivative m′(q) at the queries (model.gradient: exact, in double) with a pointwise band ± z·stderr,
 * z the curve's band's own quantile (its half-width over its stderr), so both are of the same level; like the curve's
 * it ignores smoothing bias. A kernel without a derivative (the uniform) comes back as `slopeError`.
 */
export function slopeOf(model, queries, band) {
  try {
    const { gradient, stderr } = model.gradient(queries);
    const k = band.stderr.findIndex((e) => e > 0);
    const z = k < 0 ? 0 : (band.upper[k] - band.mean[k]) / band.stderr[k];
    return {
      slope: gradient,
      slopeLower: gradient.map((g, i) => g - z * stderr[i]),
      slopeUpper: gradient.map((g, i) => g + z * stderr[i]),
    };
  } catch (error) {
    return { slopeError: String(error?.message || error) };
  }
}

/** The local variance smoother's bandwidth and warnings, once predictInterval has made it. */
export function localVarianceSummary(model) {
  const v = model.localVariance;
  return v && { bandwidth: Array.from(v.bandwidth), warnings: warningsOf(v) ?? [] };
}

/** The library's `warnings` ({ code, message }), when the result carries them (older builds do not). */
export const warningsOf = (result) =>
  Array.isArray(result?.warnings) ? result.warnings.map(({ code, message }) => ({ code, message })) : undefined;

/**
 * What a span fit's bandwidths were: the span, k (the library's ⌈f·n⌉, a product within 10⁻⁷ of an integer counting
 * as it) and, per dimension, the smallest, median and largest h over the queries (`bandwidths`, I × dim).
 */
export function spanSummary(f, n, bandwidths, dim) {
  const perDim = Array.from({ length: dim }, (_, d) =>
    bandwidths.filter((_, i) => i % dim === d && Number.isFinite(bandwidths[i])).sort(),
  );
  const product = f * n;
  const k = Math.max(
    1,
    Math.min(n, Math.abs(product - Math.round(product)) < 1e-7 ? Math.round(product) : Math.ceil(product)),
  );
  return {
    f,
    k,
    min: perDim.map((v) => v[0]),
    median: perDim.map((v) => v[v.length >> 1]),
    max: perDim.map((v) => v[v.length - 1]),
  };
}
