// Warnings on fitted models and bandwidth selections: what the numbers cannot say themselves (docs/regression.md,
// "Warnings"). Each is { code, message }; an empty array when nothing is wrong.
import { checkResult } from './errors.js';
import { isOwnCopy } from './sample.js';

/** The warning codes, in the order they are reported. */
export const WARNING_CODES = ['interpolating', 'precision', 'guard', 'sparse-points'];

// An input stored in float32 whose spread is below this share of its magnitude kept few significant bits there.
const PRECISION_SPREAD = 1e-5;
// A fit with this share of n effective parameters, or more, is (nearly) interpolating its sample.
const INTERPOLATING_SHARE = 0.9;
// 'guard': more than this share of the fitted values moved by the singular-design guard (the core's count).
const GUARD_SHARE = 0.01;
// 'sparse-points': a search's choice lies within this factor above a bandwidth it scored +inf, and spans at least
// SPARSE_SPACINGS median spacings along some axis (nearer the spacing, every point runs out of neighbours alike:
// 'interpolating', yearly sunspots' h = 0.26 years).
const SPARSE_EDGE = 0.9;
const SPARSE_SPACINGS = 10;

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

/**
 * [] or the 'sparse-points' warning for a selection ({ rule, curve }: dim bandwidths an evaluation) that chose `h`:
 * where a CV or AICc search of continuous columns (not `mixed`: its curve holds λ too) chose within 10 % above a
 * bandwidth it scored +inf, the criterion was infinite just below (a held-out point with too few neighbours in reach
 * for its local polynomial), and the choice is the smallest bandwidth where it is not: set by the sample's most
 * isolated points (a skewed x's long tail), not by the bulk of the data, where it spans many of x's median spacings
 * (`spacings`).
 */
export function sparsePointsWarnings(selection, h, { dim, spacings, estimator, mixed }) {
  if (!selection || mixed || (selection.rule !== 'cv' && selection.rule !== 'aicc')) return [];
  const { curve } = selection;
  const evaluations = curve.scores.length;
  const wide = Array.from({ length: dim }, (_, d) => h[d] >= SPARSE_SPACINGS * spacings[d]).some(Boolean);
  let edge = false;
  for (let k = 0; k < evaluations && wide && !edge; k++) {
    if (curve.scores[k] !== Infinity) continue;
    let below = false;
    let near = true;
    for (let d = 0; d < dim; d++) {
      const b = curve.bandwidths[k * dim + d];
      near &&= b <= h[d] && b >= SPARSE_EDGE * h[d];
      below ||= b < h[d];
    }
    edge = near && below;
  }
  if (!edge) return [];
  const widths = Array.from({ length: dim }, (_, d) =>
    spacings[d] > 0 ? `${fmt(h[d] / spacings[d])} median spacings${dim > 1 ? ` of x[${d}]` : ''}` : null,
  ).filter(Boolean);
  const needs =
    estimator === 'nadaraya-watson'
      ? 'no neighbour within reach'
      : `too few distinct neighbours within reach to fit its local ${estimator === 'local-quadratic' ? 'parabola' : 'line'}`;
  return [
    {
      code: 'sparse-points',
      message:
        `the criterion is infinite for bandwidths just below the chosen ${[...h].map(fmt).join(', ')} (some held-out ` +
        `point has ${needs}), so the choice is the smallest bandwidth where every point has enough: it is set by the ` +
        `sample's most isolated points (a skewed x's long tail), not by the bulk of the data` +
        (widths.length ? ` (${widths.join(', ')})` : '') +
        '. Transform x (log x for a positive, skewed x), ' +
        (estimator === 'nadaraya-watson' ? '' : "use estimator: 'nadaraya-watson' (one neighbour suffices), ") +
        'or a nearest-neighbour span (loess(x, y, { span }) or bandwidth: { span }), whose window widens where the ' +
        'points are sparse.',
    },
  ];
}

/** A selection's generator (bandwidth.js) whose result gains `warnings` for the sample `s` it selected for. */
export function* withSelectionWarnings(engine, steps, s) {
  const result = yield* steps;
  // Mixed data: the continuous columns' bandwidths (s.x holds those columns only).
  const bandwidth = s.mixed ? Float64Array.from(s.mixed.continuous, (d) => result.bandwidth[d]) : result.bandwidth;
  const dim = s.mixed?.continuous.length ?? s.dim;
  const spacings = medianSpacings(engine, s.x, s.n, dim);
  result.warnings = fitWarnings({
    x: s.x,
    y: s.y,
    n: s.n,
    dim,
    width: s.width,
    bandwidth,
    spacings,
  });
  result.warnings.push(
    ...sparsePointsWarnings(result, result.bandwidth, { dim, spacings, estimator: s.estimator, mixed: s.mixed }),
  );
  return result;
}
