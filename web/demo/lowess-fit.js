// The compute worker's LOWESS fits (R's lowess(), ka.lowess) on every point: the curve through the fitted values, the
// points the robustness weights set aside. No band (LOWESS has no standard errors) and no attention views.
import { timed } from './attention-views.js';
import { robustSummary } from './fit-summaries.js';
import { curvePoints } from './sampling.js';

/**
 * LOWESS (tricube local-linear fits over the nearest f·n points, `iterations` rounds of bisquare robustness weights,
 * delta 1 % of the range of x) on every point of `sample` (sampling.js's samples), float64, sorted by x, as the fit
 * answer the page draws: the curve through the fitted values at the observations (beyond CURVE_POINTS_MAX, at that
 * many of them, evenly spaced in x order: between R's interpolation anchors, delta apart, the fit is a straight line);
 * the points the robustness weights set below ½ are ringed (robustSummary: at most 2,000).
 */
export function lowessFit(ka, sample, { frac, iterations, draft }) {
  const s = sample.lowess;
  if (!s) throw new Error('LOWESS takes one x; this data has two');
  const [r, ms] = timed(() => ka.lowess(s.x, s.y, { frac, iterations }));
  const drawn = curvePoints(s.n);
  const at = (values) => (drawn ? Float64Array.from(drawn, (i) => values[i]) : values);
  return {
    lowess: true,
    estimator: 'lowess',
    kernel: 'tricube',
    n: s.n,
    dim: 1,
    h: [],
    frac,
    iterations,
    draft,
    method: 'lowess',
    queries: at(s.x),
    mean: at(r.fitted),
    weights: at(r.weights),
    robust: robustSummary({ robustnessWeights: r.weights }, iterations, s),
    lower: null,
    upper: null,
    effectiveKeys: null,
    level: null,
    span: Math.max(2, Math.floor(frac * s.n + 1e-7)),
    warnings: [],
    view: null,
    matrix: null,
    timings: { fit: ms },
  };
}
