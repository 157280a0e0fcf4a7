// The page's elements, looked up once, and the one way an error is shown in them.

export const $ = (id) => document.getElementById(id);
export const ui = {
  example: $('example'),
  exampleN: $('example-n'),
  generate: $('generate'),
  file: $('file'),
  progress: $('progress'),
  paste: $('paste'),
  usePaste: $('use-paste'),
  pasteNote: $('paste-note'),
  columns: $('columns'),
  x1: $('x1'),
  x2: $('x2'),
  ycol: $('ycol'),
  dataStatus: $('data-status'),
  malformed: $('malformed'),
  kernel: $('kernel'),
  estimator: $('estimator'),
  bandwidth: $('bandwidth'),
  bandwidthValue: $('bandwidth-value'),
  method: $('method'),
  choose: $('choose'),
  learn: $('learn'),
  band: $('band'),
  level: $('level'),
  fitMethod: $('fit-method'),
  plot: $('plot'),
  fitStatus: $('fit-status'),
  hoverStatus: $('hover-status'),
  matrix: $('matrix'),
  bars: $('bars'),
  barsCaption: $('bars-caption'),
  selection: $('selection'),
  selectionCaption: $('selection-caption'),
  identity: $('identity'),
  identityCaption: $('identity-caption'),
  timings: $('timings'),
  attentionMethod: $('attention-method'),
  tolerance: $('tolerance'),
  approxHead: $('approx-head'),
  approxStatus: $('approx-status'),
  exampleSource: $('example-source'),
  addMode: $('add-mode'),
  undo: $('undo'),
  hNote: $('h-note'),
  hNoteText: $('h-note-text'),
  rechoose: $('rechoose'),
  fitWarnings: $('fit-warnings'),
  shareStatus: $('share-status'),
  saveStatus: $('save-status'),
  linkNote: $('link-note'),
  span: $('span'),
  spanValue: $('span-value'),
  iterations: $('iterations'),
  robust: $('robust'),
  variance: $('variance'),
  exclude: $('exclude'),
  excludeUnit: $('exclude-unit'),
  dateNote: $('date-note'),
  dateNoteText: $('date-note-text'),
  dateOrderFlip: $('date-order-flip'),
  derivative: $('derivative'),
  slope: $('slope'),
  slopeStatus: $('slope-status'),
  bandwidthKind: $('bandwidth-kind'),
  kernelSpan: $('kernel-span'),
  kernelSpanValue: $('kernel-span-value'),
};

/** Shows `message` in `element` as an error (styled, and announced at once), or clears the error styling. */
export function showError(element, message) {
  element.textContent = message;
  element.classList.add('error');
  element.setAttribute('role', 'alert');
}
export function clearError(element) {
  element.classList.remove('error');
  element.removeAttribute('role');
}
