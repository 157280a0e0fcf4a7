// Local (heteroscedastic) variance for confidence bands: σ²(x) from a local-linear smooth of the squared residuals
// with its own bandwidth (Fan & Yao 1998, Biometrika 85, 645–660), smoothed on the log scale as Chen, Cheng & Peng
// (2009, J. Statist. Plann. Inference 139, 236–245) do. docs/regression.md, "Local variance", has the measurements
// behind the choices.

// The floor of σ²(x), as a fraction of the global residual variance σ̂²: a band of (nearly) zero width where the
// residuals happen to be small would claim a certainty the data do not give.
export const VARIANCE_FLOOR = 1e-2;

/**
 * What the variance smoother is fitted to: z_jc = ln(r²_jc + σ̂²_c / n), r_jc = y_jc − ŷ_jc (n × width, input
 * order). The log scale keeps σ²(x) positive and tames the χ²₁ tail of r², on which leave-one-out CV picks a
 * bandwidth near a straight line; the offset keeps an exact residual finite. A column with σ̂² = 0 (an exact fit)
 * gets z = 0: its scale below is 0.
 */
export function logSquaredResiduals(y, fitted, sigma2, n, width) {
  const z = new Float64Array(n * width);
  for (let j = 0; j < n; j++) {
    for (let c = 0; c < width; c++) {
      const r = y[j * width + c] - fitted[j * width + c];
      z[j * width + c] = sigma2[c] > 0 ? Math.log(r * r + sigma2[c] / n) : 0;
    }
  }
  return z;
}

/**
 * The factor per column that makes the weighted mean of exp(smooth(x_j)) over the sample σ̂²_c (exp of a smoothed
 * log is a geometric mean, about 0.28 σ² for normal noise; this also carries the degrees-of-freedom correction of
 * σ̂², regression.h). `smooth`: the variance smoother at the sample (n × width); `weights`: n or undefined.
 */
export function varianceScale(smooth, weights, sigma2, n, width) {
  const scale = new Float64Array(width);
  for (let c = 0; c < width; c++) {
    let sum = 0;
    let total = 0;
    for (let j = 0; j < n; j++) {
      const w = weights ? weights[j] : 1;
      const v = Math.exp(smooth[j * width + c]);
      if (w > 0 && Number.isFinite(v)) {
        sum += w * v;
        total += w;
      }
    }
    scale[c] = sigma2[c] > 0 && sum > 0 ? (sigma2[c] * total) / sum : 0;
  }
  return scale;
}

/**
 * σ²(q) (I × width) from the variance smoother's predictions `smooth` (I × width): scale_c · exp(smooth), floored
 * at VARIANCE_FLOOR · σ̂²_c. NaN (a query with no sample point in reach) stays NaN.
 */
export function localVarianceAt(smooth, scale, sigma2, width) {
  const out = new Float64Array(smooth.length);
  for (let at = 0; at < smooth.length; at++) {
    const c = at % width;
    const v = scale[c] * Math.exp(smooth[at]);
    out[at] = Number.isNaN(v) ? NaN : Math.max(v, VARIANCE_FLOOR * sigma2[c]);
  }
  return out;
}
