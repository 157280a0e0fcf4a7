// The demo page's wiring: controls → workers → plots. The main thread never computes a fit: parsing runs in
// parse-worker.js and every kernel-attention call in worker.js; this file only keeps state and draws.
import { columnStats, EXAMPLES, generate, paddedRange } from './data.js';
import { channel } from './channel.js';
import { describeFit, describeHover, describeIdentity, describeTimings, hText } from './describe.js';
import { axesOf, centreDates } from './axes.js';
import { labelFor, readOptions, resetReading, showReading, showRefusal, wireReading } from './reading.js';
import { download, fitCsv, observationsCsv, readSettings, settingsHash } from './export.js';
import { figure } from './figure.js';
import { drawBars, drawFit, drawMatrix, drawSelection, drawSurface } from './plots.js';
import { LINK_DATA_LIMIT, packData, unpackData } from './share.js';
import { DATASETS } from './data/datasets.js';
import { checkColumns } from './checks.js';

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
  approxHead: $('approx-head'), approxStatus: $('approx-status'), exampleSource: $('example-source'), addMode: $('add-mode'),
  undo: $('undo'), hNote: $('h-note'), hNoteText: $('h-note-text'), rechoose: $('rechoose'), fitWarnings: $('fit-warnings'),
  shareStatus: $('share-status'), saveStatus: $('save-status'), linkNote: $('link-note'),
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
  hSource: null,       // how h was set: { by: a rule, 'learn', 'hand' or 'link', kernel, estimator }
  undo: [],            // the data before each point added or moved (newest last)
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

/** Shows `message` in `element` as an error (styled, and announced at once), or clears the error styling. */
function showError(element, message) {
  element.textContent = message;
  element.classList.add('error');
  element.setAttribute('role', 'alert');
}
function clearError(element) {
  element.classList.remove('error');
  element.removeAttribute('role');
}

function fail(err) {
  state.error = String(err && err.message || err);
  showError(ui.fitStatus, `Error: ${state.error}`);
  if (/^Choosing/.test(ui.selectionCaption.textContent)) ui.selectionCaption.textContent = 'No bandwidth was chosen (see the error above).';
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
      inFlight = false;
      publish();
      pump();
    }, rest);
  }
}

const RULES = { cv: 'leave-one-out cross-validation', aicc: 'AICc', scott: "Scott's rule", silverman: "Silverman's rule" };
const kernelName = (kernel) => [...ui.kernel.options].find((o) => o.value === kernel)?.textContent ?? kernel;
const estimatorName = (estimator) => (estimator === 'local-linear' ? 'local-linear' : 'Nadaraya–Watson');
let chooseSeq = 0;

async function chooseBandwidth() {
  if (!state.data) return;
  learning = null;
  const version = state.version;
  const seq = ++chooseSeq;
  const settings = { method: ui.method.value, kernel: ui.kernel.value, estimator: ui.estimator.value, approximation: ui.fitMethod.value };
  ui.selectionCaption.textContent = `Choosing h for the ${kernelName(settings.kernel)} kernel (${estimatorName(settings.estimator)}) ` +
    `by ${RULES[settings.method]}…`;
  state.choosing = true;
  publish();
  try {
    const chosen = await compute('select', settings);
    // Dropped when the data changed or a newer choice was asked for meanwhile (another kernel, rule or estimator).
    if (version !== state.version || seq !== chooseSeq) return;
    state.selection = chosen;
    state.timings.select = chosen.ms;
    state.ratios = chosen.bandwidth.map((h) => h / chosen.bandwidth[0]);
    state.hSource = { by: chosen.method, kernel: chosen.kernel, estimator: chosen.estimator };
    setSlider(chosen.bandwidth[0]);
    describeSelection();
    requestFit(false);
  } catch (err) {
    if (seq !== chooseSeq) return;
    ui.selectionCaption.textContent = `No bandwidth was chosen: ${String(err && err.message || err)}`;
    fail(err);
  } finally {
    if (seq === chooseSeq) state.choosing = false;
    publish();
  }
}

/** The selection caption, from the selection and the slider: never about a kernel or h no longer shown. */
function describeSelection() {
  const chosen = state.selection;
  if (!chosen || chosen.method === 'learn') return;
  const axes = state.data?.axes;
  const hs = hText(chosen.bandwidth, axes);
  const moved = Math.abs(Math.log(h1() / chosen.bandwidth[0])) > 1e-6;
  ui.selectionCaption.textContent = `${RULES[chosen.method]} for the ${kernelName(chosen.kernel)} kernel ` +
    `(${estimatorName(chosen.estimator)}) on ${chosen.n.toLocaleString('en')} points chose h = ${hs}` +
    (chosen.curve.scores.length ? ` after ${chosen.curve.scores.length} evaluations (solid line; dashed: the slider).`
      : ': a formula of the data’s spread, with no search to plot.') +
    (moved ? ` The slider now holds h = ${hText(bandwidthVector(), axes)}.` : '');
  showHNote();
}

/** "h was chosen for another kernel": shown when h was set by hand or by a link for other settings than those now. */
function showHNote() {
  const source = state.hSource;
  const stale = Boolean(state.data && source && ['hand', 'link'].includes(source.by) &&
    (source.kernel !== ui.kernel.value || source.estimator !== ui.estimator.value));
  ui.hNote.hidden = !stale;
  if (stale) {
    ui.hNoteText.textContent = `h = ${hText([h1()], state.data?.axes)} was ${source.by === 'link' ? 'given by the link' : 'set by hand'} ` +
      `with the ${kernelName(source.kernel)} kernel (${estimatorName(source.estimator)}); it was not chosen for the ` +
      `${kernelName(ui.kernel.value)} kernel (${estimatorName(ui.estimator.value)}).`;
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
      state.hSource = { by: 'learn', kernel: ui.kernel.value, estimator: ui.estimator.value };
      state.ratios = next.map((v) => v / next[0]);
      setSlider(next[0]);
      ui.selectionCaption.textContent = `${what} on ${n.toLocaleString('en')} points: step ${step}, loss ${loss.toPrecision(4)} ` +
        `at h = ${hText(h, state.data?.axes)}.`;
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
  const text = hText(bandwidthVector(), state.data?.axes);
  ui.bandwidthValue.value = text;
  ui.bandwidth.setAttribute('aria-valuetext', `h = ${text}`);
}

// ---- data -----------------------------------------------------------------------------------------------------

/** Makes `data` current; the bandwidth is then `h` (h₁) if given, else chosen by the selected method. */
async function setData(data, { h = null, hBy = null, edit = false } = {}) {
  state.version += 1;
  // Undo steps belong to the data they edit: other data starts a new history.
  if (!edit) {
    state.undo = [];
    ui.undo.disabled = true;
  }
  // Date and time columns arrive centred (selectColumns); their axes write them as dates again.
  state.data = { ...data, axes: axesOf(data.x, data.dim, data.xKinds, data.centres), version: state.version };
  showBandwidth();
  state.fit = null;
  state.selection = null;
  state.hoverRow = null;
  if (hBy) state.hSource = { by: hBy, kernel: ui.kernel.value, estimator: ui.estimator.value };
  clearError(ui.dataStatus);
  shareData();
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
  clearError(ui.dataStatus);
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
    showHNote();
    describeSelection();
    requestFit(false);
  }
}

/**
 * Forgets the current data, fit and views after a failed load, so that nothing on screen belongs to another data
 * set than the one the menus name, and says what to change (`message`, an error).
 */
function clearData(message) {
  state.version += 1;  // answers still on their way are dropped
  Object.assign(state, { data: null, fit: null, selection: null, hoverRow: null, undo: [] });
  learning = null;
  pending = null;
  for (const canvas of [ui.plot, ui.matrix, ui.bars, ui.selection]) canvas.getContext('2d').clearRect(0, 0, canvas.width, canvas.height);
  for (const name of Object.keys(drawn)) delete drawn[name];
  state.layer = {};
  clearError(ui.fitStatus);
  ui.fitStatus.textContent = 'No fit: no data is loaded.';
  ui.hoverStatus.textContent = '';
  ui.selectionCaption.textContent = '';
  ui.barsCaption.textContent = '';
  ui.identity.tBodies[0].replaceChildren();
  ui.identityCaption.textContent = '';
  ui.approxStatus.textContent = '';
  ui.timings.replaceChildren();
  ui.hNote.hidden = true;
  ui.undo.disabled = true;
  renderWarnings();
  dataError(message);
  shareSettings();
  publish();
}

const isDataset = (value) => value.startsWith('data:') && Object.hasOwn(DATASETS, value.slice(5));

/** The chosen example: a simulated one of `example-n` points, or a built-in real data set. */
function useExample(h = null, hBy = null) {
  const value = ui.example.value;
  ui.columns.hidden = true;
  $('reading').hidden = true;
  showMalformed({ count: 0, listed: [] });
  if (isDataset(value)) {
    const name = value.slice(5);
    const set = DATASETS[name];
    const x = new Float64Array(set.rows.length * set.dim);
    const y = new Float64Array(set.rows.length);
    set.rows.forEach((row, i) => {
      x.set(row.slice(0, set.dim), i * set.dim);
      y[i] = row[set.dim];
    });
    setData({ names: set.names, x, y, dim: set.dim, dataset: name, source: `the “${set.label}” data set` }, { h, hBy });
    return;
  }
  const n = Math.max(2, Math.min(1_000_000, Math.round(Number(ui.exampleN.value)) || 300));
  const data = generate(value, n);
  setData({ ...data, example: { name: value, n }, source: `the “${ui.example.selectedOptions[0].textContent}” example` }, { h, hBy });
}

function showExampleSource() {
  const value = ui.example.value;
  const set = isDataset(value) ? DATASETS[value.slice(5)] : null;
  ui.exampleN.disabled = Boolean(set);
  ui.exampleSource.textContent = set ? `${set.rows.length} rows. ${set.source}` : 'Simulated: a seeded random sample of the size you set.';
}

/** A problem with the visitor's data, shown where the data's status goes, as an error. */
function dataError(message) {
  showError(ui.dataStatus, message);
  window.demoState.parseError = message;
}

let parsedSource = '';
let lastRead = null;  // { source, name } of the last file or text read: the reading menus read it again

/** Reads `source` ({ file } or { text }) named `name`; `again`: the same source with the reading menus' settings. */
async function parse(source, name, { again = false } = {}) {
  if (!again) resetReading();
  lastRead = { source, name };
  const size = source.file ? source.file.size : source.text.length;
  if (size > MAX_FILE_BYTES) {
    dataError(`${name} is ${(size / 1e6).toFixed(0)} MB; the demo reads files of up to ${MAX_FILE_BYTES / 1e6} MB, since ` +
      'it keeps every row in this tab. Use a sample of the rows here, or the kernel-attention command line for all of them.');
    return;
  }
  ui.progress.hidden = false;
  ui.progress.value = 0;
  clearError(ui.dataStatus);
  ui.dataStatus.textContent = `Reading ${name}…`;
  window.demoState.parseError = undefined;
  window.demoState.parseArgument = null;
  try {
    const pasted = source.text !== undefined;
    const table = await parser('parse', { ...source, options: readOptions(pasted) });
    ui.progress.hidden = true;
    state.timings.parse = table.ms;
    showReading(table, pasted);
    window.demoState.reading = { names: table.names, settings: table.settings, preview: table.preview };
    parsedSource = `${name} (${table.rows.toLocaleString('en')} rows)`;
    fillColumns(table.names);
    await selectColumns();
  } catch (err) {
    ui.progress.hidden = true;
    ui.columns.hidden = true;
    for (const select of [ui.x1, ui.x2, ui.ycol]) select.replaceChildren();
    // A refusal that a reading setting fixes names it, and that menu gets the focus.
    window.demoState.reading = null;
    window.demoState.parseArgument = err.argument ?? null;
    clearData(`Could not read ${name}: ${err.message}${/[.)]$/.test(err.message) ? '' : '.'}` +
      (err.argument && labelFor(err.argument) !== err.argument ? ` Change “${labelFor(err.argument)}” under “How the file was read”.` : ''));
    showRefusal(err.argument);
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
  // The menus keep the new file's columns (pick others there); the old data and its fit go.
  if (picked.rejected) {
    clearData(`Rejected ${parsedSource}: ${picked.malformed.count} malformed row(s), listed below. ` +
      'Fix them, choose “skip”, or pick other columns.');
    return;
  }
  if (picked.y.length < 2) {
    clearData(`${parsedSource}: fewer than two usable rows with these columns` +
      (picked.malformed.count ? ` (${picked.malformed.count} malformed, listed below)` : '') +
      '. Pick other columns for x and y, or fix the rows listed.');
    return;
  }
  // Dates and times (seconds) are centred here, in float64, before the compute worker makes float32 of them.
  const dates = picked.xKinds?.some((k) => k === 'date' || k === 'time');
  const centred = dates ? { xKinds: picked.xKinds, centres: centreDates(picked.x, picked.dim, picked.xKinds) } : {};
  const problem = checkColumns(picked);
  if (problem) {
    clearData(`${parsedSource}: ${problem}`);
    return;
  }
  await setData({ names: picked.names, x: picked.x, y: picked.y, dim: picked.dim, source: parsedSource, ...centred });
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
  if (!ui.addMode.checked || !pointerAt(event)) return;
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
  dragging = { index: best, moved: false, before: [data.x[best], data.y[best]] };
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
  const { moved, index, before } = dragging;
  dragging = null;
  if (moved) {
    ui.plot.dataset.dragged = '1';  // the click that ends a drag adds no point
    const x = Float64Array.from(state.data.x);
    const y = Float64Array.from(state.data.y);
    [x[index], y[index]] = before;
    remember({ ...state.data, x, y });
    setData({ ...state.data, example: null, dataset: null, source: withClicks(state.data.source) }, { h: h1(), edit: true });
  }
}

/** Keeps `data` (as it was before an edit) for Undo; at most 50 steps. */
function remember(data) {
  state.undo.push(data);
  if (state.undo.length > 50) state.undo.shift();
  ui.undo.disabled = false;
}

function undo() {
  const data = state.undo.pop();
  ui.undo.disabled = !state.undo.length;
  if (data) setData(data, { h: h1(), edit: true });
}

const withClicks = (source) => (source.endsWith(' and edited points') ? source : `${source} and edited points`);

/** A click or tap on the plot: adds a point in "add and move points" mode, else inspects the nearest query. */
function addPoint(event) {
  if (ui.plot.dataset.dragged) { delete ui.plot.dataset.dragged; return; }
  if (!ui.addMode.checked) {
    hoverAt(event);
    return;
  }
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
  remember(data);
  setData({ ...data, x: xs, y: ys, example: null, dataset: null, source: withClicks(data.source) }, { h: h1(), edit: true });
}

// ---- sharing and saving ----------------------------------------------------------------------------------------

const SETTINGS = {
  example: (v) => Object.hasOwn(EXAMPLES, v),
  dataset: (v) => Object.hasOwn(DATASETS, v),
  data: (v) => v === 'none' || /^[A-Za-z0-9_-]+$/.test(v),
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

/**
 * Packs the current data for links (async: CompressionStream) unless it is an example or a built-in data set, which
 * a link names instead; `state.data.packed` is then the packed text, or null when the data is too large for a link.
 */
function shareData() {
  const data = state.data;
  if (!data || data.example || data.dataset) return;
  data.packing = packData(data).then((packed) => {
    data.packed = packed;
    if (state.data === data) shareSettings();
  }, () => {
    data.packed = null;
    if (state.data === data) shareSettings();
  });
}

/**
 * The settings go into the URL's hash, without a request, with the data: an example's name and size, a built-in
 * set's name, the visitor's own data when it packs into LINK_DATA_LIMIT characters, else `data=none`, which the page
 * opening the link reports. The line under the fit says which.
 */
function shareSettings() {
  const settings = {
    kernel: ui.kernel.value, estimator: ui.estimator.value, method: ui.method.value, fitMethod: ui.fitMethod.value,
    level: ui.level.value, attention: ui.attentionMethod.value, tolerance: ui.tolerance.value,
    band: ui.band.checked ? 'on' : 'off', h: Number(h1().toPrecision(6)),
  };
  const data = state.data;
  let which = {};
  let status;
  if (!data) {
    which = { data: 'none' };
    status = 'No data is loaded: a link to this page holds only the settings.';
  } else if (data.example) {
    which = { example: data.example.name, n: data.example.n };
    status = 'The address bar holds this view (the example and the settings): copy it to share it.';
  } else if (data.dataset) {
    which = { dataset: data.dataset };
    status = 'The address bar holds this view (the data set and the settings): copy it to share it.';
  } else if (data.packed === undefined) {
    which = { data: 'none' };
    status = 'Packing the data for a link…';
  } else if (data.packed) {
    which = { data: data.packed };
    status = `The address bar holds this view with your data (packed into ${data.packed.length.toLocaleString('en')} characters ` +
      'after the #, which the browser never sends to a server): copy it to share it.';
  } else {
    which = { data: 'none' };
    status = `Your data stays behind: packed, it would take over ${LINK_DATA_LIMIT.toLocaleString('en')} characters, too many for ` +
      'a link. A link to this view holds only the settings; send the file itself along with it.';
  }
  ui.shareStatus.textContent = status;
  window.demoState.shareStatus = status;
  history.replaceState(null, '', settingsHash({ ...which, ...settings }));
}

/** Applies the link's settings; returns what to load: { h, data?, note? } (data from the link, or a note on it). */
async function applySettings() {
  const shared = readSettings(location.hash, SETTINGS);
  if (shared.example) ui.example.value = shared.example;
  if (shared.dataset) ui.example.value = `data:${shared.dataset}`;
  if (shared.n) ui.exampleN.value = shared.n;
  for (const key of ['kernel', 'estimator', 'method', 'level', 'fitMethod']) if (shared[key]) ui[key].value = shared[key];
  if (shared.band) ui.band.checked = shared.band === 'on';
  if (shared.attention) ui.attentionMethod.value = shared.attention;
  if (shared.tolerance) ui.tolerance.value = shared.tolerance;
  ui.tolerance.disabled = ui.attentionMethod.value === 'exact';
  const h = shared.h ? Number(shared.h) : null;
  if (shared.data === 'none') {
    return { h: null, note: 'This link was shared without its data (too large for a link, or none was loaded), so ' +
      'an example is shown instead, with a bandwidth chosen for it. Open the same file to see the shared fit.' };
  }
  if (shared.data) {
    try {
      const data = await unpackData(shared.data);
      const problem = checkColumns(data);
      if (problem) throw new Error(problem);
      return { h, data: { ...data, source: 'the link' } };
    } catch (err) {
      return { h: null, note: `This link’s data could not be used: ${err.message}. An example is shown instead.` };
    }
  }
  return { h };
}

function saveFit() {
  const { fit, data } = state;
  if (!fit) return;
  download(new Blob([fitCsv(fit, data.names, ui.band.checked && fit.dim === 1, data.axes)], { type: 'text/csv' }), 'kernel-fit.csv');
}

/** The fit, residuals and (when shown) band at every observation, computed by the worker at the fit's settings. */
async function saveObservations() {
  const { fit, data } = state;
  if (!fit || fit.draft) return;
  ui.saveStatus.textContent = 'Computing the fit at the observations…';
  clearError(ui.saveStatus);
  try {
    const at = await compute('observations', { h: Array.from(fit.h), kernel: fit.kernel, estimator: fit.estimator, level: fit.level, method: ui.fitMethod.value });
    if (state.data !== data) return;
    download(new Blob([observationsCsv(data, at, ui.band.checked && data.dim === 1)], { type: 'text/csv' }), 'kernel-fit-observations.csv');
    ui.saveStatus.textContent = '';
  } catch (err) {
    showError(ui.saveStatus, `Not saved: ${err.message}.`);
  }
}

const PLOT_FILES = { plot: 'kernel-fit', matrix: 'attention-matrix', selection: 'bandwidth-selection' };

/** What an exported figure says about the fit: estimator, kernel, h, method (and how h was set), the level. */
function figureParams() {
  const { fit } = state;
  if (!fit) return '';
  const how = { cv: 'chosen by leave-one-out CV', aicc: 'chosen by AICc', scott: "Scott's rule", silverman: "Silverman's rule",
    learn: 'learnt by gradient descent', hand: 'set by hand', link: 'from a link' }[state.hSource?.by] ?? '';
  return `${estimatorName(fit.estimator)}, ${kernelName(fit.kernel)} kernel, h = ${hText(fit.h, state.data.axes)}` +
    `${how ? ` (${how})` : ''}, method ${fit.method}, ${fit.n.toLocaleString('en')} points` +
    (fit.dim === 1 && ui.band.checked ? `, ${Math.round(fit.level * 100)} % band` : '');
}

/** Saves one plot as PNG or SVG: an opaque figure with title, parameters and legend, without hover marks. */
async function savePlot(name, format) {
  const canvas = ui[name];
  const style = getComputedStyle(document.documentElement);
  const color = (v) => style.getPropertyValue(v).trim();
  const { data } = state;
  if (!data) return;
  const subject = `${data.names[data.dim]} on ${data.names.slice(0, data.dim).join(' and ')}`;
  const titles = {
    plot: `Kernel regression of ${subject}`, matrix: `Attention weights of the fit of ${subject}`,
    selection: `Choosing h for the fit of ${subject}`,
  };
  let legend = [];
  if (name === 'plot' && data.dim === 1) {
    legend = [{ kind: 'point', color: color('--point'), label: 'data' }, { kind: 'line', color: color('--curve'), label: 'fit' }];
    if (ui.band.checked) legend.push({ kind: 'band', color: color('--band'), edge: color('--band-edge'), label: 'confidence band' });
    legend.push({ kind: 'bar', color: color('--thin'), label: `thin support (< ${THIN} effective points)` });
  }
  const spec = {
    title: `${titles[name]} (${data.source})`, description: canvas.getAttribute('aria-label'), params: figureParams(), legend,
    colors: { bg: color('--bg'), fg: color('--fg'), muted: color('--muted') },
  };
  const blob = await figure(canvas, format, spec, (target) => paintPlot(name, target, {}, { hover: false }));
  download(blob, `${PLOT_FILES[name]}.${format}`);
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

/** The inspected query (hovered, tapped or picked by keys) or, with `orMiddle`, the middle one until then. */
function hovered(orMiddle = false) {
  const { fit } = state;
  if (!fit || !fit.matrix) return null;
  const hoverRow = state.hoverRow ?? (orMiddle ? Math.floor(fit.matrix.rows / 2) : null);
  if (hoverRow === null) return null;
  const { matrix } = fit;
  return { row: hoverRow, query: Array.from(matrix.queries.subarray(hoverRow * fit.dim, (hoverRow + 1) * fit.dim)), top: matrix.top[hoverRow] };
}

/** Draws plot `name` (plot, matrix, selection) on `target`: its canvas, or a stand-in for an export (no hover marks). */
function paintPlot(name, target, cache, { hover: withHover = true } = {}) {
  const { data, fit, view } = state;
  if (name === 'matrix') return drawMatrix(target, fit?.matrix, withHover ? state.hoverRow : null);
  if (name === 'selection') return drawSelection(target, state.selection, h1());
  if (!data) return null;
  const hover = withHover ? hovered() : null;
  return data.dim === 1
    ? drawFit(target, { data, fit: fit && fit.dim === 1 ? fit : null, showBand: ui.band.checked, hover, thin: THIN, ...view, cache })
    : drawSurface(target, { data, fit: fit && fit.dim === 2 ? fit : null, hover, side: 48, thin: THIN, ...view, cache });
}

function draw() {
  const { data, fit } = state;
  if (!data) return;
  const t0 = performance.now();
  // Until a query is inspected, the bars show the middle one rather than an empty box.
  const shown = hovered(true);
  state.scales = paintPlot('plot', ui.plot, state.layer);
  // The smaller views are redrawn only when what they show changed (dragging changes only the fit and h).
  if (changed('matrix', fit?.matrix, state.hoverRow, ui.matrix.clientWidth)) {
    state.matrixArea = paintPlot('matrix', ui.matrix);
    drawBars(ui.bars, fit?.matrix, shown?.row ?? null, data.axes?.[0]);
  }
  if (changed('hover', fit, state.hoverRow, ui.band.checked)) describeHover(ui, fit, shown, shown?.row ?? null, ui.band.checked, state.hoverRow !== null, data.axes);
  if (changed('selection', state.selection, h1(), ui.selection.clientWidth)) {
    // A rule (Scott, Silverman) has no search curve: no empty box for it.
    const curve = Boolean(state.selection?.curve?.scores.length);
    ui.selection.hidden = !curve;
    for (const id of ['save-selection', 'save-selection-svg']) $(id).disabled = !curve;
    if (curve) paintPlot('selection', ui.selection);
    describeSelection();
  }
  if (fit && changed('warnings', fit, state.selection)) renderWarnings();
  if (fit && changed('text', fit)) {
    describeFit(ui, fit, THIN, data.axes);
    if (fit.view && changed('identity', fit.view)) describeIdentity(ui, fit, data.axes);
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

/**
 * The library's warnings on the fit and on the bandwidth choice (interpolating, precision, guard), listed next to the
 * fit; nothing when the results carry none (or no `warnings` field at all).
 */
function renderWarnings() {
  const seen = new Set();
  const items = [...(state.fit?.warnings ?? []), ...(state.selection?.warnings ?? [])].filter((w) => {
    const key = `${w.code}|${w.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  ui.fitWarnings.replaceChildren(...items.map((w) => {
    const li = document.createElement('li');
    li.textContent = w.message;
    li.dataset.code = w.code;
    return li;
  }));
  ui.fitWarnings.hidden = !items.length;
}

/** What the tests read: the numbers on screen, not pixels. */
function publish() {
  const { data, fit } = state;
  Object.assign(window.demoState, {
    ready: Boolean(data && fit && !fit.draft && !inFlight && !pending && !dragging && !learning && !state.choosing),
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
      matrix: fit.matrix, warnings: fit.warnings,
    },
    hSource: state.hSource,
    dataset: data?.dataset ?? null,
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
  wireReading(() => { if (lastRead) parse(lastRead.source, lastRead.name, { again: true }); });
  for (const select of [ui.x1, ui.x2, ui.ycol]) select.addEventListener('change', () => selectColumns());
  for (const radio of document.querySelectorAll('input[name="policy"]')) radio.addEventListener('change', () => selectColumns());
  document.addEventListener('dragover', (e) => e.preventDefault());
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    const file = e.dataTransfer?.files[0];
    if (file) parse({ file }, file.name);
  });

  ui.example.addEventListener('change', () => { showExampleSource(); useExample(); });
  ui.bandwidth.addEventListener('input', () => {
    learning = null;
    chosenH1 = null;
    state.hSource = { by: 'hand', kernel: ui.kernel.value, estimator: ui.estimator.value };
    showBandwidth();
    requestFit(true);
    scheduleDraw();
  });
  ui.bandwidth.addEventListener('change', () => requestFit(false));
  // A bandwidth chosen by a rule was chosen for one kernel and estimator: choose again for the new ones. One set by
  // hand (or by a link) stays, with a note that it was not chosen for them.
  for (const control of [ui.kernel, ui.estimator]) {
    control.addEventListener('change', () => {
      if (state.hSource && !['hand', 'link'].includes(state.hSource.by)) {
        chooseBandwidth();
      } else {
        showHNote();
        requestFit(false);
      }
    });
  }
  ui.method.addEventListener('change', () => chooseBandwidth());
  ui.rechoose.addEventListener('click', () => chooseBandwidth());
  for (const control of [ui.level, ui.fitMethod]) control.addEventListener('change', () => requestFit(false));
  ui.band.addEventListener('change', () => { shareSettings(); scheduleDraw(); });
  ui.attentionMethod.addEventListener('change', () => { ui.tolerance.disabled = ui.attentionMethod.value === 'exact'; });
  for (const control of [ui.attentionMethod, ui.tolerance]) control.addEventListener('change', () => requestFit(false));
  ui.choose.addEventListener('click', chooseBandwidth);
  ui.learn.addEventListener('click', learnBandwidth);
  $('save-fit').addEventListener('click', saveFit);
  $('save-observations').addEventListener('click', saveObservations);
  ui.undo.addEventListener('click', undo);
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

/** The built-in data sets join the example menu, after the simulated examples. */
function listDatasets() {
  const group = document.createElement('optgroup');
  group.label = 'Real data (public domain)';
  for (const [name, set] of Object.entries(DATASETS)) group.append(new Option(set.label, `data:${name}`));
  ui.example.append(group);
}

async function main() {
  listDatasets();
  wire();
  showBandwidth();
  try {
    state.worker = await compute('hello');
  } catch (err) {
    fail(err);
    return;
  }
  const link = await applySettings();
  showExampleSource();
  if (link.data) {
    setData(link.data, { h: link.h, hBy: link.h === null ? null : 'link' });
  } else {
    await useExample(link.h, link.h === null ? null : 'link');
    if (link.note) {
      ui.linkNote.textContent = link.note;
      ui.linkNote.hidden = false;
      window.demoState.linkNote = link.note;
    }
  }
}

main();
