// One table cell read strictly as a number, a date or a time of day (for table.js). Nothing is guessed cell by cell:
// the decimal mark and the day/month order are decided for the whole file or column by the caller.

// Case-insensitive spellings of a missing value.
const MISSING = new Set(['', 'na', 'n/a', 'nan', 'null']);

/** Whether a cell holds no value: empty, NA, N/A, NaN or null. */
export const isMissing = (cell) => MISSING.has(cell.trim().toLowerCase());

const PLAIN = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
// Digit-group separators: the other mark, spaces (plain, no-break, narrow no-break) and the Swiss apostrophe. A
// grouped integer part has a first group of 1–3 digits not starting with 0, then groups of exactly 3 with one separator.
const numberPattern = (decimal) =>
  new RegExp(
    `^([+-]?)(\\d+|[1-9]\\d{0,2}([${decimal === '.' ? ',' : '.'} \\u00a0\\u202f'])\\d{3}(?:\\3\\d{3})*)?` +
      `(?:\\${decimal}(\\d*))?(?:[eE]([+-]?\\d+))?$`,
  );
const PATTERNS = { '.': numberPattern('.'), ',': numberPattern(',') };

/**
 * The number in `cell` with `decimal` ('.' or ',') as the decimal mark, or NaN. Accepts a sign (U+2212 minus too),
 * digit groups of three, and an exponent; refuses anything else (`0x10`, `1e`, `12abc`, `Infinity`).
 */
export function parseNumber(cell, decimal = '.') {
  let s = cell.trim();
  if (s.includes('\u2212')) s = s.replaceAll('\u2212', '-');
  if (decimal === '.' && PLAIN.test(s)) return Number(s);
  const m = PATTERNS[decimal].exec(s);
  if (!m) return NaN;
  const [, sign, int = '', group, frac, exp] = m;
  if (int === '' && !frac) return NaN; // no digit at all ("." or "-e5")
  return Number(`${sign}${group ? int.replaceAll(group, '') : int}.${frac ?? ''}${exp === undefined ? '' : `e${exp}`}`);
}

/**
 * How `cell` reads under each decimal mark: 'dot' when only '.' reads it, 'comma' when only ',' does, 'ambiguous'
 * when both do with different values (`1,234`, `1.234`), 'same' when both agree (`12`), 'none' when neither does.
 */
export function decimalEvidence(cell) {
  const dot = parseNumber(cell, '.');
  const comma = parseNumber(cell, ',');
  if (Number.isNaN(dot)) return Number.isNaN(comma) ? 'none' : 'comma';
  if (Number.isNaN(comma)) return 'dot';
  return dot === comma ? 'same' : 'ambiguous';
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const FULL = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** 1–12 for an English month name or its 3-letter abbreviation (also `Sept`), else 0. */
function month(name) {
  const s = name.toLowerCase();
  const k = s === 'sept' ? 8 : s.length === 3 ? MONTHS.indexOf(s) : FULL.indexOf(s);
  return k + 1;
}

// Two-digit years as POSIX strptime reads them: 69–99 are 1969–1999, 00–68 are 2000–2068.
const fullYear = (y) => (y.length === 4 ? Number(y) : Number(y) + (Number(y) >= 69 ? 1900 : 2000));

const TIME = '(\\d{1,2}):(\\d{2})(?::(\\d{2}(?:\\.\\d+)?))?';
const ISO = new RegExp(`^(\\d{4})-(\\d{2})(?:-(\\d{2})(?:[T ]${TIME}(Z|[+-]\\d{2}:?\\d{2})?)?)?$`);
const NUMERIC = new RegExp(`^(\\d{1,2})([/.-])(\\d{1,2})\\2(\\d{4})(?:[T ]${TIME})?$`);
const DAY_MON_YEAR = /^(\d{1,2})[-/ ]([A-Za-z]{3,9})\.?[-/ ](\d{4}|\d{2})$/;
const MON_DAY_YEAR = /^([A-Za-z]{3,9})\.?[- ](\d{1,2}),?[- ](\d{4})$/;
const QUARTER = /^(\d{4})[- ]?[Qq]([1-4])$/;
const COMPACT = /^(\d{4})(\d{2})(\d{2})$/;
const MON_YEAR = /^([A-Za-z]{3,9})\.?[-/ ](\d{4})$/;
const TIME_ONLY = new RegExp(`^${TIME}$`);

/** Seconds since 1970-01-01T00:00Z of a calendar date and time, or NaN when the date does not exist (31 April). */
function utcSeconds(y, mo, d, hh = '0', mm = '0', ss = '0') {
  const [h, mi, s] = [Number(hh), Number(mm), Number(ss)];
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s >= 60) return NaN;
  const date = new Date(Date.UTC(y, mo - 1, d));
  date.setUTCFullYear(y); // Date.UTC maps years 0–99 to 1900–1999
  if (date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return NaN;
  return date.getTime() / 1000 + h * 3600 + mi * 60 + s;
}

/**
 * A date or time in `cell` as `{ kind: 'date' | 'time', value, order }`, or null. Dates (with an optional time) are
 * seconds since 1970-01-01T00:00 UTC, read as UTC unless an offset is given, so no daylight-saving shift can enter;
 * times of day alone are seconds since midnight. `order` is 'day-first' or 'month-first' for `nn/nn/yyyy` forms
 * (and `nn.nn.yyyy`, `nn-nn-yyyy`): `dayFirst` says which to use, and `order` is null for every other form.
 * Forms: 1958-03-29, 1958-03, 1958-03-29T12:00(:00)(Z|+01:00), 29/03/1958 (12:00), 19-Sep-03, 19 Sep 2003,
 * Mar 29, 1958, Jan-1-1995, Mar 1958, March 1958, 1974Q1 (the quarter's first day), 12:30, 12:30:15.
 */
export function parseDate(cell, dayFirst = true) {
  const s = cell.trim();
  let m = ISO.exec(s);
  if (m) {
    const [, y, mo, d = '1', hh, mm, ss, zone] = m;
    let v = utcSeconds(Number(y), Number(mo), Number(d), hh, mm, ss);
    if (zone && zone !== 'Z') {
      const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone);
      v -= (z[1] === '-' ? -1 : 1) * (Number(z[2]) * 3600 + Number(z[3]) * 60);
    }
    return Number.isNaN(v) ? null : { kind: 'date', value: v, order: null };
  }
  if ((m = NUMERIC.exec(s))) {
    const [, a, , b, y, hh, mm, ss] = m;
    const [d, mo] = dayFirst ? [a, b] : [b, a];
    const v = utcSeconds(Number(y), Number(mo), Number(d), hh, mm, ss);
    return Number.isNaN(v) ? null : { kind: 'date', value: v, order: dayFirst ? 'day-first' : 'month-first' };
  }
  let y;
  let mo;
  let d;
  if ((m = DAY_MON_YEAR.exec(s))) [d, mo, y] = [Number(m[1]), month(m[2]), fullYear(m[3])];
  else if ((m = MON_DAY_YEAR.exec(s))) [mo, d, y] = [month(m[1]), Number(m[2]), Number(m[3])];
  else if ((m = MON_YEAR.exec(s))) [mo, d, y] = [month(m[1]), 1, Number(m[2])];
  else if ((m = QUARTER.exec(s))) [mo, d, y] = [3 * Number(m[2]) - 2, 1, Number(m[1])];
  else if ((m = TIME_ONLY.exec(s))) {
    const v = utcSeconds(1970, 1, 1, m[1], m[2], m[3]);
    return Number.isNaN(v) ? null : { kind: 'time', value: v, order: null };
  } else return null;
  const v = mo ? utcSeconds(y, mo, d) : NaN;
  return Number.isNaN(v) ? null : { kind: 'date', value: v, order: null };
}

/**
 * A date written as the number yyyymmdd (19580329), in seconds as parseDate's, or null. Read so only for a column whose
 * header says it holds dates (see columnKind): elsewhere 19580329 is a number.
 */
export function parseCompactDate(cell) {
  const m = COMPACT.exec(cell.trim());
  if (!m) return null;
  const v = utcSeconds(Number(m[1]), Number(m[2]), Number(m[3]));
  return Number.isNaN(v) ? null : { kind: 'date', value: v, order: null };
}
