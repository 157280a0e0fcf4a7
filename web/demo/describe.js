// The demo's text panels: the fit's status line, the identity table, the timings and the hovered query. Text only
// (textContent), never HTML.

const ms = (t) => (t === undefined ? '–' : t < 1 ? `${t.toFixed(2)} ms` : `${t.toFixed(1)} ms`);

/** The status line under the fit: estimator, h, sample, degrees of freedom, noise, and where support is thin. */
export function describeFit(ui, fit, thinBelow) {
  let thin = 0;
  let minEff = Infinity;
  for (const e of fit.effectiveKeys) {
    if (e < thinBelow) thin++;
    minEff = Math.min(minEff, e);
  }
  const name = fit.estimator === 'local-linear' ? 'Local-linear' : 'Nadaraya–Watson';
  ui.fitStatus.textContent = `${name}, ${fit.kernel} kernel, h = ${Array.from(fit.h, (h) => h.toPrecision(3)).join(', ')}` +
    ` on ${fit.n.toLocaleString('en')} points${fit.draft && fit.method !== 'grid' ? ' (draft while dragging)' : ''}, ` +
    (fit.method === 'grid' ? `on a grid (error estimate ${fit.errorEstimate.toExponential(1)} of the range of y): ` : 'exactly: ') +
    `${fit.edf.toFixed(1)} effective parameters, noise sd ${fit.sigma.toPrecision(3)}; ` +
    `effective points per query ≥ ${minEff.toFixed(1)}` +
    (thin ? `, ${thin} of ${fit.effectiveKeys.length} queries have fewer than ${thinBelow} (thin support).` : '.');

}

/** The identity table: a few queries, the Gaussian kernel fit and softmax(Q′K′ᵀ)V side by side. */
export function describeIdentity(ui, fit) {
  const { view } = fit;
  const rows = ui.identity.tBodies[0];
  const I = view.kernel.length;
  const picks = [0, Math.floor(I / 4), Math.floor(I / 2), Math.floor((3 * I) / 4), I - 1];
  rows.replaceChildren(...picks.map((i) => {
    const tr = document.createElement('tr');
    const q = Array.from(fit.queries.subarray(i * fit.dim, (i + 1) * fit.dim), (v) => v.toFixed(3)).join(', ');
    for (const text of [q, view.kernel[i].toFixed(6), view.softmax[i].toFixed(6), Math.abs(view.kernel[i] - view.softmax[i]).toExponential(1)]) {
      const td = document.createElement('td');
      td.textContent = text;
      tr.append(td);
    }
    return tr;
  }));
  ui.identityCaption.textContent = `Gaussian Nadaraya–Watson at h = ${fit.viewH.map((h) => h.toPrecision(3)).join(', ')}, both ways, over ${I.toLocaleString('en')} ` +
    `queries: largest difference ${view.maxDiff.toExponential(2)}. Both run in float32, and the rounding of |k|²/2h² ` +
    'grows with (spread of x / h)², so very small bandwidths show larger differences.';
}

/** How long each step took, and which WebAssembly build ran them. */
export function describeTimings(ui, fit, { timings: t, selection, worker }) {
  const I = fit.mean.length;
  const lines = [
    `parse (Papa Parse, in a Worker): ${ms(t.parse)}`,
    `bandwidth choice: ${ms(t.select)}${selection ? ` (${selection.n.toLocaleString('en')} points)` : ''}`,
    `fit (kernelRegression, ${fit.method}: noise variance and degrees of freedom over ${fit.n.toLocaleString('en')} points): ${ms(t.fit)}`,
    `prediction and band at ${I.toLocaleString('en')} queries: ${ms(t.predict)}`,
    fit.matrix ? `attention matrix (weights(), ${fit.matrix.rows} × ${fit.matrix.keys.toLocaleString('en')}): ${ms(t.weights)}` : '',
    `Gaussian kernel attention: ${ms(t.attentionKernel)}; softmax attention with the augmented keys: ${ms(t.attentionSoftmax)}`,
    `request → answer on the main thread: ${ms(t.roundTrip)}`,
    worker ? `WebAssembly: ${worker.build === 'threads' ? `${worker.threads} threads` : 'one thread'}, ` +
      `SIMD ${worker.simd}, page ${worker.isolated ? '' : 'not '}cross-origin isolated` : '',
  ];
  ui.timings.replaceChildren(...lines.filter(Boolean).map((text) => Object.assign(document.createElement('li'), { textContent: text })));
}

/** The hovered query (`hover`: its coordinates and top keys; row `row` of the matrix): its fit and its weights. */
export function describeHover(ui, fit, hover, row, showBand) {
  if (!fit || !hover) {
    ui.hoverStatus.textContent = '';
    ui.barsCaption.textContent = 'Hover a query (a row of the matrix, or the fit).';
    return;
  }
  const i = fit.matrix.queryIndex[row];
  const at = hover.query.map((v) => v.toFixed(3)).join(', ');
  const band = showBand ? ` [${fit.lower[i].toFixed(3)}, ${fit.upper[i].toFixed(3)}]` : '';
  ui.hoverStatus.textContent = `query ${at}: fit ${fit.mean[i].toFixed(4)}${band}, ` +
    `${fit.effectiveKeys[i].toFixed(1)} effective points`;
  const top = hover.top.slice(0, 3).map((k) => `${k.x.map((v) => v.toFixed(2)).join(', ')} (${k.w.toFixed(3)})`).join('; ');
  ui.barsCaption.textContent = `Query ${at}: its weights over the keys (sum 1). Heaviest keys, circled on the fit: ${top}.`;
}
