// What leaves the demo, by the visitor's hand only: the fitted values as CSV, plots as PNG or SVG (svg.js), and the
// settings (never the data) in the URL's hash so a view can be shared.

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

/** The fit at its queries as CSV text: x column(s), fit, and the band when it is shown. */
export function fitCsv(fit, names, withBand) {
  const xNames = names.slice(0, fit.dim);
  const head = [...xNames, 'fit', ...(withBand ? [`lower_${fit.level}`, `upper_${fit.level}`] : []), 'effective_points'];
  const lines = [head.map(csvField).join(',')];
  const I = fit.mean.length;
  for (let i = 0; i < I; i++) {
    const row = Array.from(fit.queries.subarray(i * fit.dim, (i + 1) * fit.dim), String);
    row.push(String(fit.mean[i]));
    if (withBand) row.push(String(fit.lower[i]), String(fit.upper[i]));
    row.push(fit.effectiveKeys[i].toFixed(3));
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
