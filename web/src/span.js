// Nearest-neighbour span bandwidths for kernelRegression (docs/regression.md, "Span bandwidths"): query i's bandwidth
// is d_i times each dimension's scale, d_i the distance to its ⌈f·n⌉-th nearest sample point in the scaled space.
import { checkResult, describe, KernelAttentionError } from './errors.js';
import { checkOptionNames } from './validate.js';

/** `{ span: f }` (0 < f ≤ 1) as f; null for any other bandwidth value (a number, an array, a name). */
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
  if (typeof span !== 'number' || !(span > 0 && span <= 1)) {
    throw new KernelAttentionError(
      'BadBandwidth',
      `\`${name}.span\` must be a number in (0, 1], the fraction of sample points ` +
        `in each query's neighbourhood; got ${describe(span)}`,
      `${name}.span`,
    );
  }
  return span;
}

/** The neighbour count ⌈f·n⌉ (f·n within 1e-7 of an integer counts as that integer: 0.3 · 100 is 30). */
export const spanCount = (span, n) => Math.max(1, Math.min(n, Math.ceil(span * n - 1e-7)));

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

/** The heap offset of I doubles d_i for the queries at `qp` (I × dim floats) against the sample at `xp` (n × dim). */
export function spanDistances(engine, heap, { xp, n, qp, I, dim, scale32, k, threads }) {
  const out = heap.alloc(Math.max(I, 1) * 8);
  checkResult(engine.kthNeighbourDistances({ x: xp, n, q: qp, I, dim, scale: heap.f32(scale32), k, threads, out }));
  return out;
}
