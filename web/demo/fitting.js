// Fitting and choosing h: at most one fit request in flight (the newest settings wait, older ones are never sent),
// the bandwidth rules and "Learn h", and the slider that holds h.
import { hText } from './describe.js';
import { shareSettings } from './link.js';
import { publish, state } from './state.js';
import { scheduleDraw } from './drawing.js';
import { clearError, ui } from './ui.js';
import { compute, fail } from './workers.js';

let lastDrawn = 0;
let requestSeq = 0;

// h₁ exactly as chosen or dragged (the slider's steps would round a chosen bandwidth).
let chosenH1 = null;
export const h1 = () => chosenH1 ?? 10 ** Number(ui.bandwidth.value);
export const bandwidthVector = () => state.ratios.map((r) => h1() * r);

/** Whether the estimator menu holds LOWESS (one x): its span and iterations replace h and the kernel's controls. */
export const isLowess = () => ui.estimator.value === 'lowess';
/** Whether a kernel fit takes its bandwidth from a nearest-neighbour span (the "Bandwidth" menu) rather than h. */
export const isSpan = () => !isLowess() && ui.bandwidthKind.value === 'span';
/** The kernel fit's span f (the library's `bandwidth: { span }`), or 0 for a fit at h. */
export const kernelSpan = () => (isSpan() ? Number(ui.kernelSpan.value) : 0);

/** The span f and the robustness iterations of the LOWESS controls (an entry out of range is clamped). */
export function lowessSettings() {
  const iterations = Math.round(Number(ui.iterations.value));
  return {
    frac: Number(ui.span.value),
    iterations: Number.isFinite(iterations) ? Math.min(10, Math.max(0, iterations)) : 3,
  };
}

// Rounds of bisquare robustness weights with the "robust" box (Cleveland's and R's lowess() default).
const ROBUST_ITERATIONS = 3;
/** The kernel fits' robustness (the "robust" box) and band variance ("band σ": 'global' or 'local'). */
export const kernelExtras = () => ({
  robust: ui.robust.checked ? ROBUST_ITERATIONS : 0,
  variance: ui.variance.disabled ? 'global' : ui.variance.value,
  derivative: ui.derivative.checked && !ui.derivative.disabled,
});

/**
 * Shows the controls of the chosen smoother (style.css hides the others by body[data-smoother]); LOWESS is offered
 * for one x only, and 2-D data falls back to local-linear.
 */
export function showSmoother() {
  const lowessOption = ui.estimator.querySelector('option[value="lowess"]');
  const dim = state.data?.dim ?? 1;
  lowessOption.disabled = dim !== 1;
  if (dim !== 1 && isLowess()) ui.estimator.value = 'local-linear';
  document.body.dataset.smoother = isLowess() ? 'lowess' : 'kernel';
  document.body.dataset.bandwidth = isSpan() ? 'span' : 'h';
  ui.spanValue.value = `f = ${Number(ui.span.value).toFixed(2)}`;
  ui.span.setAttribute('aria-valuetext', ui.spanValue.value);
  ui.kernelSpanValue.value = `f = ${Number(ui.kernelSpan.value).toFixed(2)}`;
  ui.kernelSpan.setAttribute('aria-valuetext', ui.kernelSpanValue.value);
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
    kernel: ui.kernel.value,
    estimator: ui.estimator.value,
    level: Number(ui.level.value),
    draft: request.draft,
    // Spans run exactly (the grid and sparse plans serve one h for all queries).
    method: isSpan() ? 'exact' : ui.fitMethod.value,
    span: kernelSpan(),
    attentionMethod: ui.attentionMethod.value,
    tolerance: Number(ui.tolerance.value),
    ...lowessSettings(),
    ...kernelExtras(),
  };
  const t0 = performance.now();
  try {
    const answer = await compute('fit', settings);
    // Stale: the data changed meanwhile, or a newer answer is already on screen.
    if (version === state.version && request.seq > lastDrawn) {
      lastDrawn = request.seq;
      if (!answer.view && !answer.lowess)
        Object.assign(answer, {
          view: state.fit?.view ?? null,
          matrix: state.fit?.matrix ?? null,
          viewH: state.fit?.viewH,
        });
      else answer.viewH = answer.h;
      state.fit = answer;
      state.error = null;
      clearError(ui.fitStatus);
      state.timings = { ...state.timings, ...answer.timings, roundTrip: performance.now() - t0 };
      if (state.hoverRow !== null && answer.matrix) state.hoverRow = Math.min(state.hoverRow, answer.matrix.rows - 1);
      window.demoState.fitsDrawn += 1;
      if (!answer.draft) shareSettings();
      scheduleDraw();
    }
  } catch (err) {
    fail(err);
  } finally {
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

const RULES = {
  cv: 'leave-one-out cross-validation',
  aicc: 'AICc',
  scott: "Scott's rule",
  silverman: "Silverman's rule",
};
export const kernelName = (kernel) => [...ui.kernel.options].find((o) => o.value === kernel)?.textContent ?? kernel;
export const estimatorName = (estimator) => (estimator === 'local-linear' ? 'local-linear' : 'Nadaraya–Watson');
let chooseSeq = 0;

/**
 * Blocked CV's radius r (the "leave out ±" field; the library's `exclude`) when the rule is CV, else 0; the field is
 * offered with CV only. An entry that is not a number ≥ 0 counts as 0 (leave-one-out).
 */
export function blockRadius() {
  ui.exclude.disabled = ui.method.value !== 'cv';
  const r = Number(ui.exclude.value);
  return ui.method.value === 'cv' && Number.isFinite(r) && r > 0 ? r : 0;
}

/** A rule's name in captions; CV with a radius r is blocked CV, r in x's terms (a duration on a date axis). */
const ruleName = ({ method, exclude = 0 }) =>
  method === 'cv' && exclude > 0
    ? `blocked cross-validation (each point's neighbours within ±${hText([exclude], state.data?.axes)} left out)`
    : RULES[method];

export async function chooseBandwidth() {
  if (!state.data) return;
  // LOWESS sets each point's bandwidth from the span: there is no h to choose, only the fit to redo.
  if (isLowess()) {
    state.learning = null;
    requestFit(false);
    return;
  }
  state.learning = null;
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
  try {
    const chosen = await compute('select', settings);
    // Dropped when the data changed or a newer choice was asked for meanwhile (another kernel, rule or estimator).
    if (version !== state.version || seq !== chooseSeq) return;
    state.selection = chosen;
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
    if (seq === chooseSeq) state.choosing = false;
    publish();
  }
}

/** The selection caption, from the selection and the slider: never about a kernel or h no longer shown. */
export function describeSelection() {
  const chosen = state.selection;
  if (!chosen || chosen.method === 'learn') return;
  const axes = state.data?.axes;
  const hs = hText(chosen.bandwidth, axes);
  const moved = Math.abs(Math.log(h1() / chosen.bandwidth[0])) > 1e-6;
  ui.selectionCaption.textContent =
    `${ruleName(chosen)} for the ${kernelName(chosen.kernel)} kernel ` +
    `(${estimatorName(chosen.estimator)}) on ${chosen.n.toLocaleString('en')} points chose h = ${hs}` +
    (chosen.curve.scores.length
      ? ` after ${chosen.curve.scores.length} evaluations (solid line; dashed: the slider).`
      : ': a formula of the data’s spread, with no search to plot.') +
    (moved ? ` The slider now holds h = ${hText(bandwidthVector(), axes)}.` : '');
  showHNote();
}

/** "h was chosen for another kernel": shown when h was set by hand or by a link for other settings than those now. */
export function showHNote() {
  const source = state.hSource;
  const stale = Boolean(
    state.data &&
    source &&
    !isLowess() &&
    !isSpan() &&
    ['hand', 'link'].includes(source.by) &&
    (source.kernel !== ui.kernel.value || source.estimator !== ui.estimator.value),
  );
  ui.hNote.hidden = !stale;
  if (stale) {
    ui.hNoteText.textContent =
      `h = ${hText([h1()], state.data?.axes)} was ${source.by === 'link' ? 'given by the link' : 'set by hand'} ` +
      `with the ${kernelName(source.kernel)} kernel (${estimatorName(source.estimator)}); it was not chosen for the ` +
      `${kernelName(ui.kernel.value)} kernel (${estimatorName(ui.estimator.value)}).`;
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
  chosenH1 = h;
  showBandwidth();
}

export function showBandwidth() {
  const text = hText(bandwidthVector(), state.data?.axes);
  ui.bandwidthValue.value = text;
  ui.bandwidth.setAttribute('aria-valuetext', `h = ${text}`);
}

/** The slider moved by hand: h is the slider's, set by hand for the current kernel, and a draft fit follows. */
export function onSlider() {
  state.learning = null;
  chosenH1 = null;
  state.hSource = { by: 'hand', kernel: ui.kernel.value, estimator: ui.estimator.value };
  showBandwidth();
  requestFit(true);
  scheduleDraw();
}
