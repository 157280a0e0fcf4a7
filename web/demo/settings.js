// The fit's settings as the controls hold them, read (never changed) here: h, the smoother, LOWESS's span and
// iterations, loess's span, degree and family, robustness, the band's σ, the derivative, blocked CV's radius, and
// the names captions give them.
import { state } from './state.js';
import { ui } from './ui.js';

/** h₁ exactly as chosen or dragged (the slider's steps would round a chosen bandwidth: state.chosenH1 keeps it). */
export const h1 = () => state.chosenH1 ?? 10 ** Number(ui.bandwidth.value);
/** The bandwidth per input: h₁ times each column's ratio. */
export const bandwidthVector = () => state.ratios.map((r) => h1() * r);

/** Whether the estimator menu holds LOWESS (one x): its span and iterations replace h and the kernel's controls. */
export const isLowess = () => ui.estimator.value === 'lowess';
/** Whether the estimator menu holds loess (R's loess()): its span, degree and family replace h and the kernel's. */
export const isLoess = () => ui.estimator.value === 'loess';
/** Whether the fit is a kernel fit (Nadaraya–Watson or local-linear), the one smoother with an h to choose. */
export const isKernel = () => !isLowess() && !isLoess();
/** Whether a kernel fit takes its bandwidth from a nearest-neighbour span (the "Bandwidth" menu) rather than h. */
export const isSpan = () => isKernel() && ui.bandwidthKind.value === 'span';
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

/** loess's span, degree (1 or 2) and family ('gaussian' or 'symmetric'), as ka.loess takes them. */
export const loessSettings = () => ({
  loessSpan: Number(ui.loessSpan.value),
  degree: Number(ui.degree.value),
  family: ui.family.value,
});

// Rounds of bisquare robustness weights with the "robust" box (Cleveland's and R's lowess() default).
const ROBUST_ITERATIONS = 3;
/** The kernel fits' robustness (the "robust" box) and band variance ("band σ": 'global' or 'local'). */
export const kernelExtras = () => ({
  robust: ui.robust.checked ? ROBUST_ITERATIONS : 0,
  variance: ui.variance.disabled ? 'global' : ui.variance.value,
  derivative: ui.derivative.checked && !ui.derivative.disabled,
});

/**
 * The unit of the "leave out ±" field: days on a date axis and minutes on a time-of-day axis (as h is written there,
 * not the seconds the library takes), else x's own units. `seconds`: what one unit is in x's fitted terms.
 */
export function radiusUnit() {
  const kind = state.data?.axes?.[0]?.kind;
  if (kind === 'date') return { name: 'days', seconds: 86400 };
  if (kind === 'time') return { name: 'minutes', seconds: 60 };
  return { name: 'x’s units', seconds: 1 };
}

/**
 * Blocked CV's radius r in x's fitted terms (the library's `exclude`: seconds for dates) from the "leave out ±" field
 * (in radiusUnit()'s) when the rule is CV, else 0. An entry that is not a number ≥ 0 counts as 0 (leave-one-out).
 */
export function blockRadius() {
  const r = Number(ui.exclude.value);
  return ui.method.value === 'cv' && Number.isFinite(r) && r > 0 ? r * radiusUnit().seconds : 0;
}

export const kernelName = (kernel) => [...ui.kernel.options].find((o) => o.value === kernel)?.textContent ?? kernel;
export const estimatorName = (estimator) =>
  ({ 'local-linear': 'local-linear', 'local-quadratic': 'local-quadratic' })[estimator] ?? 'Nadaraya–Watson';
