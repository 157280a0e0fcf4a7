// Nearest-neighbour span bandwidths for kernelRegression (docs/regression.md, "Span bandwidths"): query i's bandwidth
// is d_i times each dimension's scale, d_i the distance to its k-th nearest sample point in the scaled space, k as R's
// loess counts it (spanNeighbours), grown by √f for a span f above 1 (spanEnlargement).
import { checkResult, describe, KernelAttentionError } from './errors.js';
import { checkOptionNames } from './validate.js';

/** `{ span: f }` (f > 0, finite) as f; null for any other bandwidth value (a number, an array, a name). */
export function readSpan(value, name) {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || ArrayBuffer.isView(value)) return null;
  const proto = Object.getPrototypeOf(value);
  if (!(proto === Object.prototype || proto === null) || !('span' in value)) {
    // {}, an ArrayBuffer, a Map, …
    throw new KernelAttentionError(
      'BadArgument',
      `\`${name}\` must be a positive number, one per dimension, a rule name ` + `or { span }; got ${describe(value)}`,
      name,
    );
  }
  checkOptionNames(value, ['span'], name);
  const { span } = value;
  if (typeof span !== 'number' || !(span > 0 && span < Infinity)) {
    throw new KernelAttentionError(
      'BadBandwidth',
      `\`${name}.span\` must be a finite number > 0, the fraction of sample points in each query's ` +
        `neighbourhood (above 1: every point, the radius grown by √span); got ${describe(span)}`,
      `${name}.span`,
    );
  }
  return span;
}

/** The polynomial degree of each estimator's local fit (R's loess `degree`). */
const DEGREES = { 'nadaraya-watson': 0, 'local-linear': 1, 'local-quadratic': 2 };

/** The columns of a local design of `degree` in `dim` dimensions: 1, dim + 1, (dim + 1)(dim + 2)/2. */
const designColumns = (degree, dim) => (degree === 0 ? 1 : degree === 1 ? dim + 1 : ((dim + 1) * (dim + 2)) / 2);

/**
 * The fewest neighbours a span fit of `degree` counts: the design's columns + 1, as R's loess requires (its ehg136
 * refuses fewer: the farthest counted point weighs 0 under tricube, so the others must outnumber the columns).
 */
export const spanMinimum = (degree, dim) => designColumns(degree, dim) + 1;

/**
 * The neighbour count of span f for `estimator` in `dim` dimensions over n points: ⌊f·n⌋ as R's loess takes it (its
 * lowesd: min(n, floor(n·f)), f·n in double with no allowance), raised to spanMinimum where R would refuse the span,
 * and at most n (so every point above f = 1).
 */
export const spanNeighbours = (span, n, estimator, dim) =>
  Math.min(n, Math.max(Math.floor(span * n), spanMinimum(DEGREES[estimator], dim)));

/**
 * The factor on the k-th neighbour's distance: √f above 1 (R's loess multiplies the squared radius by f, in any
 * dimension; its documentation's f^(1/p) is what the code does in 2-D only), 1 otherwise.
 */
export const spanEnlargement = (span) => Math.sqrt(Math.max(1, span));

/**
 * Each column's scale, as R's loess with normalize = TRUE: in 2-D and above, the standard deviation of its values
 * with the ⌈0.1·n⌉ smallest and largest left out (1 where that is 0 or undefined); 1 in 1-D, where it cannot matter.
 */
export function spanScales(x, n, dim) {
  const scales = new Float64Array(dim).fill(1);
  if (dim === 1) return scales;
  const trim = Math.ceil(0.1 * n);
  for (let d = 0; d < dim; d++) {
    const column = Float64Array.from({ length: n }, (_, i) => x[i * dim + d]).sort();
    const kept = column.subarray(trim, n - trim);
    if (kept.length < 2) continue;
    const mean = kept.reduce((s, v) => s + v, 0) / kept.length;
    const sd = Math.sqrt(kept.reduce((s, v) => s + (v - mean) ** 2, 0) / (kept.length - 1));
    if (sd > 0 && Number.isFinite(sd) && Number.isFinite(Math.fround(sd)) && Math.fround(sd) > 0) scales[d] = sd;
  }
  return scales;
}

/**
 * The heap offset of I doubles d_i for the queries at `qp` (I × dim floats) against the sample at `xp` (n × dim): the
 * distance to the k-th nearest, times `enlarge` (spanEnlargement).
 */
export function spanDistances(engine, heap, { xp, n, qp, I, dim, scale32, k, enlarge, threads }) {
  const out = heap.alloc(Math.max(I, 1) * 8);
  checkResult(engine.kthNeighbourDistances({ x: xp, n, q: qp, I, dim, scale: heap.f32(scale32), k, threads, out }));
  return enlarge === 1 ? out : heap.f64(heap.readF64(out, I).map((d) => d * enlarge));
}
