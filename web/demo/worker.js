// The demo's compute worker: every call into kernel-attention runs here, so the page's main thread only draws.
// Messages are { id, op, ... }; each answer carries the id it answers.
import { init } from '../src/index.js';

const FIT_MAX = 50_000; // points an exact fit and the attention views use (a seeded subsample beyond that)
const DRAFT_MAX = 2_000; // points a live fit uses while the slider is dragged
const SELECT_MAX = 4_000; // points the bandwidth search uses (each CV pass is O(n²))
// Points a fit with the local-σ band uses: its variance smoother chooses a bandwidth by CV on the log squared
// residuals, which took 2 s on 10,000 points and over a minute on 100,000 (Node, one thread).
const LOCAL_MAX = 10_000;
// Points a span fit uses (a draft: DRAFT_MAX): it runs exactly in double, each point's fit over its own k = ⌈f·n⌉
// nearest, and the Gaussian kernel reaches every point: 10,000 points took 6–10 s, 2,000 0.3–0.4 s (Node, one thread).
const SPAN_MAX = 4_000;
const CURVE_QUERIES = 300; // 1-D: queries on a grid across the data
const SURFACE_SIDE = 48; // 2-D: SURFACE_SIDE² queries
const MATRIX_QUERIES = 40; // rows of the attention matrix
const MATRIX_BINS = 200; // its columns: keys, in x order, summed into at most this many bins
const TOP_KEYS = 8;
const LEARNING_RATE = 0.1; // Adam's step on log h: h moves by up to about 10 % a step
// The attention view's approximations (docs/approximations.md): one fixed seed, so a shared URL shows the same draw.
const APPROX_SEED = 1;
const APPROX_METHODS = ['random-features', 'nystrom', 'sparse'];

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
 * Whether a fit uses every point: in 1-D (where the demo keeps them all) when kernelRegression runs the sample on a
 * grid, as the library plans it (ka.plan), not by a threshold of the demo's own.
 */
const onGrid = (ka, kernel, method) =>
  ka.plan('regression', { n: sample.n, dim: sample.dim, kernel, method }).method === 'grid';

/**
 * A seeded subsample of at most `max` rows, in the order of the first coordinate (keys sorted by x), in float64 as
 * read: the library centres every input in double before its float32 pass, so timestamps or values with a large
 * offset keep their precision only if they reach it unrounded.
 */
function subsample({ x, y, n, dim }, max, seed) {
  let rows = Array.from({ length: n }, (_, i) => i);
  if (n > max) {
    let s = seed >>> 0;
    for (let i = 0; i < max; i++) {
      // partial Fisher–Yates
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      const j = i + Math.floor((s / 2 ** 32) * (n - i));
      [rows[i], rows[j]] = [rows[j], rows[i]];
    }
    rows = rows.slice(0, max);
  }
  rows.sort((a, b) => x[a * dim] - x[b * dim] || a - b);
  const xs = new Float64Array(rows.length * dim);
  const ys = new Float64Array(rows.length);
  rows.forEach((r, i) => {
    for (let d = 0; d < dim; d++) xs[i * dim + d] = x[r * dim + d];
    ys[i] = y[r];
  });
  return { x: xs, y: ys, n: rows.length, dim };
}

function bounds({ x, n, dim }) {
  return Array.from({ length: dim }, (_, d) => {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < n; i++) {
      lo = Math.min(lo, x[i * dim + d]);
      hi = Math.max(hi, x[i * dim + d]);
    }
    // The grid runs from the first observation to the last: no fitted value beyond the data.
    return hi > lo ? [lo, hi] : [lo - 1, hi + 1];
  });
}

/** Query points: a line of CURVE_QUERIES in 1-D, a SURFACE_SIDE² grid (row-major, x₂ outer) in 2-D. */
function queryGrid(box) {
  const at = ([lo, hi], m, i) => lo + ((hi - lo) * i) / (m - 1);
  if (box.length === 1) return Float64Array.from({ length: CURVE_QUERIES }, (_, i) => at(box[0], CURVE_QUERIES, i));
  const q = new Float64Array(SURFACE_SIDE * SURFACE_SIDE * 2);
  for (let r = 0; r < SURFACE_SIDE; r++) {
    for (let c = 0; c < SURFACE_SIDE; c++) {
      q[(r * SURFACE_SIDE + c) * 2] = at(box[0], SURFACE_SIDE, c);
      q[(r * SURFACE_SIDE + c) * 2 + 1] = at(box[1], SURFACE_SIDE, r);
    }
  }
  return q;
}

const timed = (fn) => {
  const t0 = performance.now();
  const value = fn();
  return [value, performance.now() - t0];
};

/**
 * The Gaussian identity: exp(−|q − k|²/2h²) ∝ exp(q'·k') with q' = [(q − c)/h, 1] and k' = [(k − c)/h, −|(k − c)/h|²/2]
 * (per-dimension h, centred at c to keep float32 accuracy), so softmax(Q'K'ᵀ)V is the Gaussian Nadaraya–Watson fit.
 */
function attentionView(ka, s, queries, h) {
  const { dim, n } = s;
  const c = Array.from({ length: dim }, (_, d) => s.x.reduce((acc, v, i) => (i % dim === d ? acc + v : acc), 0) / n);
  const augment = (points, rows, last) => {
    const out = new Float32Array(rows * (dim + 1));
    for (let i = 0; i < rows; i++) {
      let sq = 0;
      for (let d = 0; d < dim; d++) {
        const u = (points[i * dim + d] - c[d]) / h[d];
        out[i * (dim + 1) + d] = u;
        sq += u * u;
      }
      out[i * (dim + 1) + dim] = last(sq);
    }
    return out;
  };
  const I = queries.length / dim;
  const [kernel, kernelMs] = timed(() => ka.attention(queries, s.x, s.y, { dim, kernel: 'gaussian', bandwidth: h }));
  const [softmax, softmaxMs] = timed(() =>
    ka.attention(
      augment(queries, I, () => 1),
      augment(s.x, n, (sq) => -sq / 2),
      s.y,
      { dim: dim + 1, kernel: 'softmax', scale: 1 },
    ),
  );
  let maxDiff = 0;
  for (let i = 0; i < I; i++) maxDiff = Math.max(maxDiff, Math.abs(kernel[i] - softmax[i]));
  return { kernel, softmax, maxDiff, centre: c, kernelMs, softmaxMs };
}

/**
 * The same Gaussian fit by an approximation of attention (random features or Nyström, which work through the same
 * identity internally, or certified sparsity, which skips the keys out of reach), measured against the exact kernel
 * fit: largest and RMS difference, relative to the range of y as the library's error estimate is. A refusal (too few
 * keys, …) comes back as `error`, and the rest of the fit stands.
 */
function approximateView(ka, s, queries, h, exact, { method, tolerance }) {
  const options = { dim: s.dim, kernel: 'gaussian', bandwidth: h, method, tolerance, seed: APPROX_SEED };
  let run;
  let ms;
  try {
    [run, ms] = timed(() => ka.attentionWithInfo(queries, s.x, s.y, options));
  } catch (err) {
    return { method, tolerance, seed: APPROX_SEED, error: String((err && err.message) || err) };
  }
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of s.y) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  const range = hi - lo || 1;
  let maxDiff = 0;
  let sq = 0;
  for (let i = 0; i < exact.length; i++) {
    const d = Math.abs(run.output[i] - exact[i]);
    maxDiff = Math.max(maxDiff, d);
    sq += d * d;
  }
  return {
    method: run.method,
    tolerance,
    seed: APPROX_SEED,
    output: run.output,
    errorEstimate: run.errorEstimate,
    ...(run.method === 'sparse'
      ? { count: run.keptKeys, countName: `of ${(run.keptKeys + run.skippedKeys).toLocaleString('en')} weights kept` }
      : { count: run.features ?? run.landmarks, countName: run.features !== undefined ? 'features' : 'landmarks' }),
    exactRows: run.exactRows,
    maxDiff,
    rmsRelative: Math.sqrt(sq / exact.length) / range,
    range,
    ms,
  };
}

/**
 * The queries × keys weight matrix for MATRIX_QUERIES queries, binned over keys, and each query's top keys. A span
 * fit gives each query its own bandwidth (`rowH`: the I × dim bandwidths of the queries), so its rows are computed
 * one by one at those.
 */
function attentionMatrix(ka, s, queries, h, kernel, rowH = null) {
  const { dim, n } = s;
  const I = queries.length / dim;
  const rows = Math.min(MATRIX_QUERIES, I);
  const pick = Array.from({ length: rows }, (_, r) => Math.round((r * (I - 1)) / Math.max(1, rows - 1)));
  const q = new Float64Array(rows * dim);
  pick.forEach((i, r) => q.set(queries.subarray(i * dim, (i + 1) * dim), r * dim));
  const [w, ms] = timed(() => {
    if (!rowH) return ka.weights(q, s.x, { dim, kernel, bandwidth: h, empty: 'nearest' });
    const all = new Float32Array(rows * n);
    pick.forEach((i, r) => {
      const bandwidth = Array.from(rowH.subarray(i * dim, (i + 1) * dim));
      all.set(ka.weights(q.subarray(r * dim, (r + 1) * dim), s.x, { dim, kernel, bandwidth, empty: 'nearest' }), r * n);
    });
    return all;
  });
  const bins = Math.min(MATRIX_BINS, n);
  const binned = new Float32Array(rows * bins);
  const top = [];
  for (let r = 0; r < rows; r++) {
    const row = w.subarray(r * n, (r + 1) * n);
    for (let j = 0; j < n; j++) binned[r * bins + Math.floor((j * bins) / n)] += row[j];
    const best = [];
    for (let j = 0; j < n; j++) {
      if (best.length < TOP_KEYS || row[j] > best[best.length - 1].w) {
        best.push({ j, w: row[j] });
        best.sort((a, b) => b.w - a.w);
        if (best.length > TOP_KEYS) best.pop();
      }
    }
    top.push(
      best.map(({ j, w: weight }) => ({ x: Array.from(s.x.subarray(j * dim, (j + 1) * dim)), y: s.y[j], w: weight })),
    );
  }
  const binStart = Float64Array.from(
    { length: bins + 1 },
    (_, b) => s.x[Math.min(n - 1, Math.floor((b * n) / bins)) * dim],
  );
  return { rows, bins, queryIndex: pick, queries: q, binned, top, binStart, keys: n, ms };
}

/** kernelRegression's `robust` option for `iterations` rounds of bisquare weights (0: none). */
const robustOption = (iterations) => (iterations > 0 ? { robust: { iterations } } : {});

const RINGED_MAX = 2_000; // points set aside by robustness that the plot rings, at most (the first in x order)

/**
 * What robustness did: its rounds, how many points of the sample `s` it gave a weight below ½, and those points
 * (`ringX`, `ringY`: at most RINGED_MAX) for the plot to ring; null without it.
 */
function robustSummary(model, iterations, s) {
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
function slopeOf(model, queries, band) {
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
function localVarianceSummary(model) {
  const v = model.localVariance;
  return v && { bandwidth: Array.from(v.bandwidth), warnings: warningsOf(v) ?? [] };
}

/** The library's `warnings` ({ code, message }), when the result carries them (older builds do not). */
const warningsOf = (result) =>
  Array.isArray(result?.warnings) ? result.warnings.map(({ code, message }) => ({ code, message })) : undefined;

/**
 * What a span fit's bandwidths were: the span, k (the library's ⌈f·n⌉, a product within 10⁻⁷ of an integer counting
 * as it) and, per dimension, the smallest, median and largest h over the queries (`bandwidths`, I × dim).
 */
function spanSummary(f, n, bandwidths, dim) {
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

const handlers = {
  hello(ka) {
    return { build: ka.build, threads: ka.threads, simd: ka.simd, isolated: self.crossOriginIsolated === true };
  },

  data(ka, { x, y, dim }) {
    learner?.dispose();
    learner = null;
    forgetModel();
    const all = { x, y, n: y.length, dim };
    sample = null;
    const full = subsample(all, FIT_MAX, 1);
    sample = {
      n: all.n,
      dim,
      x64: x,
      full,
      draft: subsample(full, DRAFT_MAX, 2),
      select: subsample(full, SELECT_MAX, 3),
      local: subsample(full, LOCAL_MAX, 4),
      span: subsample(full, SPAN_MAX, 5),
    };
    // The grid needs no sort: every point, in float64 as read, for fits on the grid (1-D and 2-D).
    sample.all = all;
    // LOWESS (1-D): the same rows as the exact fits (the same seed), sorted by x.
    sample.lowess = dim === 1 ? full : null;
    sample.y64 = y;
    sample.queries = queryGrid(bounds(full));
    return { n: all.n, fitN: full.n, draftN: sample.draft.n, selectN: sample.select.n, spanN: sample.span.n };
  },

  select(ka, { method, kernel, estimator, approximation, exclude = 0 }) {
    const s = sample.select;
    // The page's `method` is the rule and `approximation` the computation: the API's `rule` and `method`. Blocked CV
    // (exclude: r > 0) applies to the CV criterion only, and always runs exactly.
    const select = (rule) =>
      ka.selectBandwidth(s.x, s.y, {
        dim: s.dim,
        kernel,
        estimator,
        rule,
        ...(rule === 'cv' || rule === 'aicc' ? { method: approximation } : {}),
        ...(rule === 'cv' && exclude > 0 ? { exclude } : {}),
      });
    // CV and AICc are undefined where every held-out local fit is singular (two points under local-linear, say):
    // the library refuses, and the page says so and takes Scott's rule rather than showing no fit.
    let undefinedCriterion = null;
    const [chosen, ms] = timed(() => {
      try {
        return select(method);
      } catch (error) {
        if (!(error?.code === 'BadShape' && /^no bandwidth gives a finite/.test(error.message))) throw error;
        undefinedCriterion = error.message;
        return select('scott');
      }
    });
    const warnings = warningsOf(chosen) ?? [];
    if (undefinedCriterion)
      warnings.push({ code: 'undefined-criterion', message: `${undefinedCriterion}; h is Scott's rule instead` });
    return {
      method: undefinedCriterion ? 'scott' : method,
      exclude: undefinedCriterion || method !== 'cv' ? 0 : exclude,
      kernel,
      estimator,
      bandwidth: Array.from(chosen.bandwidth),
      score: chosen.score,
      curve: chosen.curve,
      n: s.n,
      ms,
      warnings,
    };
  },

  /** The fit (same settings and sample as `fit`) at every observation, for the CSV export. */
  observations(
    ka,
    { h, kernel, estimator, level, method, frac, iterations, robust = 0, variance = 'global', span = 0 },
  ) {
    if (estimator === 'lowess') {
      if (sample.n > FIT_MAX) {
        throw new Error(
          `the LOWESS fit at the observations is offered for up to ${FIT_MAX.toLocaleString('en')} points; ` +
            `the curve drawn here uses a sample of ${FIT_MAX.toLocaleString('en')}`,
        );
      }
      // In the data's order, as lowess() answers; float64, so written with all its digits.
      return { mean: ka.lowess(sample.x64, sample.y64, { frac, iterations }).fitted, float64: true, level };
    }
    if (span && sample.n > FIT_MAX) {
      throw new Error(
        `a span fit at the observations is offered for up to ${FIT_MAX.toLocaleString('en')} points (it runs ` +
          'exactly, each observation over its own nearest points)',
      );
    }
    const grid = !span && onGrid(ka, kernel, method) && variance !== 'local';
    if (!grid && sample.n > FIT_MAX && (variance !== 'local' || span)) {
      throw new Error(
        `the fit at the observations is offered for up to ${FIT_MAX.toLocaleString('en')} points, or on the ` +
          `grid (1-D, 2-D); exact fits here use a sample of ${FIT_MAX.toLocaleString('en')}`,
      );
    }
    // A span fit's sample is the fit's (SPAN_MAX), whatever the band.
    const s = span ? sample.span : variance === 'local' ? sample.local : grid ? sample.all : sample.full;
    const model = ka.kernelRegression(s.x, s.y, {
      dim: s.dim,
      kernel,
      estimator,
      bandwidth: span ? { span } : h,
      method: span ? 'exact' : method,
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

  /**
   * LOWESS (R's lowess(): tricube local-linear fits over the nearest f·n points, `iterations` rounds of bisquare
   * robustness weights, delta 1 % of the range of x) on the float64 sample sorted by x: the curve is drawn through
   * the fitted values at the observations. No band (LOWESS has no standard errors) and no attention views.
   */
  lowess(ka, { frac, iterations, draft }) {
    const s = sample.lowess;
    if (!s) throw new Error('LOWESS takes one x; this data has two');
    const [r, ms] = timed(() => ka.lowess(s.x, s.y, { frac, iterations }));
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
      queries: s.x,
      observed: s.y,
      mean: r.fitted,
      weights: r.weights,
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
  },

  fit(
    ka,
    {
      h,
      kernel,
      estimator,
      level,
      draft,
      method,
      attentionMethod = 'exact',
      tolerance = 1e-2,
      frac,
      iterations,
      robust = 0,
      variance = 'global',
      derivative = false,
      span = 0,
    },
  ) {
    if (estimator === 'lowess') return handlers.lowess(ka, { frac, iterations, draft });
    // On the grid a fit costs O(n) binning plus a convolution: it uses every point, even while dragging. A span
    // (each query's h from its nearest points) always runs exactly, on at most SPAN_MAX points.
    const grid = !span && onGrid(ka, kernel, method);
    // The local-σ band on at most LOCAL_MAX points (a draft: DRAFT_MAX), even where the grid could take them all.
    const s =
      draft && (variance === 'local' || !grid)
        ? sample.draft
        : span
          ? sample.span
          : variance === 'local'
            ? sample.local
            : grid
              ? sample.all
              : sample.full;
    const { dim } = s;
    const queries = sample.queries;
    const timings = {};
    const options = { dim, kernel, estimator, method: span ? 'exact' : method, ...robustOption(robust) };
    const [{ model, owned }, fitMs] = timed(() =>
      span
        ? { model: ka.kernelRegression(s.x, s.y, { ...options, bandwidth: { span } }), owned: true }
        : modelAt(ka, s, options, h),
    );
    timings.fit = fitMs;
    const [band, bandMs] = timed(() => model.predictInterval(queries, { level, variance }));
    timings.predict = bandMs;
    const fit = {
      edf: model.effectiveDegreesOfFreedom,
      sigma: Math.sqrt(model.residualVariance[0]),
      method: model.method,
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
    if (derivative && dim === 1) Object.assign(fit, slopeOf(model, queries, band));
    // A span fit's h differs by query: h stands for their median (the identity table's h), the rest in `span`.
    if (span) {
      fit.spanBandwidth = spanSummary(span, s.n, band.bandwidths, dim);
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
    postMessage({ id: data.id, op: data.op, ...handlers[data.op](ka, data) });
  } catch (err) {
    postMessage({ id: data.id, op: data.op, error: String((err && err.message) || err) });
  }
};
