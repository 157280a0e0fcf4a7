// The kernelRegression model: its sample resident in the wasm heap, and the model object over it (docs/regression.md,
// "Model lifetime and bandwidth changes"). Its parts: model-fit.js (the fits as planned, the summary), model-intervals.js
// (bands, the local variance), model-gradient.js (derivatives), model-robust.js (robust refits); regression.js reads
// the options and chooses the bandwidth, and hands the model the factories of further regressions (`ctx`).
import { modelFits } from './model-fit.js';
import { modelGradient } from './model-gradient.js';
import { modelIntervals } from './model-intervals.js';
import { robustFit } from './model-robust.js';
import { CONTROL_OPTIONS, drive, readControl } from './progress.js';
import { bandwidths, checkOptionNames } from './validate.js';
import { joinBandwidth, readMixedBandwidth } from './categories.js';
import { fitWarnings, medianSpacings, precisionWarnings, sparsePointsWarnings } from './warnings.js';

// The safety net for models dropped without dispose(): gives back their resident sample when the model is collected.
// dispose() is the way (collection may come late, or never, while the heap stays full).
const collected =
  typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((store) => store.release()) : null;
const NO_CURVE = () => ({ bandwidths: new Float64Array(0), scores: new Float64Array(0) });

/**
 * The model of `p` (regression.js) at bandwidth h, in context `ctx` ({ engine, threads, kernelRegression,
 * kernelRegressionAsync }). Its sample (p.data) is copied into the wasm heap once, as a resident copy that every call
 * reads; `shared` ({ store, spacings, precision }, from withBandwidth) reuses another model's copy (one more owner:
 * disposing either model keeps the other working) and what the warnings read from the sample.
 */
export function buildModel(ctx, p, h, selection, shared = null) {
  const { data } = p;
  const store = shared?.store ?? ctx.engine.resident([data.x, data.y, data.weights, data.codes]);
  if (shared?.store) store.retain();
  try {
    const spacings = shared?.spacings ?? medianSpacings(ctx.engine, data.x, p.n, p.dim);
    const precision =
      shared?.precision ??
      precisionWarnings([
        [p.stored?.x, p.dim, 'x'],
        [p.stored?.y, p.width, 'y'],
      ]);
    return residentModel(ctx, p, h, selection, { store, spacings, precision }, !!shared);
  } catch (e) {
    store.release();
    throw e;
  }
}

/** The models of `p` on its robust refits (model-robust.js) at h, each built as buildModel builds it. */
export const robustModel = (ctx, p, h, selection) => robustFit(p, (q) => buildModel(ctx, q, h, selection));

/** buildModel's model on its resident sample `shared.store`; `lazySummary`: the summary waits for its first read. */
function residentModel(ctx, p, h, selection, shared, lazySummary) {
  const { n, width, dim, kernel, estimator, span, mixed } = p;
  // What the closures below keep (not `p`, whose `stored` holds the caller's own arrays, nor its data: both must not
  // stay alive; the sample lives in the heap).
  const base = { ...p, data: null, stored: null };
  const { store } = shared;
  const m = modelFits(ctx, p, h, store);
  const intervals = modelIntervals(m, p, ctx);
  if (!lazySummary) m.summarize();
  let warnings = null;

  const model = {
    dim: m.userDim,
    kernel,
    estimator,
    /** Mixed data: the column types (options.types) and the ordered kernel; null when every column is continuous. */
    types: mixed ? mixed.types : null,
    orderedKernel: mixed ? mixed.orderedKernel : null,
    // Mixed data: h for each continuous column and λ for each discrete one, in the columns' order.
    bandwidth: mixed
      ? joinBandwidth(mixed, h, p.lambda)
      : span === null
        ? h
        : Object.freeze({ span, scale: h, neighbours: m.spanK }),
    selection,
    /** What predictions run on: 'exact', 'grid' (binned; see docs/regression.md) or 'sparse'. */
    method: m.fit.method,
    /** Why that method runs (the core's plan, plan.h): "grid: 1-D gaussian, …". */
    reason: m.fit.reason,
    get effectiveDegreesOfFreedom() {
      return m.summarize().trace;
    },
    get residualVariance() {
      return m.summarize().sigma2;
    },
    /** Bisquare robustness weights of the final fit (n, input order) with options.robust; else null. */
    robustnessWeights: p.robustnessWeights,
    /**
     * The local variance estimate of predictInterval's variance: 'local' ({ bandwidth, selection,
     * effectiveDegreesOfFreedom, warnings, scale, floor }), made by the first such call; null before (and after dispose).
     */
    get localVariance() {
      return intervals.localVariance;
    },
    get warnings() {
      const summary = m.summarize();
      // The selection's 'sparse-points' too: the bandwidth this model fits at was chosen at the criterion's edge.
      warnings ??= [
        ...fitWarnings({
          n,
          dim,
          width,
          bandwidth: summary.typical,
          effectiveParameters: summary.trace,
          guardChanged: summary.guardChanged,
          estimator,
          spacings: shared.spacings,
          precision: shared.precision,
        }),
        ...sparsePointsWarnings(selection, h, { dim, spacings: shared.spacings, estimator, mixed }),
      ];
      return warnings;
    },
    predict(xq) {
      return drive(m.fitSteps(xq, false, false), null).mean;
    },
    predictInterval: intervals.predictInterval,
    gradient: (xq) => modelGradient(m, xq),
    /** predict() in steps of query rows: `options.onProgress` gets `{ done, total }` rows, `options.signal` stops it. */
    async predictAsync(xq, options) {
      m.live();
      checkOptionNames(options, CONTROL_OPTIONS);
      const control = readControl(options);
      return (await drive(m.fitSteps(xq, false, true), control)).mean;
    },
    predictIntervalAsync: intervals.predictIntervalAsync,
    /**
     * The model at another (fixed) bandwidth, as kernelRegression with `bandwidth: h` and this model's other options
     * would fit it, sharing this model's copy of the sample in the wasm heap (each model still needs its dispose()).
     * Its summary (degrees of freedom, residual variance, warnings) is computed on first use. A robust model's
     * robustness weights are refitted at h (on a copy of its own).
     */
    withBandwidth(h) {
      m.live();
      const given = mixed ? readMixedBandwidth(mixed, h, 'h') : { h: bandwidths(h, dim, 'h'), lambda: null };
      const fixed = Float64Array.from(given.h);
      const fixedSelection = { rule: 'fixed', score: null, curve: NO_CURVE() };
      const next = { ...base, span: null, lambda: given.lambda };
      const { spacings, precision } = shared;
      if (!base.robust) return buildModel(ctx, next, fixed, fixedSelection, shared);
      const start = { ...next, fitWeights: base.observationWeights, robustnessWeights: null };
      const fitted = drive(robustModel(ctx, start, fixed, fixedSelection), null);
      return buildModel(ctx, fitted, fixed, fixedSelection, { spacings, precision });
    },
    dispose() {
      if (m.disposed) return;
      m.disposed = true;
      collected?.unregister(token);
      store.release();
      intervals.dispose();
    },
  };
  if (typeof Symbol.dispose === 'symbol') model[Symbol.dispose] = model.dispose;
  const token = {};
  collected?.register(model, store, token);
  return Object.freeze(model);
}
