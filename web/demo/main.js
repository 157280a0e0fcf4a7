// The demo page's wiring: controls → workers → plots. The main thread never computes a fit: parsing runs in
// parse-worker.js and every kernel-attention call in worker.js; this file only keeps state and draws.
import { columnStats, EXAMPLES, generate, paddedRange } from './data.js';
import { channel } from './channel.js';
import { describeFit, describeHover, describeIdentity, describeTimings } from './describe.js';
import { download, fitCsv, readSettings, settingsHash } from './export.js';
import { drawBars, drawFit, drawMatrix, drawSelection, drawSurface } from './plots.js';
import { svgCanvas } from './svg.js';

const THIN = 5;  // effective points below which support is called thin
// Larger files are refused before a byte is read: every row is held in this tab's memory (the parse worker checks
// lines of over 10 MB itself).
const MAX_FILE_BYTES = 200e6;
const $ = (id) => document.getElementById(id);
const ui = {
  example: $('example'), exampleN: $('example-n'), generate: $('generate'), file: $('file'), progress: $('progress'),
  paste: $('paste'), usePaste: $('use-paste'), columns: $('columns'), x1: $('x1'), x2: $('x2'), ycol: $('ycol'),
  dataStatus: $('data-status'), malformed: $('malformed'), kernel: $('kernel'), estimator: $('estimator'),
  bandwidth: $('bandwidth'), bandwidthValue: $('bandwidth-value'), method: $('method'), choose: $('choose'), learn: $('learn'),
  band: $('band'), level: $('level'), fitMethod: $('fit-method'), plot: $('plot'), fitStatus: $('fit-status'), hoverStatus: $('hover-status'),
  matrix: $('matrix'), bars: $('bars'), barsCaption: $('bars-caption'), selection: $('selection'),
  selectionCaption: $('selection-caption'), identity: $('identity'), identityCaption: $('identity-caption'),
  timings: $('timings'), attentionMethod: $('attention-method'), tolerance: $('tolerance'),
  approxHead: $('approx-head'), approxStatus: $('approx-status'),
};

const state = {
  data: null,          // { names, x, y, dim, source }
  version: 0,          // bumped with every new data set; answers for older data are dropped
  ratios: [1],         // h_d / h_1 (from the last selection, else the spread of each column)
  fit: null,           // the last fit drawn (the worker's answer)
  selection: null,
  hoverRow: null,
  timings: {},
  worker: null,        // { build, threads, simd, isolated }
  malformed: { count: 0, listed: [] },
  error: null,
  layer: {},          // the cached point layer of the main plot
};
window.demoState = { ready: false, fitsDrawn: 0, cspViolations: [] };

// What the page's Content-Security-Policy blocked, here and in the workers (they report theirs as messages): the
// tests read it, and it names what a stricter server would break.
const noteViolation = (v) => { window.demoState.cspViolations.push(v); };
document.addEventListener('securitypolicyviolation', (e) => noteViolation(`page: ${e.violatedDirective} ${e.blockedURI}`));

// ---- workers --------------------------------------------------------------------------------------------------

const workerUrl = new URL('./worker.js', import.meta.url);
const threadsParam = new URLSearchParams(location.search).get('threads');
if (threadsParam) workerUrl.searchParams.set('threads', threadsParam);
const compute = channel(new Worker(workerUrl, { type: 'module' }), (msg) => {
  if (msg.op === 'csp') noteViolation(`compute worker: ${msg.violation}`);
}, (err) => fail(err));
const parser = channel(new Worker(new URL('./parse-worker.js', import.meta.url), { type: 'module' }), (msg) => {
  if (msg.op === 'progress') ui.progress.value = msg.fraction;
  if (msg.op === 'csp') noteViolation(`parse worker: ${msg.violation}`);
}, (err) => fail(err));

function fail(err) {
  state.error = String(err && err.message || err);
  ui.fitStatus.textContent = `Error: ${state.error}`;
  ui.fitStatus.classList.add('error');
  publish();
}

// ---- fitting: at most one request in flight; the newest settings wait, older ones are never sent ---------------

let inFlight = false;
let pending = null;
let lastDrawn = 0;
let requestSeq = 0;

// h₁ exactly as chosen or dragged (the slider's steps would round a chosen bandwidth).
let chosenH1 = null;
const h1 = () => chosenH1 ?? 10 ** Number(ui.bandwidth.value);
const bandwidthVector = () => state.ratios.map((r) => h1() * r);

function requestFit(draft = false) {
  if (!state.data) return;
  pending = { seq: ++requestSeq, draft };
  publish();
  pump();
}

async function pump() {
  if (inFlight || !pending) return;
  const request = pending;
  pending = null;
  inFlight = true;
  const version = state.version;
  const settings = {
    h: bandwidthVector(), kernel: ui.kernel.value, estimator: ui.estimator.value, level: Number(ui.level.value),
    draft: request.draft, method: ui.fitMethod.value,
    attentionMethod: ui.attentionMethod.value, tolerance: Number(ui.tolerance.value),
  };
  const t0 = performance.now();
  try {
    const answer = await compute('fit', settings);
    // Stale: the data changed meanwhile, or a newer answer is already on screen.
    if (version === state.version && request.seq > lastDrawn) {
      lastDrawn = request.seq;
      if (!answer.view) Object.assign(answer, { view: state.fit?.view ?? null, matrix: state.fit?.matrix ?? null, viewH: state.fit?.viewH });
      else answer.viewH = answer.h;
      state.fit = answer;
      state.error = null;
      ui.fitStatus.classList.remove('error');
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
      inFlight = false;
      publish();
      pump();
    }, rest);
  }
}

async function chooseBandwidth() {
  if (!state.data) return;
  learning = null;
  const version = state.version;
  ui.selectionCaption.textContent = 'Choosing…';
  try {
    const chosen = await compute('select', {
      method: ui.method.value, kernel: ui.kernel.value, estimator: ui.estimator.value, approximation: ui.fitMethod.value,
    });
    if (version !== state.version) return;
    state.selection = chosen;
    state.timings.select = chosen.ms;
    state.ratios = chosen.bandwidth.map((h) => h / chosen.bandwidth[0]);
    setSlider(chosen.bandwidth[0]);
    const what = { cv: 'leave-one-out cross-validation', aicc: 'AICc', scott: "Scott's rule", silverman: "Silverman's rule" };
    ui.selectionCaption.textContent = `${what[chosen.method]} on ${chosen.n.toLocaleString('en')} points chose ` +
      `h = ${chosen.bandwidth.map((h) => h.toPrecision(3)).join(', ')}` +
      (chosen.curve.scores.length ? ` after ${chosen.curve.scores.length} evaluations (solid line; dashed: the slider).` : '.');
    requestFit(false);
  } catch (err) {
    fail(err);
  }
}

// "Learn h": gradient descent on the leave-one-out loss, one Adam step per round trip to the worker, the fit and the
// attention matrix redrawn as h moves and the loss drawn against h in the selection plot. The button stops it.
const LEARN_STEPS = 60;
const LEARN_STALL = 1e-4;  // stop once ten steps improved the loss by less than this fraction
let learning = null;       // { version } while a run is going; set to null to stop it

async function learnBandwidth() {
  if (!state.data) return;
  if (learning) {
    learning = null;
    return;
  }
  const run = { version: state.version };
  learning = run;
  ui.learn.textContent = 'Stop';
  const what = `Gradient descent (Adam on log h) on the leave-one-out loss of ${ui.kernel.selectedOptions[0].textContent} ` +
    'attention pooling (Nadaraya–Watson)';
  try {
    const { n } = await compute('learnStart', { h: bandwidthVector(), kernel: ui.kernel.value });
    const curve = { bandwidths: [], scores: [] };
    for (let step = 1; step <= LEARN_STEPS && learning === run && state.version === run.version; step++) {
      const { h, loss, next } = await compute('learnStep', {});
      if (learning !== run || state.version !== run.version) break;
      curve.bandwidths.push(...h);
      curve.scores.push(loss);
      state.selection = { method: 'learn', bandwidth: h, score: loss, curve, n };
      state.ratios = next.map((v) => v / next[0]);
      setSlider(next[0]);
      ui.selectionCaption.textContent = `${what} on ${n.toLocaleString('en')} points: step ${step}, loss ${loss.toPrecision(4)} ` +
        `at h = ${h.map((v) => v.toPrecision(3)).join(', ')}.`;
      requestFit(false);
      const s = curve.scores;
      if (s.length > 10 && s.at(-11) - s.at(-1) < LEARN_STALL * s.at(-11)) break;
    }
  } catch (err) {
    ui.selectionCaption.textContent = `${what}: ${String(err && err.message || err)}`;
  } finally {
    if (learning === run) learning = null;
    ui.learn.textContent = 'Learn h';
    publish();
  }
}

function setSlider(h) {
  const v = Math.log10(h);
  if (v < Number(ui.bandwidth.min)) ui.bandwidth.min = String(Math.floor(v * 10) / 10);
  if (v > Number(ui.bandwidth.max)) ui.bandwidth.max = String(Math.ceil(v * 10) / 10);
  ui.bandwidth.value = String(v);
  chosenH1 = h;
  showBandwidth();
}

function showBandwidth() {
  const text = bandwidthVector().map((h) => h.toPrecision(3)).join(', ');
  ui.bandwidthValue.value = text;
  ui.bandwidth.setAttribute('aria-valuetext', `h = ${text}`);
}

// ---- data -----------------------------------------------------------------------------------------------------

/** Makes `data` current; the bandwidth is then `h` (h₁) if given, else chosen by the selected method. */
async function setData(data, { h = null } = {}) {
  state.version += 1;
  state.data = { ...data, version: state.version };
  state.fit = null;
  state.selection = null;
  state.hoverRow = null;
  publish();
  document.body.dataset.dim = String(data.dim);
  ui.band.disabled = data.dim !== 1;
  const stats = columnStats(data.x, data.dim);
  state.ratios = stats.map((s) => s.sd / stats[0].sd);
  const range = stats[0].max - stats[0].min || 1;
  ui.bandwidth.min = String(Math.floor(Math.log10(range / 1000) * 10) / 10);
  ui.bandwidth.max = String(Math.ceil(Math.log10(range * 2) * 10) / 10);
  state.view = {
    xDomain: [stats[0].min - 0.03 * range, stats[0].max + 0.03 * range],
    yDomain: paddedRange(data.y),
    box: stats.map((s) => [s.min - 0.02 * (s.max - s.min || 1), s.max + 0.02 * (s.max - s.min || 1)]),
  };
  const n = data.y.length;
  const t0 = performance.now();
  const info = await compute('data', { x: Float64Array.from(data.x), y: Float64Array.from(data.y), dim: data.dim });
  state.timings = { ...state.timings, load: performance.now() - t0 };
  state.sampleInfo = info;
  ui.dataStatus.classList.remove('error');
  ui.dataStatus.textContent = `${n.toLocaleString('en')} points, ${data.dim === 1 ? 'one input' : 'two inputs'} ` +
    `(${data.names.join(', ')}) from ${data.source}.` +
    (info.fitN < n ? ` Exact fits and the attention views use a random ${info.fitN.toLocaleString('en')} of them` +
      (data.dim === 1 ? '; fits on the grid use all.' : '.') : '') +
    (info.draftN < info.fitN ? ` While the slider moves: ${info.draftN.toLocaleString('en')}, refined on release.` : '');
  scheduleDraw();
  if (h === null) {
    await chooseBandwidth();
  } else {
    setSlider(h);
    requestFit(false);
  }
}

function useExample(h = null) {
  const n = Math.max(2, Math.min(1_000_000, Math.round(Number(ui.exampleN.value)) || 300));
  const data = generate(ui.example.value, n);
  ui.columns.hidden = true;
  showMalformed({ count: 0, listed: [] });
  setData({ ...data, example: { name: ui.example.value, n }, source: `the “${ui.example.selectedOptions[0].textContent}” example` }, { h });
}

/** A problem with the visitor's data, shown where the data's status goes. */
function dataError(message) {
  ui.dataStatus.textContent = message;
  ui.dataStatus.classList.add('error');
  window.demoState.parseError = message;
}

let parsedSource = '';
async function parse(source, name) {
  const size = source.file ? source.file.size : source.text.length;
  if (size > MAX_FILE_BYTES) {
    dataError(`${name} is ${(size / 1e6).toFixed(0)} MB; the demo reads files of up to ${MAX_FILE_BYTES / 1e6} MB, since ` +
      'it keeps every row in this tab. Use a sample of the rows here, or the kernel-attention command line for all of them.');
    return;
  }
  ui.progress.hidden = false;
  ui.progress.value = 0;
  ui.dataStatus.classList.remove('error');
  ui.dataStatus.textContent = `Reading ${name}…`;
  window.demoState.parseError = undefined;
  try {
    const table = await parser('parse', source);
    ui.progress.hidden = true;
    state.timings.parse = table.ms;
    parsedSource = `${name} (${table.rows.toLocaleString('en')} rows)`;
    fillColumns(table.names);
    await selectColumns();
  } catch (err) {
    ui.progress.hidden = true;
    dataError(`Could not read ${name}: ${err.message}`);
  }
}

function fillColumns(names) {
  const fill = (select, extra) => {
    select.replaceChildren();
    if (extra) select.append(new Option(extra, ''));
    names.forEach((name, i) => select.append(new Option(name, String(i))));  // text, never HTML
  };
  fill(ui.x1);
  fill(ui.x2, 'none');
  fill(ui.ycol);
  ui.x1.value = '0';
  ui.x2.value = '';
  ui.ycol.value = String(names.length - 1);
  ui.columns.hidden = false;
}

async function selectColumns() {
  const xColumns = [Number(ui.x1.value)];
  if (ui.x2.value !== '' && ui.x2.value !== ui.x1.value) xColumns.push(Number(ui.x2.value));
  const policy = document.querySelector('input[name="policy"]:checked').value;
  const picked = await parser('select', { xColumns, yColumn: Number(ui.ycol.value), policy });
  showMalformed(picked.malformed);
  if (picked.rejected) {
    ui.dataStatus.textContent = `Rejected ${parsedSource}: ${picked.malformed.count} malformed row(s). ` +
      'Fix them, or choose “skip”.';
    return;
  }
  if (picked.y.length < 2) {
    ui.dataStatus.textContent = `${parsedSource}: fewer than two usable rows.`;
    return;
  }
  await setData({ names: picked.names, x: picked.x, y: picked.y, dim: picked.dim, source: parsedSource });
}

function showMalformed(malformed) {
  state.malformed = malformed;
  ui.malformed.replaceChildren(...malformed.listed.map(({ line, reason }) => {
    const li = document.createElement('li');
    li.textContent = `line ${line}: ${reason}`;
    return li;
  }));
  if (malformed.count > malformed.listed.length) {
    const li = document.createElement('li');
    li.textContent = `… and ${malformed.count - malformed.listed.length} more`;
    ui.malformed.append(li);
  }
  if (malformed.count) {
    const li = document.createElement('li');
    li.className = 'summary';
    li.textContent = `${malformed.count} malformed row(s)`;
    ui.malformed.prepend(li);
  }
  publish();
}

/** Where the pointer is in data coordinates (1-D plot), or null outside the plot. */
function pointerAt(event) {
  const { data, view } = state;
  if (!data || data.dim !== 1 || !state.scales) return null;
  const rect = ui.plot.getBoundingClientRect();
  const x = state.scales.sx.invert(event.clientX - rect.left);
  const y = state.scales.sy.invert(event.clientY - rect.top);
  const inside = x >= view.xDomain[0] && x <= view.xDomain[1] && y >= view.yDomain[0] && y <= view.yDomain[1];
  return inside ? { x, y } : null;
}

// Dragging a point moves it on screen at once and refits when it is dropped.
let dragging = null;
let dragMoves = 0;

function startDrag(event) {
  const { data } = state;
  if (!pointerAt(event)) return;
  const rect = ui.plot.getBoundingClientRect();
  const px = event.clientX - rect.left;
  const py = event.clientY - rect.top;
  let best = -1;
  let bestD = 36;  // within 6 px
  for (let i = 0; i < data.y.length; i++) {
    const d = (state.scales.sx(data.x[i]) - px) ** 2 + (state.scales.sy(data.y[i]) - py) ** 2;
    if (d < bestD) { bestD = d; best = i; }
  }
  if (best < 0) return;
  dragging = { index: best, moved: false };
  event.preventDefault();
}

function moveDrag(event) {
  if (!dragging) return;
  const at = pointerAt(event);
  if (!at) return;
  state.data.x[dragging.index] = at.x;
  state.data.y[dragging.index] = at.y;
  state.data.version = `${state.version}.${++dragMoves}`;  // repaints the point layer
  dragging.moved = true;
  scheduleDraw();
}

function endDrag() {
  if (!dragging) return;
  const { moved } = dragging;
  dragging = null;
  if (moved) {
    ui.plot.dataset.dragged = '1';  // the click that ends a drag adds no point
    setData({ ...state.data, example: null, source: withClicks(state.data.source) }, { h: h1() });
  }
}

const withClicks = (source) => (source.endsWith(' and edited points') ? source : `${source} and edited points`);

function addPoint(event) {
  if (ui.plot.dataset.dragged) { delete ui.plot.dataset.dragged; return; }
  const { data, view } = state;
  if (!data || data.dim !== 1 || !state.scales) return;
  const rect = ui.plot.getBoundingClientRect();
  const x = state.scales.sx.invert(event.clientX - rect.left);
  const y = state.scales.sy.invert(event.clientY - rect.top);
  if (!(x >= view.xDomain[0] && x <= view.xDomain[1] && y >= view.yDomain[0] && y <= view.yDomain[1])) return;
  const xs = new Float64Array(data.y.length + 1);
  const ys = new Float64Array(data.y.length + 1);
  xs.set(data.x);
  ys.set(data.y);
  xs[data.y.length] = x;
  ys[data.y.length] = y;
  setData({ ...data, x: xs, y: ys, example: null, source: withClicks(data.source) }, { h: h1() });
}

// ---- sharing and saving ----------------------------------------------------------------------------------------

const SETTINGS = {
  example: (v) => v in EXAMPLES,
  n: (v) => /^\d+$/.test(v) && Number(v) >= 2 && Number(v) <= 1_000_000,
  kernel: (v) => [...ui.kernel.options].some((o) => o.value === v),
  estimator: (v) => [...ui.estimator.options].some((o) => o.value === v),
  method: (v) => [...ui.method.options].some((o) => o.value === v),
  level: (v) => [...ui.level.options].some((o) => o.value === v),
  fitMethod: (v) => [...ui.fitMethod.options].some((o) => o.value === v),
  attention: (v) => [...ui.attentionMethod.options].some((o) => o.value === v),
  tolerance: (v) => [...ui.tolerance.options].some((o) => o.value === v),
  band: (v) => v === 'on' || v === 'off',
  h: (v) => Number(v) > 0 && Number.isFinite(Number(v)),
};

/** The settings (never the data; the example's name and size only) go into the URL's hash, without a request. */
function shareSettings() {
  const settings = {
    kernel: ui.kernel.value, estimator: ui.estimator.value, method: ui.method.value, fitMethod: ui.fitMethod.value,
    level: ui.level.value, attention: ui.attentionMethod.value, tolerance: ui.tolerance.value,
    band: ui.band.checked ? 'on' : 'off', h: Number(h1().toPrecision(6)),
  };
  const example = state.data?.example;
  history.replaceState(null, '', settingsHash(example ? { example: example.name, n: example.n, ...settings } : settings));
}

function applySettings() {
  const shared = readSettings(location.hash, SETTINGS);
  if (shared.example) ui.example.value = shared.example;
  if (shared.n) ui.exampleN.value = shared.n;
  for (const key of ['kernel', 'estimator', 'method', 'level', 'fitMethod']) if (shared[key]) ui[key].value = shared[key];
  if (shared.band) ui.band.checked = shared.band === 'on';
  if (shared.attention) ui.attentionMethod.value = shared.attention;
  if (shared.tolerance) ui.tolerance.value = shared.tolerance;
  ui.tolerance.disabled = ui.attentionMethod.value === 'exact';
  return shared.h ? Number(shared.h) : null;
}

function saveFit() {
  const { fit, data } = state;
  if (!fit) return;
  download(new Blob([fitCsv(fit, data.names, ui.band.checked && fit.dim === 1)], { type: 'text/csv' }), 'kernel-fit.csv');
}

const PLOT_FILES = { plot: 'kernel-fit', matrix: 'attention-matrix', selection: 'bandwidth-selection' };

/** Saves one plot as PNG (the canvas's pixels) or SVG (the same drawing redone as vectors, in the current colours). */
function savePlot(name, format) {
  const canvas = ui[name];
  if (format === 'png') {
    canvas.toBlob((blob) => blob && download(blob, `${PLOT_FILES[name]}.png`));
    return;
  }
  const target = svgCanvas(canvas, {
    title: canvas.getAttribute('aria-label'), background: getComputedStyle(document.documentElement).getPropertyValue('--bg').trim(),
  });
  paintPlot(name, target, {});
  download(new Blob([target.svg()], { type: 'image/svg+xml' }), `${PLOT_FILES[name]}.svg`);
}

// ---- drawing ----------------------------------------------------------------------------------------------------

let drawQueued = false;
const drawTimes = [];  // the last 200 draws (ms), for the responsiveness test
function scheduleDraw() {
  if (drawQueued) return;
  drawQueued = true;
  requestAnimationFrame(() => {
    drawQueued = false;
    draw();
  });
}

function hovered() {
  const { fit, hoverRow } = state;
  if (!fit || !fit.matrix || hoverRow === null) return null;
  const { matrix } = fit;
  return { query: Array.from(matrix.queries.subarray(hoverRow * fit.dim, (hoverRow + 1) * fit.dim)), top: matrix.top[hoverRow] };
}

/** Draws plot `name` (plot, matrix, selection) on `target`: its canvas, or svgCanvas's stand-in for an export. */
function paintPlot(name, target, cache) {
  const { data, fit, view } = state;
  if (name === 'matrix') return drawMatrix(target, fit?.matrix, state.hoverRow);
  if (name === 'selection') return drawSelection(target, state.selection, h1());
  if (!data) return null;
  const hover = hovered();
  return data.dim === 1
    ? drawFit(target, { data, fit: fit && fit.dim === 1 ? fit : null, showBand: ui.band.checked, hover, thin: THIN, ...view, cache })
    : drawSurface(target, { data, fit: fit && fit.dim === 2 ? fit : null, hover, side: 48, thin: THIN, ...view, cache });
}

function draw() {
  const { data, fit } = state;
  if (!data) return;
  const t0 = performance.now();
  const hover = hovered();
  state.scales = paintPlot('plot', ui.plot, state.layer);
  // The smaller views are redrawn only when what they show changed (dragging changes only the fit and h).
  if (changed('matrix', fit?.matrix, state.hoverRow, ui.matrix.clientWidth)) {
    state.matrixArea = paintPlot('matrix', ui.matrix);
    drawBars(ui.bars, fit?.matrix, state.hoverRow);
  }
  if (changed('hover', fit, state.hoverRow, ui.band.checked)) describeHover(ui, fit, hover, state.hoverRow, ui.band.checked);
  if (changed('selection', state.selection, h1(), ui.selection.clientWidth)) paintPlot('selection', ui.selection);
  if (fit && changed('text', fit)) {
    describeFit(ui, fit, THIN);
    if (fit.view && changed('identity', fit.view)) describeIdentity(ui, fit);
    describeTimings(ui, fit, state);
  }
  state.timings.draw = performance.now() - t0;
  drawTimes.push(state.timings.draw);
  if (drawTimes.length > 200) drawTimes.shift();
  publish();
}

const drawn = {};
/** True when any of `inputs` differs from the last call with this name (identity comparison). */
function changed(name, ...inputs) {
  const last = drawn[name];
  if (last && last.length === inputs.length && last.every((v, i) => v === inputs[i])) return false;
  drawn[name] = inputs;
  return true;
}

/** What the tests read: the numbers on screen, not pixels. */
function publish() {
  const { data, fit } = state;
  Object.assign(window.demoState, {
    ready: Boolean(data && fit && !fit.draft && !inFlight && !pending && !dragging && !learning),
    busy: inFlight || Boolean(pending),
    error: state.error,
    worker: state.worker,
    names: data?.names,
    dim: data?.dim,
    n: data?.y.length,
    x: data?.x,
    y: data?.y,
    fit: fit && {
      n: fit.n, h: Array.from(fit.h), kernel: fit.kernel, estimator: fit.estimator, level: fit.level, draft: fit.draft,
      method: fit.method, errorEstimate: fit.errorEstimate,
      queries: fit.queries, mean: fit.mean, lower: fit.lower, upper: fit.upper, effectiveKeys: fit.effectiveKeys,
      maxDifference: fit.view?.maxDiff, attentionKernel: fit.view?.kernel, attentionSoftmax: fit.view?.softmax, viewH: fit.viewH,
      approximation: fit.view?.approx ?? null,
      matrix: fit.matrix,
    },
    selection: state.selection,
    learning: Boolean(learning),
    malformed: state.malformed,
    hoverRow: state.hoverRow,
    timings: state.timings,
    drawTimes,
  });
}

// ---- events -----------------------------------------------------------------------------------------------------

function hoverAt(event) {
  const { fit, data } = state;
  if (!fit || !fit.matrix || !state.scales) return;
  const rect = ui.plot.getBoundingClientRect();
  const px = event.clientX - rect.left;
  const py = event.clientY - rect.top;
  const { matrix } = fit;
  let best = null;
  let bestD = Infinity;
  for (let r = 0; r < matrix.rows; r++) {
    const dx = state.scales.sx(matrix.queries[r * fit.dim]) - px;
    const dy = data.dim === 2 ? state.scales.sy(matrix.queries[r * 2 + 1]) - py : 0;
    if (dx * dx + dy * dy < bestD) { bestD = dx * dx + dy * dy; best = r; }
  }
  setHover(best);
}

function setHover(row) {
  if (row === state.hoverRow) return;
  state.hoverRow = row;
  scheduleDraw();
}

function hoverMatrix(event) {
  const area = state.matrixArea;
  if (!area || !state.fit?.matrix) return;
  const rect = ui.matrix.getBoundingClientRect();
  const row = Math.floor(((event.clientY - rect.top - area.y) / area.h) * state.fit.matrix.rows);
  setHover(row >= 0 && row < state.fit.matrix.rows ? row : null);
}

function wire() {
  ui.generate.addEventListener('click', () => useExample());
  ui.file.addEventListener('change', () => {
    const file = ui.file.files[0];
    if (file) parse({ file }, file.name);
  });
  ui.usePaste.addEventListener('click', () => parse({ text: ui.paste.value }, 'the pasted text'));
  for (const select of [ui.x1, ui.x2, ui.ycol]) select.addEventListener('change', () => selectColumns());
  for (const radio of document.querySelectorAll('input[name="policy"]')) radio.addEventListener('change', () => selectColumns());
  document.addEventListener('dragover', (e) => e.preventDefault());
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    const file = e.dataTransfer?.files[0];
    if (file) parse({ file }, file.name);
  });

  ui.bandwidth.addEventListener('input', () => { learning = null; chosenH1 = null; showBandwidth(); requestFit(true); scheduleDraw(); });
  ui.bandwidth.addEventListener('change', () => requestFit(false));
  for (const control of [ui.kernel, ui.estimator, ui.level, ui.fitMethod]) control.addEventListener('change', () => requestFit(false));
  ui.band.addEventListener('change', () => { shareSettings(); scheduleDraw(); });
  ui.attentionMethod.addEventListener('change', () => { ui.tolerance.disabled = ui.attentionMethod.value === 'exact'; });
  for (const control of [ui.attentionMethod, ui.tolerance]) control.addEventListener('change', () => requestFit(false));
  ui.choose.addEventListener('click', chooseBandwidth);
  ui.learn.addEventListener('click', learnBandwidth);
  $('save-fit').addEventListener('click', saveFit);
  for (const button of document.querySelectorAll('button[data-plot]')) {
    button.addEventListener('click', () => savePlot(button.dataset.plot, button.dataset.format));
  }
  $('controls').addEventListener('submit', (e) => e.preventDefault());

  ui.plot.addEventListener('mousemove', (e) => (dragging ? moveDrag(e) : hoverAt(e)));
  ui.plot.addEventListener('mousedown', startDrag);
  window.addEventListener('mouseup', endDrag);
  ui.plot.addEventListener('click', addPoint);
  ui.matrix.addEventListener('mousemove', hoverMatrix);
  ui.matrix.tabIndex = 0;
  ui.matrix.addEventListener('keydown', (e) => {
    if (!state.fit?.matrix || !['ArrowUp', 'ArrowDown'].includes(e.key)) return;
    e.preventDefault();
    const rows = state.fit.matrix.rows;
    setHover(Math.max(0, Math.min(rows - 1, (state.hoverRow ?? -1) + (e.key === 'ArrowDown' ? 1 : -1))));
  });
  new ResizeObserver(scheduleDraw).observe(document.body);
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    for (const name of Object.keys(drawn)) delete drawn[name];
    scheduleDraw();
  });
}

async function main() {
  wire();
  showBandwidth();
  try {
    state.worker = await compute('hello');
  } catch (err) {
    fail(err);
    return;
  }
  useExample(applySettings());
}

main();
