// What leaves the demo, by the visitor's hand only: the fitted values as CSV (on the grid and at the observations),
// and the settings in the URL's hash so a view can be shared (share.js adds small data to it).

// A number as JavaScript writes one (String(x)): a spreadsheet reads it as that number, even with a leading minus.
const NUMBER = /^[+-]?(Infinity|(\d+\.?\d*|\.\d+)(e[+-]?\d+)?)$/i;

/**
 * One CSV field. Text that a spreadsheet would run as a formula (a leading =, +, -, @, tab or carriage return; the
 * column names are the visitor's, from their file) gets a leading single quote, as OWASP advises against CSV
 * injection; numbers stay numbers. Fields with a comma, quote or line break are quoted.
 */
export function csvField(value) {
  let s = String(value);
  if (/^[=+\-@\t\r]/.test(s) && !NUMBER.test(s)) s = `'${s}`;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * A float64 result of the library as the shortest decimal within `range`·2⁻²⁶ of it. The library centres every input
 * in double and computes in float32 around that centre, so its results resolve about 2⁻²⁴ of the data's range
 * (`range`: of y for fitted values and bands, of that x for grid points), whatever their offset: 10000.1234567 for
 * y ≈ 10⁴ with a range of 2, and 1869.02 rather than 1869.0200012345 where the range is 1000.
 */
export function resultText(v, range) {
  if (!Number.isFinite(v)) return String(v);
  const tolerance = (Number.isFinite(range) && range > 0 ? range : Math.abs(v) || 1) * 2 ** -26;
  for (let p = 1; p < 17; p++) {
    const s = String(Number(v.toPrecision(p)));
    if (Math.abs(Number(s) - v) <= tolerance) return s;
  }
  return String(v);
}

/** Largest minus smallest of the finite entries of `values` at `offset`, every `stride` (0 when none or one). */
export function spread(values, offset = 0, stride = 1) {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = offset; i < values.length; i += stride) {
    if (values[i] < lo) lo = values[i];
    if (values[i] > hi) hi = values[i];
  }
  return hi > lo ? hi - lo : 0;
}

const decimals = (text) => {
  const m = /\.(\d+)(e([+-]\d+))?$/i.exec(text) ?? /(e([+-]\d+))$/i.exec(text);
  if (!m) return 0;
  return Math.max(0, (m[1] && !m[1].startsWith('e') ? m[1].length : 0) - Number(m[3] ?? m[2] ?? 0));
};

/** A span fit's bandwidth as CSV text, to 7 digits (seconds on a date or time axis, as x is fitted). */
const hField = (v) => (Number.isFinite(v) ? String(Number(v.toPrecision(7))) : 'NaN');

/** x's coordinate d as CSV text: a date or time column (axes.js) as ISO text, else `number(v)`. */
const xField = (axes, d, v, number) => (axes?.[d]?.csv ? axes[d].csv(v) : number(v));

/**
 * The fit at its queries (a grid over the data) as CSV text: x column(s), fit, the band when it is shown. `axes`
 * (optional) says which x columns are dates or times, written back as such; `yRange`, the range of the data's y,
 * sets the digits written (resultText; else the fit's own range).
 */
export function fitCsv(fit, names, withBand, axes = null, yRange = spread(fit.mean)) {
  if (fit.curves) return categoryCsv(fit, names, withBand, axes, yRange);
  if (fit.lowess) {
    // LOWESS: its fitted values (float64) and robustness weights at the observations it used, sorted by x.
    const lines = [[names[0], 'fit', 'robustness_weight'].map(csvField).join(',')];
    for (let i = 0; i < fit.mean.length; i++) {
      lines.push(
        [xField(axes, 0, fit.queries[i], String), String(fit.mean[i]), String(fit.weights[i])].map(csvField).join(','),
      );
    }
    return `${lines.join('\n')}\n`;
  }
  const xNames = names.slice(0, fit.dim);
  // loess has no effective points; its band comes with R's standard error (se.fit).
  const loess = Boolean(fit.loess);
  const head = [
    ...xNames,
    'fit',
    ...(withBand ? [`lower_${fit.level}`, `upper_${fit.level}`] : []),
    ...(loess ? (withBand ? ['stderr'] : []) : ['effective_points']),
    // A span fit's own bandwidth at each query, per x.
    ...(fit.spanBandwidth && fit.bandwidths ? xNames.map((name) => `h_${name}`) : []),
  ];
  const lines = [head.map(csvField).join(',')];
  const I = fit.mean.length;
  const xRanges = Array.from({ length: fit.dim }, (_, d) => spread(fit.queries, d, fit.dim));
  for (let i = 0; i < I; i++) {
    const row = Array.from(fit.queries.subarray(i * fit.dim, (i + 1) * fit.dim), (v, d) =>
      xField(axes, d, v, (t) => resultText(t, xRanges[d])),
    );
    row.push(resultText(fit.mean[i], yRange));
    if (withBand) row.push(resultText(fit.lower[i], yRange), resultText(fit.upper[i], yRange));
    if (!loess) row.push(fit.effectiveKeys[i].toFixed(3));
    else if (withBand) row.push(resultText(fit.stderr[i], yRange));
    if (fit.spanBandwidth && fit.bandwidths)
      for (let d = 0; d < fit.dim; d++) row.push(hField(fit.bandwidths[i * fit.dim + d]));
    lines.push(row.map(csvField).join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** fitCsv() of a fit with a category: x, the level, the fit (and band) of that level's curve; the levels in turn. */
function categoryCsv(fit, names, withBand, axes, yRange) {
  const head = [names[0], fit.category, 'fit', ...(withBand ? [`lower_${fit.level}`, `upper_${fit.level}`] : [])];
  const lines = [head.map(csvField).join(',')];
  const xRange = spread(fit.queries);
  for (const curve of fit.curves) {
    for (let i = 0; i < fit.queries.length; i++) {
      const row = [xField(axes, 0, fit.queries[i], (t) => resultText(t, xRange)), curve.label];
      row.push(resultText(curve.mean[i], yRange));
      if (withBand) row.push(resultText(curve.lower[i], yRange), resultText(curve.upper[i], yRange));
      lines.push(row.map(csvField).join(','));
    }
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The fit at the observations as CSV text: the data as read (float64, so the file's own digits; dates as dates), the
 * fit and, when shown, the band (float64 results to the digits the library resolves, resultText; LOWESS's, computed
 * in float64 throughout, with all theirs), and the residual y − fit (to the digits of y and the fit, no further).
 */
export function observationsCsv(
  { x, y, dim, names, axes },
  { mean, lower, upper, level, float64 = false, bandwidths = null },
  withBand,
) {
  const head = [
    ...names.slice(0, dim),
    names[dim],
    'fit',
    'residual',
    ...(withBand ? [`lower_${level}`, `upper_${level}`] : []),
    ...(bandwidths ? names.slice(0, dim).map((name) => `h_${name}`) : []),
  ];
  const lines = [head.map(csvField).join(',')];
  const yRange = spread(y);
  for (let i = 0; i < y.length; i++) {
    const row = Array.from(x.subarray(i * dim, (i + 1) * dim), (v, d) => xField(axes, d, v, String));
    const yText = String(y[i]);
    const fitText = float64 ? String(mean[i]) : resultText(mean[i], yRange);
    const places = Math.min(20, Math.max(decimals(yText), decimals(fitText)));
    row.push(
      yText,
      fitText,
      Number.isFinite(mean[i]) ? String(Number((y[i] - Number(fitText)).toFixed(places))) : 'NaN',
    );
    if (withBand) row.push(resultText(lower[i], yRange), resultText(upper[i], yRange));
    if (bandwidths) for (let d = 0; d < dim; d++) row.push(hField(bandwidths[i * dim + d]));
    lines.push(row.map(csvField).join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** Saves a Blob under `name` through a temporary link (a same-origin blob: URL). */
export function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** The settings worth sharing, as a URL hash; read back by readSettings. */
export function settingsHash(settings) {
  return `#${new URLSearchParams(Object.entries(settings).map(([k, v]) => [k, String(v)])).toString()}`;
}

/** Settings from a hash, keeping only known keys whose values pass `valid` (the page's own option lists). */
export function readSettings(hash, valid) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const out = {};
  for (const [key, check] of Object.entries(valid)) {
    const value = params.get(key);
    if (value !== null && check(value)) out[key] = value;
  }
  return out;
}
