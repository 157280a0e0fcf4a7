// Data in and out of the page: examples, built-in data sets, files and pasted text (through the parse worker and the
// reading panel), the columns picked, and the failed load that clears what belonged to the old data.
import { axesOf, centreDates } from './axes.js';
import { checkColumns } from './checks.js';
import { columnStats, generate, paddedRange } from './data.js';
import { DATASETS } from './data/datasets.js';
import { describeSelection, showBandwidth, showHNote } from './captions.js';
import { forgetDrawn, renderWarnings } from './drawing.js';
import { chooseBandwidth, requestFit, setSlider, showSmoother } from './fitting.js';
import { shareData, shareSettings } from './link.js';
import { labelFor, readOptions, resetReading, showReading, showRefusal } from './reading.js';
import { notify, publish, state } from './state.js';
import { $, clearError, showError, ui } from './ui.js';
import { compute, parser } from './workers.js';

// Larger files are refused before a byte is read: every row is held in this tab's memory (the parse worker checks
// lines of over 10 MB itself).
const MAX_FILE_BYTES = 200e6;
// Pasted text longer than this is read at once and never enters the text box: a box holding megabytes freezes the
// page while it lays them out (in Chromium here: 1 MB of CSV 1.5 s, 3 MB 2.9 s, a 50 MB line 21–26 s).
const PASTE_BOX_MAX = 100_000;

/** Makes `data` current; the bandwidth is then `h` (h₁) if given, else chosen by the selected method. */
export async function setData(data, { h = null, hBy = null, edit = false } = {}) {
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
  ui.variance.disabled = ui.band.disabled || !ui.band.checked;
  ui.derivative.disabled = data.dim !== 1;
  showSmoother(); // LOWESS is for one x: 2-D data goes back to local-linear
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
  ui.dataStatus.textContent =
    `${n.toLocaleString('en')} points, ${data.dim === 1 ? 'one input' : 'two inputs'} ` +
    `(${data.names.join(', ')}) from ${data.source}.` +
    (info.fitN < n
      ? ` Exact fits and the attention views use a random ${info.fitN.toLocaleString('en')} of them` +
        (data.dim === 1 ? '; fits on the grid use all.' : '.')
      : '') +
    (info.draftN < info.fitN
      ? ` While the slider moves: ${info.draftN.toLocaleString('en')}, refined on release.`
      : '') +
    (info.spanN < n ? ` Span fits (exact, in double) use ${info.spanN.toLocaleString('en')}.` : '');
  notify('view');
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
export function clearData(message) {
  state.version += 1; // answers still on their way are dropped
  Object.assign(state, { data: null, fit: null, selection: null, hoverRow: null, undo: [] });
  state.learning = null;
  state.pending = null;
  for (const canvas of [ui.plot, ui.matrix, ui.bars, ui.selection])
    canvas.getContext('2d').clearRect(0, 0, canvas.width, canvas.height);
  forgetDrawn();
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
  ui.slope.hidden = true;
  ui.slopeStatus.textContent = '';
  ui.undo.disabled = true;
  renderWarnings();
  dataError(message);
  shareSettings();
  publish();
}

export const isDataset = (value) => value.startsWith('data:') && Object.hasOwn(DATASETS, value.slice(5));

/** The chosen example: a simulated one of `example-n` points, or a built-in real data set. */
export function useExample(h = null, hBy = null) {
  const value = ui.example.value;
  ui.columns.hidden = true;
  ui.pasteNote.hidden = true;
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
  setData(
    { ...data, example: { name: value, n }, source: `the “${ui.example.selectedOptions[0].textContent}” example` },
    { h, hBy },
  );
}

export function showExampleSource() {
  const value = ui.example.value;
  const set = isDataset(value) ? DATASETS[value.slice(5)] : null;
  ui.exampleN.disabled = Boolean(set);
  ui.exampleSource.textContent = set
    ? `${set.rows.length} rows. ${set.source}`
    : 'Simulated: a seeded random sample of the size you set.';
}

/** A problem with the visitor's data, shown where the data's status goes, as an error. */
export function dataError(message) {
  showError(ui.dataStatus, message);
  window.demoState.parseError = message;
}

let parsedSource = '';
let lastRead = null; // { source, name } of the last file or text read: the reading menus read it again

/** Reads `source` ({ file } or { text }) named `name`; `again`: the same source with the reading menus' settings. */
export async function parse(source, name, { again = false } = {}) {
  if (!again) {
    resetReading();
    ui.pasteNote.hidden = true; // a note on an earlier paste
  }
  lastRead = { source, name };
  const size = source.file ? source.file.size : source.text.length;
  if (size > MAX_FILE_BYTES) {
    dataError(
      `${name} is ${(size / 1e6).toFixed(0)} MB; the demo reads files of up to ${MAX_FILE_BYTES / 1e6} MB, since ` +
        'it keeps every row in this tab. Use a sample of the rows here, or the kernel-attention command line for all of them.',
    );
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
    const fix = err.argument && labelFor(err.argument) !== err.argument;
    clearData(
      `Could not read ${name}: ${err.message}` +
        (fix
          ? `${/[.)]$/.test(err.message) ? '' : '.'} Change “${labelFor(err.argument)}” under “How the file was read”.`
          : ''),
    );
    showRefusal(err.argument);
  }
}

export function fillColumns(names) {
  const fill = (select, extra) => {
    select.replaceChildren();
    if (extra) select.append(new Option(extra, ''));
    names.forEach((name, i) => select.append(new Option(name, String(i)))); // text, never HTML
  };
  fill(ui.x1);
  fill(ui.x2, 'none');
  fill(ui.ycol);
  ui.x1.value = '0';
  ui.x2.value = '';
  ui.ycol.value = String(names.length - 1);
  ui.columns.hidden = false;
}

export async function selectColumns() {
  const xColumns = [Number(ui.x1.value)];
  if (ui.x2.value !== '' && ui.x2.value !== ui.x1.value) xColumns.push(Number(ui.x2.value));
  const policy = document.querySelector('input[name="policy"]:checked').value;
  const picked = await parser('select', { xColumns, yColumn: Number(ui.ycol.value), policy });
  showMalformed(picked.malformed);
  // The menus keep the new file's columns (pick others there); the old data and its fit go.
  if (picked.rejected) {
    clearData(
      `Rejected ${parsedSource}: ${picked.malformed.count} malformed row(s), listed below. ` +
        'Fix them, choose “skip”, or pick other columns.',
    );
    return;
  }
  if (picked.y.length < 2) {
    clearData(
      `${parsedSource}: fewer than two usable rows with these columns` +
        (picked.malformed.count ? ` (${picked.malformed.count} malformed, listed below)` : '') +
        '. Pick other columns for x and y, or fix the rows listed.',
    );
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

export function showMalformed(malformed) {
  state.malformed = malformed;
  ui.malformed.replaceChildren(
    ...malformed.listed.map(({ line, reason }) => {
      const li = document.createElement('li');
      li.textContent = `line ${line}: ${reason}`;
      return li;
    }),
  );
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

/**
 * A paste into the text box: text of up to PASTE_BOX_MAX characters goes into the box as usual (“Use this text”
 * reads it); more is read at once, with a note in the box's place, and the box keeps what it held.
 */
export function pasteText(event) {
  const text = event.clipboardData?.getData('text/plain') ?? '';
  if (text.length <= PASTE_BOX_MAX) return;
  event.preventDefault();
  parse({ text }, 'the pasted text');
  ui.pasteNote.textContent =
    `${text.length.toLocaleString('en')} characters pasted: read at once, not put in the box ` +
    '(a box that large would freeze the page).';
  ui.pasteNote.hidden = false;
}

/** Reads the last file or text again with the reading panel's settings (one of its menus changed). */
export function readAgain() {
  if (lastRead) parse(lastRead.source, lastRead.name, { again: true });
}
