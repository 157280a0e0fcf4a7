// Tick positions and labels for the plots' number axes (dates and times: axes.js): steps of 1, 2 or 5 times a power
// of ten, labels at the step's precision with a true minus sign, log axes as 10, 20, 50 or powers of ten.

const SUPERSCRIPT = {
  '-': '\u207b',
  0: '\u2070',
  1: '\u00b9',
  2: '\u00b2',
  3: '\u00b3',
  4: '\u2074',
  5: '\u2075',
  6: '\u2076',
  7: '\u2077',
  8: '\u2078',
  9: '\u2079',
};

/** v as m×10ⁿ (three significant digits at most), for values no fixed notation writes briefly. */
function scientific(v) {
  if (v === 0) return '0';
  const e = Math.floor(Math.log10(Math.abs(v)));
  const m = Number((v / 10 ** e).toPrecision(3));
  const power = `10${[...String(e)].map((c) => SUPERSCRIPT[c]).join('')}`;
  return m === 1 ? power : `${m}\u00d7${power}`;
}

/** A tick label at the precision of the tick step, with a true minus sign; thousands grouped from 100,000 on. */
export function tickLabel(v, step) {
  if (Math.abs(v) < Math.abs(step) * 1e-9) v = 0;
  const a = Math.abs(step);
  let s;
  if (a >= 1e-4 && a < 1e12 && Math.abs(v) < 1e12) {
    const decimals = Math.max(0, -Math.floor(Math.log10(a) + 1e-9));
    s =
      Math.abs(v) >= 1e5
        ? v.toLocaleString('en', { minimumFractionDigits: decimals, maximumFractionDigits: decimals })
        : v.toFixed(decimals);
  } else {
    s = scientific(v);
  }
  return s.replace('-', '\u2212');
}

/** Ticks at 1, 2 or 5 times a power of ten, about `count` of them (none for a range no float can step through). */
export function ticks(lo, hi, count) {
  const raw = (hi - lo) / count || 1;
  if (!Number.isFinite(raw) || !Number.isFinite(lo)) return [];
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].find((m) => m * power >= raw) * power;
  const out = [];
  const first = Math.ceil(lo / step);
  for (let k = first; k * step <= hi + step * 1e-9 && out.length < 50; k++) {
    if (!(k * step > (k - 1) * step)) break; // a step below the values' resolution
    out.push({ value: k * step, label: tickLabel(k * step, step) });
  }
  return out;
}

/** A log-axis label: 10, 20, 0.05 as numbers are written; beyond 10⁻⁴ … 10⁶ as powers of ten. */
export function logLabel(v) {
  return (v >= 1e-4 && v < 1e6 ? String(Number(v.toPrecision(1))) : scientific(v)).replace('-', '\u2212');
}

export function logTicks(lo, hi) {
  const out = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v >= lo && v <= hi) out.push({ value: v, label: logLabel(v) });
    }
  }
  return out;
}
