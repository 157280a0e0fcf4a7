// The demo page's wiring: controls → workers → plots. The main thread never computes a fit: parsing runs in
// parse-worker.js and every kernel-attention call in worker.js. The page's modules, one job each: ui.js (elements),
// state.js (state, its subscribers, demoState), settings.js (the controls read), workers.js, loading.js (data in),
// reading.js (the reading panel), fitting.js (fits, h), captions.js (how h was set), drawing.js, editing.js (points
// by hand), link.js (the address bar), saving.js (downloads), axes.js (dates).
import { DATASETS } from './data/datasets.js';
import { forgetDrawn, hoverAt, hoverByKey, hoverMatrix, scheduleDraw } from './drawing.js';
import { addPoint, endDrag, moveDrag, startDrag, undo } from './editing.js';
import { showBandwidth, showHNote } from './captions.js';
import { chooseBandwidth, learnBandwidth, onSlider, requestFit, showSmoother } from './fitting.js';
import { applySettings, showLinkNote } from './link.js';
import { holdToRange } from './fields.js';
import { parse, pasteText, readAgain, selectColumns } from './files.js';
import { setData, showExampleSource, useExample } from './loading.js';
import { wireReading } from './reading.js';
import { saveFit, saveObservations, savePlot } from './saving.js';
import { isSpan } from './settings.js';
import { notify, state } from './state.js';
import { $, ui } from './ui.js';
import { compute, fail } from './workers.js';

function wire() {
  ui.generate.addEventListener('click', () => useExample());
  ui.file.addEventListener('change', () => {
    const file = ui.file.files[0];
    if (file) parse({ file }, file.name);
  });
  ui.paste.addEventListener('paste', pasteText);
  ui.usePaste.addEventListener('click', () => parse({ text: ui.paste.value }, 'the pasted text'));
  wireReading(readAgain);
  // Dates read by a guess (files.js): the other order, as the reading panel's menu would read them.
  ui.dateOrderFlip.addEventListener('click', () => {
    $('read-date-order').value = ui.dateOrderFlip.dataset.order;
    readAgain();
  });
  for (const select of [ui.x1, ui.x2, ui.ycol, ui.category]) select.addEventListener('change', () => selectColumns());
  for (const radio of document.querySelectorAll('input[name="policy"]'))
    radio.addEventListener('change', () => selectColumns());
  document.addEventListener('dragover', (e) => e.preventDefault());
  document.addEventListener('drop', (e) => {
    e.preventDefault();
    const file = e.dataTransfer?.files[0];
    if (file) parse({ file }, file.name);
  });

  ui.example.addEventListener('change', () => {
    showExampleSource();
    useExample();
  });
  ui.bandwidth.addEventListener('input', onSlider);
  ui.bandwidth.addEventListener('change', () => requestFit(false));
  // LOWESS: a draft while the span is dragged, the full fit on release or a new number of iterations.
  ui.span.addEventListener('input', () => {
    showSmoother();
    requestFit(true);
  });
  ui.span.addEventListener('change', () => requestFit(false));
  ui.iterations.addEventListener('change', () => {
    holdToRange(ui.iterations, 3);
    requestFit(false);
  });
  // loess: a draft while its span is dragged, the full fit on release or with another degree or family.
  ui.loessSpan.addEventListener('input', () => {
    showSmoother();
    requestFit(true);
  });
  ui.loessSpan.addEventListener('change', () => requestFit(false));
  for (const control of [ui.degree, ui.family]) control.addEventListener('change', () => requestFit(false));
  // A bandwidth chosen by a rule was chosen for one kernel and estimator: choose again for the new ones (also when
  // none was chosen yet, as after data first fitted by LOWESS). One set by hand (or by a link) stays, with a note
  // that it was not chosen for them.
  // A span needs no choosing: only the fit is redone.
  for (const control of [ui.kernel, ui.estimator]) {
    control.addEventListener('change', () => {
      showSmoother();
      if (isSpan()) {
        requestFit(false);
      } else if (!state.hSource || !['hand', 'link'].includes(state.hSource.by)) {
        chooseBandwidth();
      } else {
        showHNote();
        requestFit(false);
      }
    });
  }
  // Back from a span to h: an h a rule chose for another kernel or estimator (changed meanwhile) is chosen again; an
  // h set by hand or a link stays, with its note.
  ui.bandwidthKind.addEventListener('change', () => {
    state.learning = null; // "Learn h" stops: a span has no h to learn
    showSmoother();
    showHNote();
    const source = state.hSource;
    const stale =
      !source ||
      (!['hand', 'link'].includes(source.by) &&
        (source.kernel !== ui.kernel.value || source.estimator !== ui.estimator.value));
    if (!isSpan() && stale) chooseBandwidth();
    else requestFit(false);
  });
  ui.kernelSpan.addEventListener('input', () => {
    showSmoother();
    requestFit(true);
  });
  ui.kernelSpan.addEventListener('change', () => requestFit(false));
  ui.method.addEventListener('change', () => chooseBandwidth());
  ui.exclude.addEventListener('change', () => {
    holdToRange(ui.exclude, 0);
    chooseBandwidth();
  });
  ui.exampleN.addEventListener('change', () => holdToRange(ui.exampleN, 300));
  ui.rechoose.addEventListener('click', () => chooseBandwidth());
  for (const control of [ui.level, ui.fitMethod]) control.addEventListener('change', () => requestFit(false));
  ui.band.addEventListener('change', () => {
    ui.variance.disabled = ui.band.disabled || !ui.band.checked;
    notify('settings');
    notify('view');
  });
  for (const control of [ui.robust, ui.variance, ui.derivative])
    control.addEventListener('change', () => requestFit(false));
  ui.attentionMethod.addEventListener('change', () => {
    ui.tolerance.disabled = ui.attentionMethod.value === 'exact';
  });
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

  ui.plot.addEventListener('mousemove', (e) => (state.dragging ? moveDrag(e) : hoverAt(e)));
  ui.plot.addEventListener('mousedown', startDrag);
  window.addEventListener('mouseup', endDrag);
  ui.plot.addEventListener('click', addPoint);
  ui.matrix.addEventListener('mousemove', hoverMatrix);
  ui.matrix.tabIndex = 0;
  for (const canvas of [ui.plot, ui.matrix]) canvas.addEventListener('keydown', hoverByKey);
  new ResizeObserver(scheduleDraw).observe(document.body);
  matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    forgetDrawn();
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
  showSmoother();
  showExampleSource();
  if (link.data) {
    setData(link.data, { h: link.h, hBy: link.h === null ? null : 'link' });
  } else {
    await useExample(link.h, link.h === null ? null : 'link');
    if (link.note) showLinkNote(link.note);
  }
}

main();
