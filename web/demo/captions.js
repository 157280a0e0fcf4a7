// The lines that say how h was set: the slider's read-out, the "Choosing h" caption and the note when h was not
// chosen for the kernel and estimator now set. Text only, from the state and the controls.
import { hText, lambdaText, withoutMethod } from './describe.js';
import { bandwidthVector, estimatorName, h1, isKernel, isSpan, kernelName, radiusUnit } from './settings.js';
import { state } from './state.js';
import { ui } from './ui.js';

const RULES = {
  cv: 'leave-one-out cross-validation',
  aicc: 'AICc',
  scott: "Scott's rule",
  silverman: "Silverman's rule",
};

/** A rule's name in captions; CV with a radius r is blocked CV, r in x's terms (a duration on a date axis). */
export const ruleName = ({ method, exclude = 0 }) =>
  method === 'cv' && exclude > 0
    ? `blocked cross-validation (each point's neighbours within ±${hText([exclude], state.data?.axes)} left out)`
    : RULES[method];

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
    (chosen.lambda === null || chosen.lambda === undefined
      ? ''
      : ` and ${lambdaText(chosen.lambda, state.data.category.name, state.data.category.labels.length)}`) +
    (chosen.curve.scores.length
      ? ` after ${chosen.curve.scores.length} evaluations (solid line; dashed: the slider), computed ` +
        `${chosen.criterionMethod === 'grid' ? 'on a grid' : 'exactly'}${chosen.reason ? ` (the plan: ${withoutMethod(chosen.reason, chosen.criterionMethod)})` : ''}.`
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
    isKernel() &&
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

/** The slider's read-out: h in x's terms (a duration on a date axis), also as the slider's spoken value. */
export function showBandwidth() {
  const text = hText(bandwidthVector(), state.data?.axes);
  ui.bandwidthValue.value = text;
  ui.bandwidth.setAttribute('aria-valuetext', `h = ${text}`);
}

/** The unit of the "leave out ±" field, after it: days for dates, minutes for times of day, else x's units. */
export function showRadiusUnit() {
  ui.excludeUnit.textContent = `in ${radiusUnit().name}`;
}
