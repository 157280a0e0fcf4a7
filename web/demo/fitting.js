// Fitting and choosing h: at most one fit request in flight (the newest settings wait, older ones are never sent),
// the bandwidth rules and "Learn h", and the slider that holds h. What a fit or a choice changed is announced through
// state.js (notify): drawing.js redraws, link.js writes the address bar; neither is called from here.
import { endWork, startWork } from './busy.js';
import { describeSelection, ruleName, showBandwidth } from './captions.js';
import { hText } from './describe.js';
import {
  bandwidthVector,
  blockRadius,
  estimatorName,
  isKernel,
  isLoess,
  isLowess,
  isSpan,
  kernelExtras,
  kernelName,
  kernelSpan,
  loessSettings,
  lowessSettings,
} from './settings.js';
import { notify, publish, state } from './state.js';
import { clearError, ui } from './ui.js';
import { compute, fail } from './workers.js';

let lastDrawn = 0;
let requestSeq = 0;

/**
 * Shows the controls of the chosen smoother (style.css hides the others by body[data-smoother]); LOWESS is offered
 * for one x only, and 2-D data falls back to local-linear (loess takes one or two).
 */
export function showSmoother() {
  const lowessOption = ui.estimator.querySelector('option[value="lowess"]');
  const dim = state.data?.dim ?? 1;
  const category = Boolean(state.data?.category);
  lowessOption.disabled = dim !== 1 || category;
  if ((dim !== 1 || category) && isLowess()) ui.estimator.value = 'local-linear';
  // With a category, h and λ are chosen together by a criterion: no rule of thumb gives λ, "Learn h" learns h alone
  // (attention pooling has no discrete kernel), a span has no λ, and loess takes no discrete columns.
  ui.estimator.querySelector('option[value="loess"]').disabled = category;
  if (category && isLoess()) ui.estimator.value = 'local-linear';
  ui.bandwidthKind.querySelector('option[value="span"]').disabled = category;
  if (category && ui.bandwidthKind.value === 'span') ui.bandwidthKind.value = 'h';
  for (const rule of ['scott', 'silverman']) ui.method.querySelector(`option[value="${rule}"]`).disabled = category;
  if (category && !['cv', 'aicc'].includes(ui.method.value)) ui.method.value = 'cv';
  ui.learn.disabled = category;
  document.body.dataset.smoother = isLowess() ? 'lowess' : isLoess() ? 'loess' : 'kernel';
  document.body.dataset.bandwidth = isSpan() ? 'span' : 'h';
  ui.exclude.disabled = ui.method.value !== 'cv'; // blocked CV is a kind of CV
  ui.spanValue.value = `f = ${Number(ui.span.value).toFixed(2)}`;
  ui.span.setAttribute('aria-valuetext', ui.spanValue.value);
  ui.kernelSpanValue.value = `f = ${Number(ui.kernelSpan.value).toFixed(2)}`;
  ui.kernelSpan.setAttribute('aria-valuetext', ui.kernelSpanValue.value);
  ui.loessSpanValue.value = Number(ui.loessSpan.value).toFixed(2);
  ui.loessSpan.setAttribute('aria-valuetext', `span ${ui.loessSpanValue.value}`);
}

export function requestFit(draft = false) {
  if (!state.data) return;
  state.pending = { seq: ++requestSeq, draft };
  publish();
  pump();
}

async function pump() {
  if (state.inFlight || !state.pending) return;
  const request = state.pending;
  state.pending = null;
  state.inFlight = true;
  const version = state.version;
  const settings = {
    h: bandwidthVector(),
    lambda: state.lambda,
    kernel: ui.kernel.value,
    estimator: ui.estimator.value,
    level: Number(ui.level.value),
    draft: request.draft,
    method: ui.fitMethod.value, // the library's plan says whether it serves the call (a span, say)
    span: kernelSpan(),
    attentionMethod: ui.attentionMethod.value,
    tolerance: Number(ui.tolerance.value),
    ...lowessSettings(),
    ...loessSettings(),
    ...kernelExtras(),
  };
  const t0 = performance.now();
  const work = request.draft
    ? null
    : startWork('fit', isLowess() ? 'Fitting LOWESS' : isLoess() ? 'Fitting loess' : 'Fitting');
  try {
    const answer = await compute('fit', settings);
    // Stale: the data changed meanwhile, or a newer answer is already on screen.
    if (version === state.version && request.seq > lastDrawn) {
      lastDrawn = request.seq;
      if (!answer.view && !answer.lowess && !answer.loess && !answer.curves)
        Object.assign(answer, {
          view: state.fit?.view ?? null,
          matrix: state.fit?.matrix ?? null,
          viewH: state.fit?.viewH,
        });
      else answer.viewH = answer.h;
      // A curve drawn alone while the slider moves (worker.js, curveAt) keeps the derivative's panel as it was until
      // the release redraws it, rather than hiding it mid-drag.
      if (answer.curveOnly && state.fit?.slope)
        for (const key of ['slope', 'slopeLower', 'slopeUpper']) answer[key] = state.fit[key];
      state.fit = answer;
      state.error = null;
      clearError(ui.fitStatus);
      state.timings = { ...state.timings, ...answer.timings, roundTrip: performance.now() - t0 };
      if (state.hoverRow !== null && answer.matrix) state.hoverRow = Math.min(state.hoverRow, answer.matrix.rows - 1);
      window.demoState.fitsDrawn += 1;
      notify('fit', answer);
    }
  } catch (err) {
    fail(err);
  } finally {
    if (work) endWork(work);
    // While dragging, the worker rests as long as it worked before taking the next request: on a two-core machine
    // the page (and the browser drawing it) then gets a core back half the time.
    const rest = request.draft ? Math.min(200, performance.now() - t0) : 0;
    setTimeout(() => {
      state.inFlight = false;
      publish();
      pump();
    }, rest);
  }
}

let chooseSeq = 0;

export async function chooseBandwidth() {
  if (!state.data) return;
  // LOWESS and loess set each point's bandwidth from the span: there is no h to choose, only the fit to redo.
  if (!isKernel()) {
    state.learning = null;
    requestFit(false);
    return;
  }
  state.learning = null;
  ui.exclude.disabled = ui.method.value !== 'cv';
  const version = state.version;
  const seq = ++chooseSeq;
  const settings = {
    method: ui.method.value,
    kernel: ui.kernel.value,
    estimator: ui.estimator.value,
    approximation: ui.fitMethod.value,
    exclude: blockRadius(),
  };
  ui.selectionCaption.textContent =
    `Choosing h for the ${kernelName(settings.kernel)} kernel (${estimatorName(settings.estimator)}) ` +
    `by ${ruleName(settings)}…`;
  state.choosing = true;
  publish();
  const search = { cv: settings.exclude ? 'blocked cross-validation' : 'cross-validation' }[settings.method];
  const work = startWork('select', `Choosing h by ${search ?? ruleName(settings)}`);
  try {
    const chosen = await compute('select', settings);
    // Dropped when the data changed or a newer choice was asked for meanwhile (another kernel, rule or estimator).
    if (version !== state.version || seq !== chooseSeq) return;
    state.selection = chosen;
    state.lambda = chosen.lambda;
    state.timings.select = chosen.ms;
    state.ratios = chosen.bandwidth.map((h) => h / chosen.bandwidth[0]);
    state.hSource = { by: chosen.method, kernel: chosen.kernel, estimator: chosen.estimator, exclude: chosen.exclude };
    setSlider(chosen.bandwidth[0]);
    describeSelection();
    requestFit(false);
  } catch (err) {
    if (seq !== chooseSeq) return;
    ui.selectionCaption.textContent = `No bandwidth was chosen: ${String((err && err.message) || err)}`;
    fail(err);
  } finally {
    endWork(work);
    if (seq === chooseSeq) state.choosing = false;
    publish();
  }
}

// "Learn h": gradient descent on the leave-one-out loss, one Adam step per round trip to the worker, the fit and the
// attention matrix redrawn as h moves and the loss drawn against h in the selection plot. The button stops it.
const LEARN_STEPS = 60;
const LEARN_STALL = 1e-4; // stop once ten steps improved the loss by less than this fraction

export async function learnBandwidth() {
  if (!state.data) return;
  if (state.learning) {
    state.learning = null;
    return;
  }
  const run = { version: state.version };
  state.learning = run;
  ui.learn.textContent = 'Stop';
  const what =
    `Gradient descent (Adam on log h) on the leave-one-out loss of ${ui.kernel.selectedOptions[0].textContent} ` +
    'attention pooling (Nadaraya–Watson)';
  try {
    const { n } = await compute('learnStart', { h: bandwidthVector(), kernel: ui.kernel.value });
    const curve = { bandwidths: [], scores: [] };
    for (let step = 1; step <= LEARN_STEPS && state.learning === run && state.version === run.version; step++) {
      const { h, loss, next } = await compute('learnStep', {});
      if (state.learning !== run || state.version !== run.version) break;
      curve.bandwidths.push(...h);
      curve.scores.push(loss);
      state.selection = { method: 'learn', bandwidth: h, score: loss, curve, n };
      state.hSource = { by: 'learn', kernel: ui.kernel.value, estimator: ui.estimator.value };
      state.ratios = next.map((v) => v / next[0]);
      setSlider(next[0]);
      ui.selectionCaption.textContent =
        `${what} on ${n.toLocaleString('en')} points: step ${step}, loss ${loss.toPrecision(4)} ` +
        `at h = ${hText(h, state.data?.axes)}.`;
      requestFit(false);
      const s = curve.scores;
      if (s.length > 10 && s.at(-11) - s.at(-1) < LEARN_STALL * s.at(-11)) break;
    }
  } catch (err) {
    ui.selectionCaption.textContent = `${what}: ${String((err && err.message) || err)}`;
  } finally {
    if (state.learning === run) state.learning = null;
    ui.learn.textContent = 'Learn h';
    publish();
  }
}

export function setSlider(h) {
  const v = Math.log10(h);
  if (v < Number(ui.bandwidth.min)) ui.bandwidth.min = String(Math.floor(v * 10) / 10);
  if (v > Number(ui.bandwidth.max)) ui.bandwidth.max = String(Math.ceil(v * 10) / 10);
  ui.bandwidth.value = String(v);
  state.chosenH1 = h;
  showBandwidth();
}

/** The slider moved by hand: h is the slider's, set by hand for the current kernel, and a draft fit follows. */
export function onSlider() {
  state.learning = null;
  state.chosenH1 = null;
  state.hSource = { by: 'hand', kernel: ui.kernel.value, estimator: ui.estimator.value };
  showBandwidth();
  requestFit(true);
  notify('view');
}
