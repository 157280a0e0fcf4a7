// Warnings on fitted models and bandwidth selections: what the numbers cannot say themselves (docs/regression.md,
// "Warnings"). Each is { code, message }; an empty array when nothing is wrong.
/** The warning codes, in the order they are reported. */
export const WARNING_CODES = ['interpolating', 'precision', 'guard'];

// An input stored in float32 whose spread is below this share of its magnitude kept few significant bits there.
const PRECISION_SPREAD = 1e-5;
// A fit with this share of n effective parameters, or more, is (nearly) interpolating its sample.
const INTERPOLATING_SHARE = 0.9;
// 'guard': more than this share of the fitted values moved by the singular-design guard (the core's count).
const GUARD_SHARE = 0.01;

/** Column c's (min, max, max |v|) of an n × cols row-major array. */
function columnStats(a, n, cols, c) {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = a[i * cols + c];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return { lo, hi, magnitude: Math.max(Math.abs(lo), Math.abs(hi)) };
}

/**
 * The k-th smallest entry of `a` (0-based), by Hoare's selection with a median-of-three pivot; `a` is reordered so
 * that every entry after index k is at least that value. O(n) expected, against a sort's O(n log n).
 */
function select(a, k) {
  let lo = 0;
  let hi = a.length - 1;
  while (hi > lo) {
    const mid = (lo + hi) >> 1;
    const pivot = Math.max(Math.min(a[lo], a[mid]), Math.min(Math.max(a[lo], a[mid]), a[hi]));
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i++] = a[j];
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else break;
  }
  return a[k];
}

/** The median gap between the sorted distinct values of column c (0 when all are equal), as the core's search. */
export function medianSpacing(x, n, dim, c) {
  // Float64Array's own sort: V8's compiled code, as fast at the first call as at the tenth, where a radix sort in JS
  // ran interpreted until optimised (a fit's first call: 0.15 s at 10⁵ points, against 0.03 s).
  const v = new Float64Array(n);
  for (let i = 0; i < n; i++) v[i] = x[i * dim + c];
  v.sort();
  const all = new Float64Array(Math.max(n - 1, 0));
  let count = 0;
  for (let i = 1; i < n; i++) if (v[i] > v[i - 1]) all[count++] = v[i] - v[i - 1];
  if (!count) return 0;
  const gaps = all.subarray(0, count);
  const at = 0.5 * (count - 1);
  const k = Math.floor(at);
  const low = select(gaps, k);
  if (k + 1 >= count) return low;
  let next = Infinity; // the (k + 1)-th smallest: the least of the entries select() left after k
  for (let i = k + 1; i < count; i++) if (gaps[i] < next) next = gaps[i];
  return low + (at - k) * (next - low);
}

const fmt = (v) => Number(v.toPrecision(4));

/**
 * The warnings for a fit or a selection on the sample x (n × dim) → y (n × width) with bandwidths h (dim values):
 * - 'interpolating': effectiveParameters (ν = tr L, when known) >= 0.9·n, or h_d below the median spacing of x_d;
 * - 'precision': a column of x or y, as the caller stored it (`stored`: { x, y }; default x and y), that is a
 *   Float32Array and spreads over less than 1e-5 of its magnitude (precisionWarnings());
 * - 'guard': guardChanged (the core's count of fitted values the guard moved by > 1e-3 of range(y)) > 1 % of n; its
 *   advice names the lower degree of `estimator` (the guard pulls toward it).
 * `spacings` (dim median spacings) and `precision` (the 'precision' warnings), when given, stand for those computed
 * from x and `stored`: a model refitted at another bandwidth (withBandwidth) reuses its sample's.
 */
export function fitWarnings({
  x,
  y,
  n,
  dim,
  width,
  bandwidth,
  effectiveParameters,
  guardChanged,
  estimator = 'local-linear',
  stored = { x, y },
  spacings = null,
  precision = null,
}) {
  const warnings = [];
  const reasons = [];
  if (effectiveParameters !== undefined && effectiveParameters >= INTERPOLATING_SHARE * n) {
    reasons.push(`${fmt(effectiveParameters)} effective parameters on ${n} points`);
  }
  for (let d = 0; d < dim; d++) {
    const spacing = spacings ? spacings[d] : medianSpacing(x, n, dim, d);
    if (bandwidth[d] < spacing) {
      reasons.push(
        `the bandwidth ${fmt(bandwidth[d])}${dim > 1 ? ` of x[${d}]` : ''} is below the median spacing ${fmt(spacing)}`,
      );
    }
  }
  if (reasons.length) {
    warnings.push({
      code: 'interpolating',
      message:
        `the fit interpolates its sample (${reasons.join('; ')}): it follows the noise and its band is too narrow. ` +
        'With serial data, leave-one-out CV does this: choose h by blocked CV, `exclude: r` (leave out every point within ' +
        'r of the held-out one along x, r about the range of the dependence), or a larger bandwidth.',
    });
  }
  warnings.push(
    ...(precision ??
      precisionWarnings([
        [stored.x, dim, 'x'],
        [stored.y, width, 'y'],
      ])),
  );
  if (guardChanged !== undefined && guardChanged > GUARD_SHARE * n) {
    warnings.push({
      code: 'guard',
      message:
        `the singular-design guard changed ${guardChanged} of ${n} fitted values by more than 1e-3 of the range of y ` +
        (estimator === 'local-quadratic'
          ? '(points with too few distinct neighbours within the bandwidth to fit a parabola): use a larger ' +
            'bandwidth or local-linear.'
          : '(points without neighbours on both sides within the bandwidth): use a larger bandwidth or Nadaraya–Watson.'),
    });
  }
  return warnings;
}

/**
 * [] or the one 'precision' warning for `inputs` ([array, cols, name] each): the columns of the Float32Arrays among them
 * that spread over less than 1e-5 of their magnitude. Other inputs are centred in double before their float32 pass
 * (frame.js), which keeps every digit of their spread; a Float32Array's lost digits were lost in the caller's storage.
 */
export function precisionWarnings(inputs) {
  const narrow = [];
  for (const [a, cols, name] of inputs) {
    if (!(a instanceof Float32Array) || cols === 0) continue;
    const n = a.length / cols;
    for (let c = 0; c < cols; c++) {
      const { lo, hi, magnitude } = columnStats(a, n, cols, c);
      if (magnitude > 0 && hi - lo < PRECISION_SPREAD * magnitude) narrow.push(cols > 1 ? `${name}[${c}]` : name);
    }
  }
  if (!narrow.length) return [];
  return [
    {
      code: 'precision',
      message:
        `${narrow.join(', ')} ${narrow.length > 1 ? 'vary' : 'varies'} by less than 1e-5 of ${narrow.length > 1 ? 'their' : 'its'} ` +
        'magnitude in float32 storage, which keeps few of the significant digits of the spread: pass a Float64Array or an ' +
        'array of numbers (centred in double before the float32 pass), or subtract an offset before storing in float32.',
    },
  ];
}

/** A selection's generator (bandwidth.js) whose result gains `warnings` for the sample `s` it selected for. */
export function* withSelectionWarnings(steps, s) {
  const result = yield* steps;
  // Mixed data: the continuous columns' bandwidths (s.x holds those columns only).
  const bandwidth = s.mixed ? Float64Array.from(s.mixed.continuous, (d) => result.bandwidth[d]) : result.bandwidth;
  result.warnings = fitWarnings({
    x: s.x,
    y: s.y,
    n: s.n,
    dim: s.mixed?.continuous.length ?? s.dim,
    width: s.width,
    bandwidth,
  });
  return result;
}
