// The compute worker's fit of data with a category (docs/regression.md, "Mixed data"): x and the category's level as
// the library's `types: ['continuous', 'unordered']`, one model over every level, and its curve over x at each level.
// Aitchison–Aitken's λ pools the levels: at 0 each level's curve is fitted from its own points alone, at (c − 1)/c
// (c levels) every point counts the same whatever its level, one curve for all.
import { timed } from './attention-views.js';
import { localVarianceSummary, robustOption, robustSummary, warningsOf } from './fit-summaries.js';
import { DRAFT_BAND_MAX } from './sampling.js';

export const CATEGORY_TYPES = ['continuous', 'unordered'];

/** The largest λ of Aitchison–Aitken's kernel over c levels: (c − 1)/c, where the levels are pooled into one. */
export const lambdaMax = (c) => (c - 1) / c;

/** The queries (a line over x) at level `code`, as rows [x, code]. */
function atLevel(queries, code) {
  const q = new Float64Array(2 * queries.length);
  for (let i = 0; i < queries.length; i++) [q[2 * i], q[2 * i + 1]] = [queries[i], code];
  return q;
}

/** The sample's x alone (its rows are [x, code]), as robustSummary rings points of one x. */
function xColumn(s) {
  const x = new Float64Array(s.n);
  for (let i = 0; i < s.n; i++) x[i] = s.x[2 * i];
  return { ...s, dim: 1, x };
}

/**
 * The fit at bandwidth h (its first entry) and λ (`lambda`; none chosen yet: 0, each level alone), `grid` where the
 * library's plan for it is the grid, from `modelAt`
 * (the worker's kept model when only h moves). Answers as the worker's 1-D fit does, its curve fields those of the
 * first level, plus `curves` (per level: label, mean, lower, upper), `lambda` and `lambdaMax`; the effective points
 * per query are the smallest over the levels. No attention views: they show one curve's weights.
 */
export function categoryFit(ka, sample, modelAt, settings) {
  const { h, kernel, estimator, level, draft, method, robust = 0, variance = 'global', grid = false } = settings;
  // On the grid (the plan's, `grid`) every point, as a continuous fit takes; while a slider moves, up to the draft
  // band's size (each draft a model with its band at every level); otherwise the exact fits' samples.
  const s =
    draft && (!grid || robust > 0 || sample.n > DRAFT_BAND_MAX)
      ? sample.draft
      : grid
        ? sample.all
        : variance === 'local'
          ? sample.local
          : sample.full;
  const options = { dim: 2, types: CATEGORY_TYPES, kernel, estimator, method, ...robustOption(robust) };
  const bandwidth = [h[0], settings.lambda ?? 0];
  const [{ model, owned }, fitMs] = timed(() => modelAt(ka, s, options, bandwidth));
  try {
    const [curves, predictMs] = timed(() =>
      sample.labels.map((_, code) => model.predictInterval(atLevel(sample.queries, code), { level, variance })),
    );
    const effectiveKeys = curves[0].effectiveKeys.map((_, i) => Math.min(...curves.map((c) => c.effectiveKeys[i])));
    return {
      n: s.n,
      viewN: s.n,
      dim: 1,
      h: [bandwidth[0]],
      lambda: bandwidth[1],
      lambdaMax: lambdaMax(sample.labels.length),
      category: sample.category,
      kernel,
      estimator,
      level,
      draft,
      queries: sample.queries,
      ...curves[0],
      effectiveKeys,
      curves: curves.map(({ mean, lower, upper }, code) => ({ label: sample.labels[code], mean, lower, upper })),
      edf: model.effectiveDegreesOfFreedom,
      sigma: Math.sqrt(model.residualVariance[0]),
      method: model.method,
      reason: model.reason,
      warnings: warningsOf(model),
      robust: robustSummary(model, robust, xColumn(s)),
      variance,
      localVariance: variance === 'local' ? localVarianceSummary(model) : null,
      view: null,
      matrix: null,
      timings: { fit: fitMs, predict: predictMs },
    };
  } finally {
    if (owned) model.dispose();
  }
}
