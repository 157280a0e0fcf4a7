// The address bar as a link to this view: the settings and the data (an example's name, a built-in set's name, or
// small data packed by share.js) in the URL's hash, written after each fit and read once when the page opens.
import { checkColumns } from './checks.js';
import { EXAMPLES } from './data.js';
import { DATASETS } from './data/datasets.js';
import { readSettings, settingsHash } from './export.js';
import { h1, isSpan } from './settings.js';
import { LINK_DATA_LIMIT, packData, unpackData } from './share.js';
import { state, subscribe } from './state.js';
import { ui } from './ui.js';

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
  robust: (v) => v === 'on' || v === 'off',
  derivative: (v) => v === 'on' || v === 'off',
  exclude: (v) => Number(v) >= 0 && Number.isFinite(Number(v)),
  variance: (v) => [...ui.variance.options].some((o) => o.value === v),
  h: (v) => Number(v) > 0 && Number.isFinite(Number(v)),
  frac: (v) => Number(v) >= Number(ui.span.min) && Number(v) <= Number(ui.span.max),
  iterations: (v) => /^\d+$/.test(v) && Number(v) <= Number(ui.iterations.max),
  bandwidth: (v) => v === 'h' || v === 'span',
  span: (v) => Number(v) >= Number(ui.kernelSpan.min) && Number(v) <= Number(ui.kernelSpan.max),
  loessSpan: (v) => Number(v) >= Number(ui.loessSpan.min) && Number(v) <= Number(ui.loessSpan.max),
  degree: (v) => [...ui.degree.options].some((o) => o.value === v),
  family: (v) => [...ui.family.options].some((o) => o.value === v),
};

/**
 * Packs the current data for links (async: CompressionStream) unless it is an example or a built-in data set, which
 * a link names instead; `state.data.packed` is then the packed text, or null when the data is too large for a link.
 */
export function shareData() {
  const data = state.data;
  if (!data || data.example || data.dataset) return;
  data.packing = packData(data).then(
    (packed) => {
      data.packed = packed;
      if (state.data === data) shareSettings();
    },
    () => {
      data.packed = null;
      if (state.data === data) shareSettings();
    },
  );
}

/**
 * The settings go into the URL's hash, without a request, with the data: an example's name and size, a built-in
 * set's name, the visitor's own data when it packs into LINK_DATA_LIMIT characters, else `data=none`, which the page
 * opening the link reports. The line under the fit says which.
 */
export function shareSettings() {
  const settings = {
    kernel: ui.kernel.value,
    estimator: ui.estimator.value,
    method: ui.method.value,
    fitMethod: ui.fitMethod.value,
    level: ui.level.value,
    attention: ui.attentionMethod.value,
    tolerance: ui.tolerance.value,
    band: ui.band.checked ? 'on' : 'off',
    h: Number(h1().toPrecision(6)),
    // Robustness and the local band only when chosen (other links stay as they were).
    ...(ui.robust.checked ? { robust: 'on' } : {}),
    ...(ui.variance.value === 'local' ? { variance: 'local' } : {}),
    ...(Number(ui.exclude.value) > 0 ? { exclude: ui.exclude.value } : {}),
    ...(ui.derivative.checked ? { derivative: 'on' } : {}),
    // LOWESS's own settings, only when it is the estimator (other links stay as they were).
    ...(ui.estimator.value === 'lowess' ? { frac: ui.span.value, iterations: ui.iterations.value } : {}),
    // loess's settings, only when it is the estimator.
    ...(ui.estimator.value === 'loess'
      ? { loessSpan: ui.loessSpan.value, degree: ui.degree.value, family: ui.family.value }
      : {}),
    // A kernel fit's nearest-neighbour span, only when chosen (h stays in the link for switching back).
    ...(isSpan() ? { bandwidth: 'span', span: ui.kernelSpan.value } : {}),
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
    status =
      `The address bar holds this view with your data (packed into ${data.packed.length.toLocaleString('en')} characters ` +
      'after the #, which the browser never sends to a server): copy it to share it.';
  } else {
    which = { data: 'none' };
    status =
      `Your data stays behind: packed, it would take over ${LINK_DATA_LIMIT.toLocaleString('en')} characters, too many for ` +
      'a link. A link to this view holds only the settings; send the file itself along with it.';
  }
  ui.shareStatus.textContent = status;
  window.demoState.shareStatus = status;
  history.replaceState(null, '', settingsHash({ ...which, ...settings }));
}

/** Applies the link's settings; returns what to load: { h, data?, note? } (data from the link, or a note on it). */
export async function applySettings() {
  const shared = readSettings(location.hash, SETTINGS);
  if (shared.example) ui.example.value = shared.example;
  if (shared.dataset) ui.example.value = `data:${shared.dataset}`;
  if (shared.n) ui.exampleN.value = shared.n;
  for (const key of ['kernel', 'estimator', 'method', 'level', 'fitMethod', 'variance'])
    if (shared[key]) ui[key].value = shared[key];
  if (shared.robust) ui.robust.checked = shared.robust === 'on';
  if (shared.exclude) ui.exclude.value = shared.exclude;
  if (shared.derivative) ui.derivative.checked = shared.derivative === 'on';
  if (shared.band) ui.band.checked = shared.band === 'on';
  if (shared.frac) ui.span.value = shared.frac;
  if (shared.iterations) ui.iterations.value = shared.iterations;
  if (shared.bandwidth) ui.bandwidthKind.value = shared.bandwidth;
  if (shared.span) ui.kernelSpan.value = shared.span;
  if (shared.loessSpan) ui.loessSpan.value = shared.loessSpan;
  if (shared.degree) ui.degree.value = shared.degree;
  if (shared.family) ui.family.value = shared.family;
  if (shared.attention) ui.attentionMethod.value = shared.attention;
  if (shared.tolerance) ui.tolerance.value = shared.tolerance;
  ui.tolerance.disabled = ui.attentionMethod.value === 'exact';
  const h = shared.h ? Number(shared.h) : null;
  if (shared.data === 'none') {
    return {
      h: null,
      note:
        'This link was shared without its data (too large for a link, or none was loaded), so ' +
        'an example is shown instead, with a bandwidth chosen for it. Open the same file to see the shared fit.',
    };
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

// A final fit, or a setting that needs none (the band), is what the address bar keeps.
subscribe('fit', (fit) => {
  if (!fit.draft) shareSettings();
});
subscribe('settings', shareSettings);

/** The note on a link that could not bring its data (shown until other data is loaded, which it no longer concerns). */
export function showLinkNote(note) {
  ui.linkNote.textContent = note;
  ui.linkNote.hidden = false;
  window.demoState.linkNote = note;
}
subscribe('data', () => {
  ui.linkNote.hidden = true;
  window.demoState.linkNote = null;
});
