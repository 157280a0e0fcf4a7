// Warnings on fitted models and bandwidth selections: what the numbers cannot say themselves (docs/regression.md,
// "Warnings"). Each is { code, message }; an empty array when nothing is wrong.
import { checkResult } from './errors.js';
import { isOwnCopy } from './sample.js';

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

// The spacings of a model's own sample copy (sample.js ownCopy: never written), by copy: a default fit's selection and
// its model read the same copy (a sort in the module each, 37 ms at 10⁶ points in WebAssembly).
const spacingsOfCopies = new WeakMap();

/**
 * The median gap between the sorted distinct values of each of the dim columns of x (n × dim, row-major; 0 where all
 * are equal), as the core's search computes its lower end (bandwidth.h's median_spacing: a radix sort in the module,
 * where a sort in JS cost a fit's first call 0.15 s at 10⁵ points until it was optimised).
 */
export function medianSpacings(engine, x, n, dim) {
  const kept = spacingsOfCopies.get(x);
  if (kept && kept.n === n && kept.dim === dim) return Float64Array.from(kept.spacings);
  const spacings = engine.withHeap((heap) => {
    const xp = heap.f64(x);
    const out = heap.alloc(8);
    return Float64Array.from({ length: dim }, (_, c) => {
      checkResult(engine.medianSpacing({ x: xp + 8 * c, n, stride: dim, out }));
      return heap.readF64(out, 1)[0];
    });
  });
  if (isOwnCopy(x)) spacingsOfCopies.set(x, { n, dim, spacings: Float64Array.from(spacings) });
  return spacings;
}

const fmt = (v) => Number(v.toPrecision(4));

/**
 * The warnings for a fit or a selection on the sample x (n × dim) → y (n × width) with bandwidths h (dim values):
 * - 'interpolating': effectiveParameters (ν = tr L, when known) >= 0.9·n, or h_d below the median spacing of x_d;
 * - 'precision': a column of x or y, as the caller stored it (`stored`: { x, y }; default x and y), that is a
 *   Float32Array and spreads over less than 1e-5 of its magnitude (precisionWarnings());
 * - 'guard': guardChanged (the core's count of fitted values the guard moved by > 1e-3 of range(y)) > 1 % of n; its
 *   advice names the lower degree of `estimator` (the guard pulls toward it).
 * `spacings`: the dim median spacings of x (medianSpacings()). `precision` (the 'precision' warnings), when given,
 * stands for those computed from `stored`: a model refitted at another bandwidth (withBandwidth) reuses its sample's.
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
  spacings,
  precision = null,
}) {
  const warnings = [];
  const reasons = [];
  if (effectiveParameters !== undefined && effectiveParameters >= INTERPOLATING_SHARE * n) {
    reasons.push(`${fmt(effectiveParameters)} effective parameters on ${n} points`);
  }
  for (let d = 0; d < dim; d++) {
    const spacing = spacings[d];
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
export function* withSelectionWarnings(engine, steps, s) {
  const result = yield* steps;
  // Mixed data: the continuous columns' bandwidths (s.x holds those columns only).
  const bandwidth = s.mixed ? Float64Array.from(s.mixed.continuous, (d) => result.bandwidth[d]) : result.bandwidth;
  const dim = s.mixed?.continuous.length ?? s.dim;
  result.warnings = fitWarnings({
    x: s.x,
    y: s.y,
    n: s.n,
    dim,
    width: s.width,
    bandwidth,
    spacings: medianSpacings(engine, s.x, s.n, dim),
  });
  return result;
}
