// How the commands write their results: the format (CSV or JSON, from --format or --output's extension), where
// (--output or stdout), how numbers are rounded, and the result's warnings on stderr.
import { choice, writeOutput } from './args.mjs';
import { formatCsv } from './csv.mjs';

const DIGITS = 9;

/** A number to 9 significant digits (NaN and ±Infinity as they are): every summary value the commands print. */
export const round = (v) => (Number.isFinite(v) ? Number(v.toPrecision(DIGITS)) : v);

/**
 * The rounding for a column of results in the units of `sample` (a fit of y, its band): 9 significant digits of the
 * sample's range, as round() gives for values of that size, so that y around 1.7e9 keeps the digits its fit has
 * (float32's on the spread, after the shift: docs/design.md, "The frame") instead of rounding to steps of 10.
 */
export function roundOnRange(sample) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of sample) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  const range = hi - lo || Math.max(Math.abs(lo), Math.abs(hi));
  if (!(range > 0) || !Number.isFinite(range)) return round;
  const decimals = DIGITS - 1 - Math.floor(Math.log10(range));
  if (decimals > 100) return round;
  if (decimals >= 0) return (v) => (Number.isFinite(v) ? Number(v.toFixed(decimals)) : v);
  const step = 10 ** -decimals;
  return (v) => (Number.isFinite(v) ? Math.round(v / step) * step : v);
}

/** --format, or the default that --output's extension implies (`.json`), else csv. */
export function outputFormat(values) {
  return choice(values, 'format', ['csv', 'json'], values.output?.toLowerCase().endsWith('.json') ? 'json' : 'csv');
}

/** Writes `text` to --output or stdout. */
export async function emit(values, text) {
  if (values.output && values.output !== '-') await writeOutput(values.output, text);
  else process.stdout.write(text);
}

/** Writes rows under `header` as CSV (a header line) or JSON (an array of objects keyed by the header). */
export function emitRows(values, format, header, rows) {
  if (format === 'csv') return emit(values, formatCsv(header, rows));
  return emit(values, JSON.stringify(rows.map((r) => Object.fromEntries(header.map((h, k) => [h, r[k]])))) + '\n');
}

/**
 * The result's `warnings` (interpolating, precision, guard, sparse-points: docs/regression.md, "Warnings"), one line
 * each on stderr, so that stdout stays the data.
 */
export function printWarnings(result) {
  for (const { code, message } of result.warnings ?? []) process.stderr.write(`warning [${code}]: ${message}\n`);
}
