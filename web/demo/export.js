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
 * A float32 result (the engine computes in float32) as the shortest decimal that reads back as the same float32:
 * 1869.02, not 1869.02001953125.
 */
export function float32Text(v) {
  if (!Number.isFinite(v)) return String(v);
  const f = Math.fround(v);
  for (let p = 1; p < 9; p++) {
    const s = String(Number(f.toPrecision(p)));
    if (Math.fround(Number(s)) === f) return s;
  }
  return String(Number(f.toPrecision(9)));
}

const decimals = (text) => {
  const m = /\.(\d+)(e([+-]\d+))?$/i.exec(text) ?? /(e([+-]\d+))$/i.exec(text);
  if (!m) return 0;
  return Math.max(0, (m[1] && !m[1].startsWith('e') ? m[1].length : 0) - Number(m[3] ?? m[2] ?? 0));
};

/** x's coordinate d as CSV text: a date or time column (axes.js) as ISO text, else `number(v)`. */
const xField = (axes, d, v, number) => (axes?.[d]?.csv ? axes[d].csv(v) : number(v));

/**
 * The fit at its queries (a grid over the data) as CSV text: x column(s), fit, the band when it is shown. `axes`
 * (optional) says which x columns are dates or times, written back as such.
 */
export function fitCsv(fit, names, withBand, axes = null) {
  if (fit.lowess) {
    // LOWESS: its fitted values (float64) and robustness weights at the observations it used, sorted by x.
    const lines = [[names[0], 'fit', 'robustness_weight'].map(csvField).join(',')];
    for (let i = 0; i < fit.mean.length; i++) {
      lines.push([xField(axes, 0, fit.queries[i], String), String(fit.mean[i]), String(fit.weights[i])].map(csvField).join(','));
    }
    return `${lines.join('\n')}\n`;
  }
  const xNames = names.slice(0, fit.dim);
  const head = [...xNames, 'fit', ...(withBand ? [`lower_${fit.level}`, `upper_${fit.level}`] : []), 'effective_points'];
  const lines = [head.map(csvField).join(',')];
  const I = fit.mean.length;
  for (let i = 0; i < I; i++) {
    const row = Array.from(fit.queries.subarray(i * fit.dim, (i + 1) * fit.dim), (v, d) => xField(axes, d, v, float32Text));
    row.push(float32Text(fit.mean[i]));
    if (withBand) row.push(float32Text(fit.lower[i]), float32Text(fit.upper[i]));
    row.push(fit.effectiveKeys[i].toFixed(3));
    lines.push(row.map(csvField).join(','));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The fit at the observations as CSV text: the data as read (float64, so the file's own digits; dates as dates), the fit, the
 * residual y − fit (to the digits of y and the fit, no further) and, when shown, the band.
 */
export function observationsCsv({ x, y, dim, names, axes }, { mean, lower, upper, level, float64 = false }, withBand) {
  const head = [...names.slice(0, dim), names[dim], 'fit', 'residual', ...(withBand ? [`lower_${level}`, `upper_${level}`] : [])];
  const lines = [head.map(csvField).join(',')];
  for (let i = 0; i < y.length; i++) {
    const row = Array.from(x.subarray(i * dim, (i + 1) * dim), (v, d) => xField(axes, d, v, String));
    const yText = String(y[i]);
    const fitText = float64 ? String(mean[i]) : float32Text(mean[i]);
    const places = Math.min(20, Math.max(decimals(yText), decimals(fitText)));
    row.push(yText, fitText, Number.isFinite(mean[i]) ? String(Number((y[i] - Number(fitText)).toFixed(places))) : 'NaN');
    if (withBand) row.push(float32Text(lower[i]), float32Text(upper[i]));
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
