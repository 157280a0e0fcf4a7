// The compute worker's loess fits (R's loess(), ka.loess): the curve (1-D) or surface (2-D) on every point, R's band
// in 1-D (predictInterval's stderr: R's predict(se = TRUE), t quantiles with R's degrees of freedom), the statistics
// R prints, and the points the symmetric family's robustness weights set aside; and the fit at the observations for
// the CSV export.
import { timed } from './attention-views.js';
import { robustSummary } from './fit-summaries.js';

// Fits of up to this many points take every point even while the span is dragged (10⁵ 1-D points: about 0.05 s with
// the band); beyond, a draft takes the draft sample and the release fits them all.
const DRAFT_ALL = 100_000;
// R's loess.control(iterations = 4): the symmetric family's fits in all, the last three with bisquare weights.
const ITERATIONS = 4;

/** ka.loess's options from the page's settings: R's defaults otherwise (interpolate, approximate statistics). */
const optionsOf = (dim, { loessSpan, degree, family }) => ({ dim, span: loessSpan, degree, family });

/** The library's words for a fit R warns about, as the page lists warnings. */
const warningsOf = (model) =>
  model.pseudoInverse
    ? [
        {
          code: 'pseudoinverse',
          message:
            'Some local fits were singular and used a pseudoinverse (R warns "pseudoinverse used"): the span ' +
            'holds too few distinct x values for the degree; a larger span or degree 1 avoids it.',
        },
      ]
    : [];

/**
 * A loess fit of the data (`sample`: sampling.js's samples) with the page's settings, as the fit answer the page
 * draws: the curve or surface at the sample's queries, in 1-D with R's band at `level`, and R's statistics.
 * `stage(text)` names what runs for the busy sign.
 */
export function loessFit(ka, sample, settings, stage) {
  const { level, draft } = settings;
  const s = draft && sample.n > DRAFT_ALL ? sample.draft : sample.all;
  stage('the loess fit (every point)');
  const [model, fitMs] = timed(() => ka.loess(s.x, s.y, optionsOf(s.dim, settings)));
  try {
    const queries = sample.queries;
    const timings = { fit: fitMs };
    let band;
    if (s.dim === 1) {
      stage('R’s band (predict with se)');
      [band, timings.predict] = timed(() => model.predictInterval(queries, { level }));
    } else {
      // The 2-D surface is drawn without a band: no standard errors to compute.
      const [mean, ms] = timed(() => model.predict(queries));
      band = { mean, stderr: null, lower: null, upper: null, quantile: null };
      timings.predict = ms;
    }
    return {
      loess: true,
      estimator: 'loess',
      kernel: 'tricube',
      method: 'loess',
      n: s.n,
      dim: s.dim,
      h: [],
      draft,
      level,
      loessSpan: settings.loessSpan,
      degree: settings.degree,
      family: settings.family,
      // Each local fit's points: ⌊n·f⌋ (all of them above f = 1).
      q: Math.min(s.n, Math.floor(s.n * settings.loessSpan)),
      queries,
      mean: band.mean,
      stderr: band.stderr,
      lower: band.lower,
      upper: band.upper,
      quantile: band.quantile,
      effectiveKeys: null,
      enp: model.enp,
      residualScale: model.residualScale,
      traceHat: model.traceHat,
      degreesOfFreedom: model.degreesOfFreedom,
      robust: settings.family === 'symmetric' ? robustSummary(model, ITERATIONS, s) : null,
      warnings: warningsOf(model),
      view: null,
      matrix: null,
      timings,
    };
  } finally {
    model.dispose();
  }
}

/** The loess fit at every observation (the data's order; float64, written with all its digits) and, in 1-D, R's band. */
export function loessObservations(ka, sample, settings) {
  const model = ka.loess(sample.x64, sample.y64, optionsOf(sample.dim, settings));
  try {
    const band = sample.dim === 1 ? model.predictInterval(sample.x64, { level: settings.level }) : null;
    return {
      mean: model.fitted,
      lower: band?.lower ?? null,
      upper: band?.upper ?? null,
      float64: true,
      level: settings.level,
    };
  } finally {
    model.dispose();
  }
}
