// The demo's compute worker: every call into kernel-attention runs here, so the page's main thread only draws.
// Messages are { id, op, ... }; each answer carries the id it answers. The samples are sampling.js's, the attention
// views attention-views.js's, what is said of a model besides its curve fit-summaries.js's, loess loess-fit.js's,
// LOWESS lowess-fit.js's.
import { init } from '../src/index.js';
import { APPROX_METHODS, approximateView, attentionMatrix, attentionView, timed } from './attention-views.js';
import {
  localVarianceSummary,
  robustOption,
  robustSummary,
  slopeOf,
  spanSummary,
  warningsOf,
} from './fit-summaries.js';
import { categoryFit, CATEGORY_TYPES } from './category-fit.js';
import { loessFit, loessObservations } from './loess-fit.js';
import { lowessFit } from './lowess-fit.js';
import { categorySamples, DRAFT_BAND_MAX, sampleSizes, samplesOf } from './sampling.js';

const LEARNING_RATE = 0.1; // Adam's step on log h: h moves by up to about 10 % a step

// A worker's Content-Security-Policy violations fire here, not on the page's document: the page records them.
self.addEventListener('securitypolicyviolation', (e) =>
  postMessage({ op: 'csp', violation: `${e.violatedDirective} ${e.blockedURI}` }),
);

const threads = new URLSearchParams(self.location.search).get('threads');
const kaReady = init(threads ? { threads: threads === 'auto' ? 'auto' : Number(threads) } : {});
let sample = null;
let learner = null; // the attention pooling that "Learn h" trains (learnStart … learnStep)
// The last fit's model, kept while only h moves (the slider): withBandwidth() shares its sample in the wasm heap and,
// on a grid, its bins, so a new h re-convolves instead of fitting again. { key, sample, model }; disposed when the
// data or any other setting changes.
let kept = null;
let searching = null; // the AbortController of the bandwidth search under way (select)

/**
 * A model of `s` under `options` at bandwidth h, from the kept one when only h differs, and whether the caller owns
 * it (must dispose it): a kept model stays for the next h.
 */
function modelAt(ka, s, options, h) {
  const key = JSON.stringify(options);
  if (kept && (kept.key !== key || kept.sample !== s)) forgetModel();
  if (kept) return { model: kept.model.withBandwidth(h), owned: true };
  const model = ka.kernelRegression(s.x, s.y, { ...options, bandwidth: h });
  kept = { key, sample: s, model };
  return { model, owned: false };
}

function forgetModel() {
  kept?.model.dispose();
  kept = null;
}

/**
 * The library's plan for a model of all the data under these settings (ka.plan: { method, reason }), which decides
 * whether a fit takes every point (on the grid) or a sample, with no rule of the demo's own; a method asked for that
 * cannot serve the call (the grid for a span) is refused there, with the plan's reason, and the page shows it.
 */
const planFor = (ka, { kernel, estimator, method, span = 0, rule }) =>
  ka.plan('regression', {
    n: sample.n,
    dim: sample.dim,
    kernel,
    estimator,
    method,
    span: span > 0,
    ...(rule && { rule }),
    ...types(),
  });

/** With a category (sample.labels): the library's column types of the rows [x, code]; else no option. */
const types = () => (sample.labels ? { types: CATEGORY_TYPES } : {});

/** Two continuous x (no category): the 2-D searches' own sample (sampling.js's `planar`). */
const planar = () => sample.dim === 2 && !sample.labels;

/**
 * The sample a kernel fit takes (sampling.js says what each cap costs): every point on the grid and a sample where
 * the fit runs exactly; a span fit's by its kernel's reach; the local-σ band's; while a slider moves, the draft sample
 * where the fit runs exactly or refits robustly, else the committed fit's own.
 */
function fitSample({ kernel, span, variance, robust, grid, draft }) {
  if (draft && (!grid || span || robust > 0)) return sample.draft;
  if (span) return sample.spanOf(kernel);
  // On the grid, every point for one x, the planar sample for two (Gaussian, no category).
  if (variance === 'local') {
    if (grid && sample.dim === 1) return sample.all;
    return grid && planar() && kernel === 'gaussian' ? sample.planar : sample.local;
  }
  return grid ? sample.all : sample.full;
}

const handlers = {
  hello(ka) {
    return { build: ka.build, threads: ka.threads, simd: ka.simd, isolated: self.crossOriginIsolated === true };
  },

  data(ka, { x, y, dim, codes = null, labels = null, category = null }) {
    searching?.abort();
    learner?.dispose();
    learner = null;
    forgetModel();
    sample = codes ? Object.assign(categorySamples(x, y, codes, labels), { category }) : samplesOf(x, y, dim);
    return sampleSizes(sample.n);
  },

  /**
   * The bandwidth search, a step at a time (selectBandwidthAsync): each evaluation is reported to the page for the
   * busy sign's progress, and a newer search or new data stops this one between steps.
   */
  async select(ka, { method, kernel, estimator, approximation, exclude = 0 }) {
    searching?.abort();
    const control = new AbortController();
    searching = control;
    // Where the library's plan for the search over every point is the grid, a 1-D search (or one x with a category)
    // takes every point (AICc's up to AICC_MAX); a 2-D Gaussian CV or AICc search, local-linear or Nadaraya–Watson (exact below 5,000 points, the
    // grid from there), up to PLANAR_SEARCH_MAX; other exact searches (a kernel without a grid, a 1-D search below
    // 5,000 points, 2-D local-quadratic) and blocked CV take the SELECT_MAX sample (sampling.js says what each cost).
    const plan = planFor(ka, { kernel, estimator, method: approximation, rule: method });
    const blocked = method === 'cv' && exclude > 0;
    const wide = plan.method === 'grid' && (sample.dim === 1 || !!sample.labels) && !blocked;
    const planarSearch =
      planar() &&
      ['cv', 'aicc'].includes(method) &&
      !blocked &&
      kernel === 'gaussian' &&
      estimator !== 'local-quadratic';
    const s = wide ? (method === 'aicc' ? sample.aicc : sample.all) : planarSearch ? sample.planar : sample.select;
    // The page's `method` is the rule and `approximation` the computation: the API's `rule` and `method`. Blocked CV
    // (exclude: r > 0) applies to the CV criterion only; how it is computed is the library's plan (its `reason`).
    const select = (rule) =>
      ka.selectBandwidthAsync(s.x, s.y, {
        dim: s.dim,
        kernel,
        estimator,
        rule,
        ...types(),
        ...(rule === 'cv' || rule === 'aicc' ? { method: approximation } : {}),
        ...(rule === 'cv' && exclude > 0 ? { exclude } : {}),
        signal: control.signal,
        onProgress: ({ done, total }) => postMessage({ op: 'progress', what: 'select', done, total }),
      });
    // CV and AICc are undefined where every held-out local fit is singular (two points under local-linear, say):
    // the library refuses, and the page says so and takes Scott's rule rather than showing no fit.
    let undefinedCriterion = null;
    const t0 = performance.now();
    let chosen;
    try {
      chosen = await select(method);
    } catch (error) {
      if (!(error?.code === 'BadShape' && /^no bandwidth gives a finite/.test(error.message))) throw error;
      undefinedCriterion = error.message;
      chosen = await select('scott');
    } finally {
      if (searching === control) searching = null;
    }
    const warnings = warningsOf(chosen) ?? [];
    if (undefinedCriterion)
      warnings.push({ code: 'undefined-criterion', message: `${undefinedCriterion}; h is Scott's rule instead` });
    return {
      method: undefinedCriterion ? 'scott' : method,
      exclude: undefinedCriterion || method !== 'cv' ? 0 : exclude,
      kernel,
      estimator,
      // With a category the search's point is (h, λ): h here, λ apart.
      bandwidth: Array.from(chosen.bandwidth).slice(0, sample.labels ? 1 : undefined),
      lambda: sample.labels ? chosen.bandwidth[1] : null,
      score: chosen.score,
      curve: chosen.curve,
      criterionMethod: chosen.method, // how the criterion was computed, and why (the library's plan)
      reason: chosen.reason,
      n: s.n,
      ms: performance.now() - t0,
      warnings,
    };
  },

  /** The fit (same settings and sample as `fit`) at every observation, for the CSV export. */
  observations(
    ka,
    {
      h,
      lambda,
      kernel,
      estimator,
      level,
      method,
      frac,
      iterations,
      robust = 0,
      variance = 'global',
      span = 0,
      ...loess
    },
  ) {
    if (estimator === 'loess') return loessObservations(ka, sample, { ...loess, level });
    if (estimator === 'lowess') {
      // In the data's order, as lowess() answers; float64, so written with all its digits.
      return { mean: ka.lowess(sample.x64, sample.y64, { frac, iterations }).fitted, float64: true, level };
    }
    const plan = planFor(ka, { kernel, estimator, method, span });
    const s = fitSample({ kernel, span, variance, robust, grid: plan.method === 'grid', draft: false });
    if (s.n < sample.n && !(variance === 'local' && !span)) {
      throw new Error(
        `the fit at the observations is offered where the fit takes every point (this one uses a sample of ` +
          `${s.n.toLocaleString('en')}: ${plan.reason})`,
      );
    }
    const model = ka.kernelRegression(s.x, s.y, {
      dim: s.dim,
      kernel,
      estimator,
      bandwidth: span ? { span } : sample.labels ? [h[0], lambda ?? 0] : h,
      method,
      ...types(),
      ...robustOption(robust),
    });
    try {
      return { ...model.predictInterval(sample.x64, { level, variance }), level };
    } finally {
      model.dispose();
    }
  },

  // "Learn h": Adam on the log-bandwidths (one per input) of attention pooling over the draft sample, each point's
  // keys the others (leave-one-out), so the loss is Nadaraya–Watson's leave-one-out CV score at the current h.
  learnStart(ka, { h, kernel }) {
    learner?.dispose();
    learner = null;
    learner = ka.attentionPooling({ dim: sample.dim, kernel, bandwidth: h, learningRate: LEARNING_RATE });
    return { n: sample.draft.n };
  },

  /** One step: the loss at the current h, then the gradient and Adam's update; returns both bandwidths. */
  learnStep() {
    const { x, y, n } = sample.draft;
    const h = Array.from(learner.parameters.bandwidth);
    const fit = learner.forward(x, x, y, { mask: 'loo' });
    let loss = 0;
    for (let i = 0; i < n; i++) loss += (fit[i] - y[i]) ** 2;
    learner.backward(fit.map((f, i) => (2 * (f - y[i])) / n));
    learner.step();
    return { h, loss: loss / n, next: Array.from(learner.parameters.bandwidth) };
  },

  /** While a slider moves: the curve alone at the queries, from the kept model at the new h (no band, no summary). */
  curveAt(ka, s, { h, kernel, estimator, level, method, variance = 'global', draft }) {
    const options = { dim: s.dim, kernel, estimator, method, ...robustOption(0) };
    const [{ model, owned }, fitMs] = timed(() => modelAt(ka, s, options, h));
    const [mean, predictMs] = timed(() => model.predict(sample.queries));
    const { method: used, reason } = model;
    if (owned) model.dispose();
    return {
      n: s.n,
      dim: s.dim,
      h,
      kernel,
      estimator,
      level,
      draft,
      curveOnly: true, // the band, its statistics and the views follow on release
      queries: sample.queries,
      mean,
      lower: null,
      upper: null,
      stderr: null,
      effectiveKeys: null,
      method: used,
      reason,
      variance,
      view: null,
      matrix: null,
      timings: { fit: fitMs, predict: predictMs },
    };
  },

  fit(ka, settings) {
    let { h } = settings;
    const { kernel, estimator, level, draft, method, attentionMethod = 'exact', tolerance = 1e-2 } = settings;
    const { frac, iterations, robust = 0, variance = 'global', derivative = false, span = 0 } = settings;
    const { loessSpan, degree, family } = settings;
    // What the fit is doing, for the busy sign at the plot (a draft, while a slider moves, shows none).
    const stage = (text) => draft || postMessage({ op: 'progress', what: 'fit', stage: text });
    if (estimator === 'lowess') return lowessFit(ka, sample, { frac, iterations, draft });
    if (estimator === 'loess') return loessFit(ka, sample, { loessSpan, degree, family, level, draft }, stage);
    if (sample.labels) {
      // With one x, the library bins data with a category as it bins continuous data (its plan: the grid).
      const grid = planFor(ka, { kernel, estimator, method }).method === 'grid';
      return categoryFit(ka, sample, modelAt, { ...settings, grid });
    }
    // On the grid a fit costs O(n) binning plus a convolution: it uses every point, even while dragging.
    const grid = planFor(ka, { kernel, estimator, method, span }).method === 'grid';
    const s = fitSample({ kernel, span, variance, robust, grid, draft });
    // While a slider moves over many points (or with the local σ(x), whose smoother searches its own h), the drawn
    // curve alone follows: a new h on the grid is a re-convolution and 300 predictions (under 100 ms at 10⁶ points),
    // while the band's summary and checks cost a pass over every point (0.6–2 s at 10⁶). The release draws the band.
    if (draft && grid && (variance === 'local' || s.n > DRAFT_BAND_MAX)) return handlers.curveAt(ka, s, settings);
    const { dim } = s;
    const queries = sample.queries;
    const timings = {};
    stage(span ? 'each query’s nearest points, exactly' : 'the model');
    const options = { dim, kernel, estimator, method, ...robustOption(robust) };
    const [{ model, owned }, fitMs] = timed(() =>
      span
        ? { model: ka.kernelRegression(s.x, s.y, { ...options, bandwidth: { span } }), owned: true }
        : modelAt(ka, s, options, h),
    );
    timings.fit = fitMs;
    stage(variance === 'local' ? 'the band, with a local σ(x)' : 'the band');
    const [band, bandMs] = timed(() => model.predictInterval(queries, { level, variance }));
    timings.predict = bandMs;
    const fit = {
      edf: model.effectiveDegreesOfFreedom,
      sigma: Math.sqrt(model.residualVariance[0]),
      method: model.method,
      reason: model.reason, // the library's plan: why this method runs
      warnings: warningsOf(model),
      robust: robustSummary(model, robust, s),
      variance,
      localVariance: variance === 'local' ? localVarianceSummary(model) : null,
    };
    // The variance smoother's own warnings ('interpolating': σ(x) follows single residuals) join the fit's.
    if (fit.localVariance?.warnings.length) {
      fit.warnings = [
        ...(fit.warnings ?? []),
        ...fit.localVariance.warnings.map(({ code, message }) => ({
          code,
          message: `The local σ(x) of the band: ${message}`,
        })),
      ];
    }
    if (derivative && dim === 1) {
      stage('the derivative');
      Object.assign(fit, slopeOf(model, queries, band));
    }
    // A span fit's h differs by query: h stands for their median (the identity table's h), the rest in `span`.
    if (span) {
      fit.spanBandwidth = spanSummary(span, model.bandwidth.neighbours, band.bandwidths, dim);
      h = fit.spanBandwidth.median;
    }
    // The attention views run exactly, on at most FIT_MAX points; a span fit's on its own sample, whose neighbours
    // set each query's h.
    const v = draft ? null : span ? s : sample.full;
    if (owned) model.dispose();
    // While the slider is dragged only the curve and its band follow; the other views wait for the release.
    let view = null;
    let matrix = null;
    if (!draft) {
      stage('the attention views');
      view = attentionView(ka, v, queries, h);
      timings.attentionKernel = view.kernelMs;
      timings.attentionSoftmax = view.softmaxMs;
      if (APPROX_METHODS.includes(attentionMethod)) {
        view.approx = approximateView(ka, v, queries, h, view.kernel, { method: attentionMethod, tolerance });
        timings.approximation = view.approx.ms;
      }
      matrix = attentionMatrix(ka, v, queries, h, kernel, span ? band.bandwidths : null);
      timings.weights = matrix.ms;
    }
    return {
      n: s.n,
      viewN: span ? s.n : sample.full.n,
      dim,
      h,
      kernel,
      estimator,
      level,
      draft,
      queries,
      ...band,
      ...fit,
      view,
      matrix,
      timings,
    };
  },
};

self.onmessage = async ({ data }) => {
  const ka = await kaReady.catch((err) => err);
  try {
    if (ka instanceof Error) throw ka;
    postMessage({ id: data.id, op: data.op, ...(await handlers[data.op](ka, data)) });
  } catch (err) {
    postMessage({ id: data.id, op: data.op, error: String((err && err.message) || err) });
  }
};
