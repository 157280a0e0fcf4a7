// The demo's text panels: the fit's status line, the identity table, the timings and the hovered query. Text only
// (textContent), never HTML.

import { axis } from './axes.js';

const PLAIN = axis();
/** How dimension d of x is written (`axes` from the page's data; plain numbers when absent). */
const axisOf = (axes, d) => axes?.[d] ?? PLAIN;
/** A bandwidth vector in each dimension's units: 0.32, or 3.2 days on a date axis. */
export const hText = (h, axes) => Array.from(h, (v, d) => axisOf(axes, d).h(v)).join(', ');
/** A point of x as text, each coordinate in its axis' terms. */
const xText = (values, axes) => Array.from(values, (v, d) => axisOf(axes, d).text(v)).join(', ');

/**
 * A category's λ in words, with its range: Aitchison–Aitken's kernel weighs a point of another level λ/(c − 1)
 * against 1 − λ for its own, so λ = 0 fits each level from its own points and λ = (c − 1)/c pools them into one.
 */
export function lambdaText(lambda, name, levels) {
  const most = (levels - 1) / levels;
  return (
    `λ = ${lambda.toPrecision(3)} for “${name}” (0: each of its ${levels} levels fitted from its own points alone; ` +
    `${most.toPrecision(3)}: one curve for all)`
  );
}

const ms = (t) => (t === undefined ? '–' : t < 1 ? `${t.toFixed(2)} ms` : `${t.toFixed(1)} ms`);

/** The status line under the fit: estimator, h, sample, degrees of freedom, noise, and where support is thin. */
export function describeFit(ui, fit, thinBelow, axes) {
  if (fit.lowess) {
    describeLowess(ui, fit);
    return;
  }
  if (fit.loess) {
    ui.fitStatus.textContent = loessText(fit);
    return;
  }
  const name =
    { 'local-linear': 'Local-linear', 'local-quadratic': 'Local-quadratic' }[fit.estimator] ?? 'Nadaraya–Watson';
  if (fit.curveOnly) {
    // A live fit while the slider moves over many points: the curve alone (worker.js, curveAt).
    ui.fitStatus.textContent =
      `${name}, ${fit.kernel} kernel, h = ${hText(fit.h, axes)} on ${fit.n.toLocaleString('en')} points, ` +
      `${fit.method === 'grid' ? 'on a grid' : 'exactly'}: the curve while the slider moves; the band and the ` +
      'statistics follow on release.';
    return;
  }
  let thin = 0;
  let minEff = Infinity;
  for (const e of fit.effectiveKeys) {
    if (e < thinBelow) thin++;
    minEff = Math.min(minEff, e);
  }
  ui.fitStatus.textContent =
    `${name}, ${fit.kernel} kernel, ` +
    (fit.spanBandwidth ? `${spanText(fit.spanBandwidth, fit.n, axes)},` : `h = ${hText(fit.h, axes)}`) +
    (fit.curves ? `, ${lambdaText(fit.lambda, fit.category, fit.curves.length)}` : '') +
    ` on ${fit.n.toLocaleString('en')} points${fit.draft && fit.method !== 'grid' ? ' (draft while dragging)' : ''}` +
    (fit.spanBandwidth && !fit.draft && fit.n < window.demoState.n
      ? ` (a random sample of the ${window.demoState.n.toLocaleString('en')}: a span fit runs exactly, about n·k kernel terms)`
      : '') +
    ', ' +
    (fit.method === 'grid'
      ? `on a grid (error estimate ${fit.errorEstimate.toExponential(1)} of the range of y${planned(fit)}): `
      : `exactly${planned(fit) ? ` (${planned(fit).slice(2)})` : ''}: `) +
    `${fit.edf.toFixed(1)} effective parameters, noise sd ${fit.sigma.toPrecision(3)}; ` +
    `effective points per query ≥ ${minEff.toFixed(1)}` +
    (thin ? `, ${thin} of ${fit.effectiveKeys.length} queries have fewer than ${thinBelow} (thin support).` : '.') +
    (fit.robust
      ? ` Robust: ${fit.robust.iterations} rounds of bisquare weights gave ${fit.robust.low.toLocaleString('en')} of ` +
        `${fit.robust.n.toLocaleString('en')} points a weight below 0.5` +
        (fit.dim === 1
          ? ` (ringed${fit.robust.ringX.length < fit.robust.low ? `: the first ${fit.robust.ringX.length.toLocaleString('en')}` : ''}).`
          : '.')
      : '') +
    (fit.localVariance
      ? ` Band from a local σ(x): log squared residuals smoothed with h = ${hText(fit.localVariance.bandwidth, axes)}` +
        (fit.n < window.demoState.n
          ? ` (with this band, the fit uses a random ${fit.n.toLocaleString('en')} of the points).`
          : '.')
      : '');
}

/** A plan's reason ("exact: 1-D gaussian, 300 points: …") without the name of the method, which the text says. */
export const withoutMethod = (reason, method) =>
  reason.startsWith(`${method}: `) ? reason.slice(method.length + 2) : reason;

/**
 * Why the method ran, as the library's plan says (a model's `reason`, "exact: 1-D gaussian, 300 points: …"), after
 * "; the plan: ", without the method's own name (the status line names it); '' when the answer has none.
 */
const planned = ({ method, reason }) => (reason ? `; the plan: ${withoutMethod(reason, method)}` : '');

/** 1st, 2nd, 3rd, 4th, 11th, 21st, 1,002nd. */
const ordinal = (k) => {
  const tail = k % 100 >= 11 && k % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' }[k % 10] ?? 'th');
  return `${k.toLocaleString('en')}${tail}`;
};

/**
 * A span fit's bandwidth in words: the span, its k nearest of n points, and the median h over the curve's queries
 * with their smallest and largest.
 */
export const spanText = (span, n, axes) =>
  `nearest-neighbour span f = ${span.f.toFixed(2)} (each query's h is ${span.f > 1 ? '√f times ' : ''}the ` +
  `distance to its ${ordinal(span.k)} nearest of ${n.toLocaleString('en')} points: median h = ` +
  `${hText(span.median, axes)}, ` +
  `from ${hText(span.min, axes)} to ${hText(span.max, axes)} over the curve's queries)`;

/** The status line of a LOWESS fit: span, iterations, the points the robustness weights set aside, and no band. */
function describeLowess(ui, fit) {
  const low = fit.robust?.low ?? 0;
  ui.fitStatus.textContent =
    `LOWESS (Cleveland 1979, as R's lowess(): tricube-weighted local-linear fits), span f = ` +
    `${fit.frac.toFixed(2)}: each local fit uses the ${fit.span.toLocaleString('en')} nearest of ` +
    `${fit.n.toLocaleString('en')} points; ` +
    `${fit.iterations} robustness iteration${fit.iterations === 1 ? '' : 's'}` +
    (fit.iterations
      ? `, which gave ${low.toLocaleString('en')} point${low === 1 ? '' : 's'} a weight below 0.5 (ringed)`
      : '') +
    '. The curve joins the fitted values at the observations. No confidence band: LOWESS gives no standard errors.';
}

const DEGREES = ['local constant', 'local linear', 'local quadratic'];

/**
 * The status line of a loess fit: what R's loess() computed, its span in points, its family, the statistics R prints
 * (enp, residual standard error) and how the band was made.
 */
export function loessText(fit) {
  const n = fit.n.toLocaleString('en');
  const all = window.demoState.n;
  const robust = fit.robust;
  return (
    `loess (as R's loess(): ${DEGREES[fit.degree]} fits, tricube-weighted over the nearest ⌊f·n⌋ = ` +
    `${fit.q.toLocaleString('en')} of ${n} points${fit.n < all ? ` (a draft on a random ${n} of the ${all.toLocaleString('en')} while the span moves)` : ''}, ` +
    `on R's k-d tree, blended between its vertices), span f = ${fit.loessSpan.toFixed(2)}, degree ${fit.degree}, ` +
    `${fit.family} family: equivalent number of parameters ${fit.enp.toFixed(2)}, residual standard error ` +
    `${fit.residualScale.toPrecision(4)}.` +
    (fit.dim === 1
      ? ` Band: R's predict(se = TRUE), the fit ± t·se with t = ${fit.quantile.toFixed(3)} (${fit.degreesOfFreedom.toFixed(1)} ` +
        `degrees of freedom, ${Math.round(fit.level * 100)} %); like R's, it ignores the smoothing bias.`
      : ' No band on the surface.') +
    (robust
      ? ` Symmetric family: 4 fits, the last three with bisquare robustness weights, which gave ` +
        `${robust.low.toLocaleString('en')} of ${robust.n.toLocaleString('en')} points a weight below 0.5` +
        (fit.dim === 1 ? ' (ringed).' : '.')
      : '')
  );
}

/** The identity table: a few queries, the Gaussian kernel fit and softmax(Q′K′ᵀ)V side by side. */
export function describeIdentity(ui, fit, axes) {
  const { view } = fit;
  const approxOutput = view.approx && !view.approx.error ? view.approx.output : null;
  const rows = ui.identity.tBodies[0];
  const I = view.kernel.length;
  const picks = [0, Math.floor(I / 4), Math.floor(I / 2), Math.floor((3 * I) / 4), I - 1];
  rows.replaceChildren(
    ...picks.map((i) => {
      const tr = document.createElement('tr');
      const q = xText(fit.queries.subarray(i * fit.dim, (i + 1) * fit.dim), axes);
      for (const text of [
        q,
        view.kernel[i].toFixed(6),
        view.softmax[i].toFixed(6),
        Math.abs(view.kernel[i] - view.softmax[i]).toExponential(1),
      ]) {
        const td = document.createElement('td');
        td.textContent = text;
        tr.append(td);
      }
      const approx = document.createElement('td');
      approx.hidden = !approxOutput;
      approx.textContent = approxOutput ? approxOutput[i].toFixed(6) : '';
      tr.append(approx);
      return tr;
    }),
  );
  ui.approxHead.hidden = !approxOutput;
  ui.approxHead.textContent = view.approx ? METHOD_NAMES[view.approx.method] : '';
  ui.approxStatus.classList.toggle('error', Boolean(view.approx?.error));
  ui.approxStatus.textContent = describeApprox(view.approx, view.kernelMs);
  ui.identityCaption.textContent =
    `Gaussian Nadaraya–Watson at h = ${hText(fit.viewH, axes)}${fit.spanBandwidth ? ' (the span fit’s median h)' : ''}, both ways, over ${I.toLocaleString('en')} ` +
    `queries: largest difference ${view.maxDiff.toExponential(2)}. Both run in float32, and the rounding of |k|²/2h² ` +
    'grows with (spread of x / h)², so very small bandwidths show larger differences.';
}

const METHOD_NAMES = { 'random-features': 'random features', nystrom: 'Nyström', sparse: 'certified sparsity' };
const sci = (v) => v.toExponential(1);

/** Which approximation ran, with how many features or landmarks, its estimated and its measured error, and its time. */
function describeApprox(approx, exactMs) {
  if (!approx) return '';
  const name = METHOD_NAMES[approx.method];
  if (approx.error) return `${name} (tolerance ${approx.tolerance}) refused: ${approx.error}`;
  // Certified sparsity draws nothing at random, and its estimate is a guaranteed bound.
  const sparse = approx.method === 'sparse';
  return (
    `${name[0].toUpperCase()}${name.slice(1)}, ${approx.count.toLocaleString('en')} ${approx.countName} (tolerance ${approx.tolerance}` +
    `${sparse ? '' : `, seed ${approx.seed}`}${approx.exactRows ? `, ${approx.exactRows} queries recomputed exactly` : ''}): ` +
    `${sparse ? 'guaranteed error ≤' : 'estimated error'} ${sci(approx.errorEstimate)}; measured against the exact fit: RMS ${sci(approx.rmsRelative)} ` +
    `of the range of y, largest difference ${sci(approx.maxDiff)}` +
    // The estimate is a statistic of the run itself; where the measured error is over 10× above it, say so.
    (approx.rmsRelative > 10 * approx.errorEstimate
      ? ` (${Math.round(approx.rmsRelative / Math.max(approx.errorEstimate, 1e-300)).toLocaleString('en')}× the estimate: ` +
        'it is not to be trusted for this data and bandwidth)'
      : '') +
    `; ${ms(approx.ms)} (exact: ${ms(exactMs)}).`
  );
}

/** How long each step took, and which WebAssembly build ran them. */
export function describeTimings(ui, fit, { timings: t, selection, worker }) {
  if (fit.loess) {
    const lines = [
      `parse (the package's table reader, in a Worker): ${ms(t.parse)}`,
      `loess (ka.loess, ${fit.n.toLocaleString('en')} points, span ${fit.loessSpan.toFixed(2)}, degree ${fit.degree}, ${fit.family}): ${ms(t.fit)}`,
      `${fit.dim === 1 ? "R's band (predictInterval)" : 'predict'} at ${(fit.queries.length / fit.dim).toLocaleString('en')} queries: ${ms(t.predict)}`,
      `request → answer on the main thread: ${ms(t.roundTrip)}`,
    ];
    ui.timings.replaceChildren(
      ...lines.map((text) => Object.assign(document.createElement('li'), { textContent: text })),
    );
    return;
  }
  if (fit.lowess) {
    const lines = [
      `parse (the package's table reader, in a Worker): ${ms(t.parse)}`,
      `LOWESS (ka.lowess, ${fit.n.toLocaleString('en')} points, f = ${fit.frac.toFixed(2)}, ${fit.iterations} iterations): ${ms(t.fit)}`,
      `request → answer on the main thread: ${ms(t.roundTrip)}`,
    ];
    ui.timings.replaceChildren(
      ...lines.map((text) => Object.assign(document.createElement('li'), { textContent: text })),
    );
    return;
  }
  const I = fit.mean.length;
  const lines = [
    `parse (the package's table reader, in a Worker): ${ms(t.parse)}`,
    `bandwidth choice: ${ms(t.select)}${selection ? ` (${selection.n.toLocaleString('en')} points)` : ''}`,
    `fit (kernelRegression, ${fit.method}: noise variance and degrees of freedom over ${fit.n.toLocaleString('en')} points): ${ms(t.fit)}`,
    `prediction and band at ${I.toLocaleString('en')} queries: ${ms(t.predict)}`,
    fit.matrix
      ? `attention matrix (weights(), ${fit.matrix.rows} × ${fit.matrix.keys.toLocaleString('en')}): ${ms(t.weights)}`
      : '',
    `Gaussian kernel attention: ${ms(t.attentionKernel)}; softmax attention with the augmented keys: ${ms(t.attentionSoftmax)}`,
    fit.view?.approx && !fit.view.approx.error
      ? `the same by ${METHOD_NAMES[fit.view.approx.method]} ` +
        `(attentionWithInfo, ${fit.view.approx.count} ${fit.view.approx.countName}): ${ms(fit.view.approx.ms)}`
      : '',
    `request → answer on the main thread: ${ms(t.roundTrip)}`,
    worker
      ? `WebAssembly: ${worker.build === 'threads' ? `${worker.threads} threads` : 'one thread'}, ` +
        `SIMD ${worker.simd}, page ${worker.isolated ? '' : 'not '}cross-origin isolated`
      : '',
  ];
  ui.timings.replaceChildren(
    ...lines.filter(Boolean).map((text) => Object.assign(document.createElement('li'), { textContent: text })),
  );
}

/**
 * The inspected query (`hover`: its coordinates and top keys; row `row` of the matrix): its fit and its weights.
 * Until one is hovered or tapped (`inspected` false) the bars show the middle query and the caption says so.
 */
export function describeHover(ui, fit, hover, row, showBand, inspected = true, axes = null) {
  if (!fit || !hover) {
    ui.hoverStatus.textContent = '';
    ui.barsCaption.textContent = 'Hover or tap a query (a row of the matrix, or the fit).';
    return;
  }
  const i = fit.matrix.queryIndex[row];
  const at = xText(hover.query, axes);
  const band = showBand ? ` [${fit.lower[i].toFixed(3)}, ${fit.upper[i].toFixed(3)}]` : '';
  ui.hoverStatus.textContent = inspected
    ? `query ${at}: fit ${fit.mean[i].toFixed(4)}${band}` +
      (fit.effectiveKeys ? `, ${fit.effectiveKeys[i].toFixed(1)} effective points` : '')
    : '';
  const top = hover.top
    .slice(0, 3)
    .map((k) => `${axes ? xText(k.x, axes) : k.x.map((v) => v.toFixed(2)).join(', ')} (${k.w.toFixed(3)})`)
    .join('; ');
  ui.barsCaption.textContent =
    `${inspected ? 'Query' : 'The middle query,'} ${at}: its weights over the keys (sum 1). ` +
    `Heaviest keys${inspected ? ', circled on the fit' : ''}: ${top}.${inspected ? '' : ' Hover or tap the fit for another query.'}`;
}
