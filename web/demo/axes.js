// How the demo shows an x column: plain numbers, or dates and times. The reader gives dates as seconds since 1970 UTC
// and times of day as seconds since midnight; the page fits them in seconds less a centre (a whole day or second near
// the middle of the column), so that float32 keeps their resolution (1.6×10⁹ s, today's dates, has steps of 128 s in
// float32; centred, a century of daily data still resolves to seconds). An axis turns centred seconds back into text.

import { ticks as numberTicks } from './ticks.js';

const MINUTE = 60;
const HOUR = 3600;
const DAY = 86400;
const YEAR = 365.2425 * DAY;

/** The centre of a date column (seconds since 1970): the midpoint of its range, rounded to a whole day (UTC). */
export function centreOf(values, offset, stride, kind) {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = offset; i < values.length; i += stride) {
    if (values[i] < lo) lo = values[i];
    if (values[i] > hi) hi = values[i];
  }
  const unit = kind === 'date' ? DAY : 1;
  return Math.round((lo + hi) / 2 / unit) * unit;
}

const pad = (v, n = 2) => String(v).padStart(n, '0');

/** Seconds since 1970 as ISO-style text: the date, then hours and minutes (and seconds) when `resolution` needs them. */
function dateText(seconds, resolution) {
  const d = new Date(Math.round(seconds) * 1000);
  const year = d.getUTCFullYear();
  const date = `${year < 0 ? '−' : ''}${pad(Math.abs(year), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  if (resolution >= DAY) return date;
  return `${date} ${clockText(seconds, resolution)}`;
}

/** Seconds since midnight (any day) as hh:mm or hh:mm:ss. */
function clockText(seconds, resolution) {
  const s = ((Math.round(seconds) % DAY) + DAY) % DAY;
  const hm = `${pad(Math.floor(s / HOUR))}:${pad(Math.floor((s % HOUR) / MINUTE))}`;
  return resolution >= MINUTE ? hm : `${hm}:${pad(s % MINUTE)}`;
}

// Calendar steps for ticks, smallest first: [seconds (months and years: approximate, for choosing), unit, count].
const STEPS = [
  [1, 's', 1],
  [5, 's', 5],
  [15, 's', 15],
  [30, 's', 30],
  [MINUTE, 's', 60],
  [5 * MINUTE, 's', 300],
  [15 * MINUTE, 's', 900],
  [30 * MINUTE, 's', 1800],
  [HOUR, 's', HOUR],
  [3 * HOUR, 's', 3 * HOUR],
  [6 * HOUR, 's', 6 * HOUR],
  [12 * HOUR, 's', 12 * HOUR],
  [DAY, 's', DAY],
  [2 * DAY, 's', 2 * DAY],
  [7 * DAY, 's', 7 * DAY],
  [14 * DAY, 's', 14 * DAY],
  [YEAR / 12, 'month', 1],
  [YEAR / 4, 'month', 3],
  [YEAR / 2, 'month', 6],
  [YEAR, 'year', 1],
  [2 * YEAR, 'year', 2],
  [5 * YEAR, 'year', 5],
  [10 * YEAR, 'year', 10],
  [20 * YEAR, 'year', 20],
  [50 * YEAR, 'year', 50],
  [100 * YEAR, 'year', 100],
  [200 * YEAR, 'year', 200],
  [500 * YEAR, 'year', 500],
  [1000 * YEAR, 'year', 1000],
];

/**
 * Ticks over [lo, hi] seconds (absolute: since 1970, or since midnight), about `count` of them at a calendar step:
 * whole seconds, minutes, hours, days, months (UTC) or years. `label` writes a tick at the step's resolution.
 */
function calendarTicks(lo, hi, count, label) {
  const [seconds, unit, n] = STEPS.find(([s]) => s * count >= hi - lo) ?? STEPS.at(-1);
  const out = [];
  if (unit === 's') {
    // Weeks start on Mondays (1970-01-05 was one); other steps count from midnight, 1970-01-01.
    const origin = n === 7 * DAY || n === 14 * DAY ? 4 * DAY : 0;
    for (let t = Math.ceil((lo - origin) / n) * n + origin; t <= hi && out.length < 60; t += n)
      out.push({ value: t, label: label(t, seconds) });
    return out;
  }
  const start = new Date(Math.floor(lo) * 1000);
  let year = start.getUTCFullYear();
  let month = unit === 'month' ? Math.floor(start.getUTCMonth() / n) * n : 0;
  if (unit === 'year') year = Math.floor(year / n) * n;
  for (let guard = 0; guard < 200 && out.length < 60; guard++) {
    const t = Date.UTC(year, month, 1) / 1000;
    if (t > hi) break;
    if (t >= lo) out.push({ value: t, label: label(t, seconds) });
    if (unit === 'month') {
      month += n;
      if (month >= 12) {
        month -= 12;
        year += 1;
      }
    } else {
      year += n;
    }
  }
  return out;
}

/** A month or year tick reads 1958-03 or 1958; days and finer read as dates and clocks. */
function dateTickLabel(t, step) {
  if (step >= YEAR * 0.99) return dateText(t, DAY).slice(0, -6);
  if (step >= (YEAR / 12) * 0.99) return dateText(t, DAY).slice(0, -3);
  return step >= DAY ? dateText(t, DAY) : dateText(t, step);
}

/** h (seconds) in the unit a person would use: 45 s, 12 min, 3.2 hours, 3.2 days, 1.5 years. */
export function duration(h) {
  const a = Math.abs(h);
  const p = (v) => Number(v.toPrecision(2)).toLocaleString('en');
  if (a < 2 * MINUTE) return `${p(h)} s`;
  if (a < 2 * HOUR) return `${p(h / MINUTE)} min`;
  if (a < 2 * DAY) return `${p(h / HOUR)} hours`;
  if (a < 2 * YEAR) return `${p(h / DAY)} days`;
  return `${p(h / YEAR)} years`;
}

// Round durations for a log axis of h: seconds, minutes, hours, days, years.
const DURATIONS = [1, 2, 5, 10, 30].concat(
  [1, 2, 5, 10, 30].map((m) => m * MINUTE),
  [1, 2, 6, 12].map((h) => h * HOUR),
  [1, 2, 5, 10, 20, 50, 100, 200].map((d) => d * DAY),
  [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000].map((y) => y * YEAR),
);

/** Ticks for a log axis of durations over [lo, hi] seconds, labelled as durations; every other one when crowded. */
function durationTicks(lo, hi) {
  let out = DURATIONS.filter((t) => t >= lo && t <= hi);
  while (out.length > 7) out = out.filter((_, i) => i % 2 === 0);
  return out.map((value) => ({ value, label: duration(value) }));
}

/**
 * The axis of an x column: `kind` 'number', 'date' (seconds since 1970) or 'time' (seconds since midnight), fitted as
 * value − `centre`. Its methods take the fitted (centred) value: `ticks(lo, hi, count)`, `text(v)` (hover, tables:
 * to the resolution of the column's `span`), `csv(v)` (exports: ISO dates; whole seconds), `h(h)` (a bandwidth), and
 * for dates and times `hTicks(lo, hi)` (a log axis of h, as durations).
 */
export function axis(kind = 'number', centre = 0, span = 0) {
  if (kind !== 'date' && kind !== 'time') {
    return {
      kind: 'number',
      centre: 0,
      ticks: (lo, hi, count) => numberTicks(lo, hi, count),
      text: (v) => v.toFixed(3),
      csv: null,
      h: (h) => h.toPrecision(3),
    };
  }
  // Hover text to the day on data over about a year, else to the minute, and seconds under an hour of data.
  const resolution = span > 300 * DAY ? DAY : span > HOUR ? MINUTE : 1;
  const label = kind === 'date' ? dateTickLabel : (t, step) => clockText(t, step);
  return {
    kind,
    centre,
    ticks: (lo, hi, count) =>
      calendarTicks(lo + centre, hi + centre, count, label).map((t) => ({ ...t, value: t.value - centre })),
    text: (v) => (kind === 'date' ? dateText(v + centre, resolution) : clockText(v + centre, resolution)),
    // The reader keeps whole seconds; a date without a clock time stays a date.
    csv: (v) => {
      const s = Math.round(v + centre);
      if (kind === 'time') return clockText(s, s % MINUTE ? 1 : MINUTE);
      if (s % DAY === 0) return dateText(s, DAY);
      return new Date(s * 1000).toISOString().replace('.000Z', 'Z');
    },
    h: duration,
    hTicks: durationTicks,
  };
}

/**
 * The axes of x (n × dim) whose columns are of `kinds` ('number', 'date', 'time'), fitted less `centres`; undefined
 * when every column is a plain number (the page then writes numbers as it always did).
 */
export function axesOf(x, dim, kinds, centres) {
  if (!kinds || kinds.every((k) => k !== 'date' && k !== 'time')) return undefined;
  return kinds.map((kind, d) => {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = d; i < x.length; i += dim) {
      if (x[i] < lo) lo = x[i];
      if (x[i] > hi) hi = x[i];
    }
    return axis(kind, centres[d], hi - lo);
  });
}

/**
 * Date and time columns of x (n × dim, seconds as the reader gives them) centred in place, in float64, before
 * anything becomes float32: `{ centres }`, 0 for a plain number column (left as it is).
 */
export function centreDates(x, dim, kinds) {
  const centres = kinds.map((kind, d) => (kind === 'date' || kind === 'time' ? centreOf(x, d, dim, kind) : 0));
  for (let i = 0; i < x.length; i++) x[i] -= centres[i % dim];
  return centres;
}
