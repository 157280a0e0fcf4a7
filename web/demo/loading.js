// Data in and out of the page: examples and built-in data sets, the data made current (setData), its status line and
// malformed rows, and the failed load that clears what belonged to the old data. Files and pasted text: files.js.
import { axesOf } from './axes.js';
import { holdToRange } from './fields.js';
import { columnStats, generate, paddedRange } from './data.js';
import { DATASETS } from './data/datasets.js';
import { describeSelection, showBandwidth, showHNote, showRadiusUnit } from './captions.js';
import { forgetDrawn, renderWarnings } from './drawing.js';
import { chooseBandwidth, requestFit, setSlider, showSmoother } from './fitting.js';
import { shareData, shareSettings } from './link.js';
import { notify, publish, state } from './state.js';
import { $, clearError, showError, ui } from './ui.js';
import { compute } from './workers.js';

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
  ui.dateNote.hidden = true; // files.js says so again when these dates' order is a guess
  notify('data');
  showBandwidth();
  showRadiusUnit();
  state.fit = null;
  state.selection = null;
  state.lambda = null;
  state.hoverRow = null;
  if (hBy) state.hSource = { by: hBy, kernel: ui.kernel.value, estimator: ui.estimator.value };
  clearError(ui.dataStatus);
  shareData();
  publish();
  document.body.dataset.dim = String(data.dim);
  if (data.category) document.body.dataset.category = data.category.name;
  else delete document.body.dataset.category;
  // A point added with a category would have no level: "add and move points" is off with one.
  ui.addMode.disabled = Boolean(data.category);
  if (data.category) ui.addMode.checked = false;
  ui.band.disabled = data.dim !== 1;
  ui.variance.disabled = ui.band.disabled || !ui.band.checked;
  ui.derivative.disabled = data.dim !== 1 || Boolean(data.category);
  showSmoother(); // LOWESS is for one x: 2-D data goes back to local-linear; a category takes a criterion's λ
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
  const { category } = data;
  const info = await compute('data', {
    x: Float64Array.from(data.x),
    y: Float64Array.from(data.y),
    dim: data.dim,
    ...(category && { codes: Float64Array.from(category.codes), labels: category.labels, category: category.name }),
  });
  state.timings = { ...state.timings, load: performance.now() - t0 };
  state.sampleInfo = info;
  clearError(ui.dataStatus);
  ui.dataStatus.textContent =
    `${n.toLocaleString('en')} points, ${data.dim === 1 ? 'one input' : 'two inputs'} ` +
    `(${data.names.join(', ')}) from ${data.source}.` +
    (info.fitN < n
      ? ` Exact fits and the attention views use a random ${info.fitN.toLocaleString('en')} of them; fits on the ` +
        `grid${data.dim === 1 ? ', LOWESS' : ''} and loess use all.`
      : '') +
    (info.draftN < n ? ` While the slider moves, an exact fit uses ${info.draftN.toLocaleString('en')}.` : '') +
    (info.spanN < n
      ? ` Span fits (exact, in double) use ${info.spanN.toLocaleString('en')} with a kernel that reaches every ` +
        `point, ${info.spanBoundedN.toLocaleString('en')} with one of bounded reach.`
      : '') +
    (category
      ? ` Category “${category.name}”: ${category.labels.length} levels (${category.labels.join(', ')}), ` +
        'one curve each, pooled by λ.'
      : '');
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
  ui.dateNote.hidden = true;
  notify('data');
  Object.assign(state, { data: null, fit: null, selection: null, lambda: null, hoverRow: null, undo: [] });
  delete document.body.dataset.category;
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
  ui.slopeSave.hidden = true;
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
  showMalformed(NO_ROWS);
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
  const n = holdToRange(ui.exampleN, 300);
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

export const NO_ROWS = { count: 0, listed: [] };

/** A problem with the visitor's data, shown where the data's status goes, as an error. */
export function dataError(message) {
  showError(ui.dataStatus, message);
  window.demoState.parseError = message;
}

/** The malformed rows of the columns picked (none: `NO_ROWS`), listed under the data's status. */
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
  // A list long enough to scroll can be scrolled from the keyboard.
  ui.malformed.tabIndex = malformed.count ? 0 : -1;
  if (malformed.count) {
    const li = document.createElement('li');
    li.className = 'summary';
    li.textContent = `${malformed.count} malformed row(s)`;
    ui.malformed.prepend(li);
  }
  publish();
}
