// The page's state (one object, shared by the page's modules), who is told when it changes (subscribe, notify), and
// what the tests read of it (window.demoState).

export const THIN = 5; // effective points below which support is called thin
export const state = {
  data: null, // { names, x, y, dim, source }
  version: 0, // bumped with every new data set; answers for older data are dropped
  ratios: [1], // h_d / h_1 (from the last selection, else the spread of each column)
  fit: null, // the last fit drawn (the worker's answer)
  selection: null,
  lambda: null, // with a category: the λ that pools its levels (chosen with h by CV or AICc), else null
  hoverRow: null,
  timings: {},
  worker: null, // { build, threads, simd, isolated }
  malformed: { count: 0, listed: [] },
  error: null,
  layer: {}, // the cached point layer of the main plot
  hSource: null, // how h was set: { by: a rule, 'learn', 'hand' or 'link', kernel, estimator }
  chosenH1: null, // h₁ exactly as chosen (the slider's steps would round it); null once the slider is moved
  undo: [], // the data before each point added or moved (newest last)
  // Work in progress, read by publish(): a fit request in flight and the newest one waiting (fitting.js), a "Learn h"
  // run ({ version }; null stops it), a point being dragged (editing.js), a bandwidth choice under way.
  inFlight: false,
  pending: null,
  learning: null,
  dragging: null,
  choosing: false,
};
// Who is told what changed: 'data' (other data is current, or none after a failed load), 'fit' (a fit answer is
// shown; its `draft` says whether it is final), 'view' (something drawn changed without a new fit: h's mark, the
// band, the data while a point is dragged), 'settings' (a setting the address bar keeps changed without a fit). drawing.js redraws and link.js writes the link: the modules that change
// the state announce it here rather than calling those that show it, so no module imports its own listeners.
const subscribers = { data: [], fit: [], view: [], settings: [] };
/** Calls `listener(detail)` after each notify(topic, detail). */
export function subscribe(topic, listener) {
  subscribers[topic].push(listener);
}
export function notify(topic, detail) {
  for (const listener of subscribers[topic]) listener(detail);
}

window.demoState = { ready: false, fitsDrawn: 0, cspViolations: [] };

// What the page's Content-Security-Policy blocked, here and in the workers (they report theirs as messages): the
// tests read it, and it names what a stricter server would break.
export const noteViolation = (v) => {
  window.demoState.cspViolations.push(v);
};
document.addEventListener('securitypolicyviolation', (e) =>
  noteViolation(`page: ${e.violatedDirective} ${e.blockedURI}`),
);

export const drawTimes = []; // the last 200 draws (ms), for the responsiveness test

/** What the tests read: the numbers on screen, not pixels. */
export function publish() {
  const { data, fit } = state;
  Object.assign(window.demoState, {
    ready: Boolean(
      data &&
      fit &&
      !fit.draft &&
      !state.inFlight &&
      !state.pending &&
      !state.dragging &&
      !state.learning &&
      !state.choosing &&
      !(state.layer.asked && state.layer.asked !== state.layer.key),
    ), // nor a point layer being painted (drawing.js)
    busy: state.inFlight || Boolean(state.pending),
    error: state.error,
    worker: state.worker,
    names: data?.names,
    dim: data?.dim,
    n: data?.y.length,
    x: data?.x,
    y: data?.y,
    fit: fit && {
      n: fit.n,
      h: Array.from(fit.h),
      kernel: fit.kernel,
      estimator: fit.estimator,
      level: fit.level,
      draft: fit.draft,
      curveOnly: Boolean(fit.curveOnly),
      method: fit.method,
      errorEstimate: fit.errorEstimate,
      queries: fit.queries,
      mean: fit.mean,
      lower: fit.lower,
      upper: fit.upper,
      effectiveKeys: fit.effectiveKeys,
      maxDifference: fit.view?.maxDiff,
      attentionKernel: fit.view?.kernel,
      attentionSoftmax: fit.view?.softmax,
      viewH: fit.viewH,
      approximation: fit.view?.approx ?? null,
      matrix: fit.matrix,
      warnings: fit.warnings,
      frac: fit.frac,
      iterations: fit.iterations,
      weights: fit.weights,
      robust: fit.robust ?? null,
      variance: fit.variance ?? null,
      localVariance: fit.localVariance ?? null,
      slope: fit.slope ?? null,
      slopeLower: fit.slopeLower ?? null,
      slopeUpper: fit.slopeUpper ?? null,
      slopeError: fit.slopeError ?? null,
      spanBandwidth: fit.spanBandwidth ?? null,
      bandwidths: fit.bandwidths ?? null,
      lambda: fit.lambda ?? null,
      curves: fit.curves ?? null,
      // loess: its settings, R's statistics and standard errors.
      loessSpan: fit.loessSpan ?? null,
      degree: fit.degree ?? null,
      family: fit.family ?? null,
      stderr: fit.stderr ?? null,
      enp: fit.enp ?? null,
      residualScale: fit.residualScale ?? null,
      degreesOfFreedom: fit.degreesOfFreedom ?? null,
      quantile: fit.quantile ?? null,
    },
    category: data?.category ?? null,
    hSource: state.hSource,
    dataset: data?.dataset ?? null,
    selection: state.selection,
    learning: Boolean(state.learning),
    malformed: state.malformed,
    hoverRow: state.hoverRow,
    timings: state.timings,
    drawTimes,
  });
}
