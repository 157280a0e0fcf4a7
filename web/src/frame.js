// The coordinates the float32 pass works in (docs/design.md, "The frame"): per call (or per model), in double, a shift
// per column of x, the queries and the values, applied while the inputs are converted to float32 for the heap, and
// added back to the results in double. The identities that make it exact: distance kernels see only q − k (shift
// queries and keys together); softmax attention sees q·k, and q·c is constant along a row (shift the keys alone);
// every normalised smoother's weights sum to 1 (shift the values, add the shift to the output).

/**
 * Per column of the rows × cols row-major `arrays` (one or more, same cols), the shift to subtract: 0 where the
 * columns' range [lo, hi] contains 0 (float32 then already holds every value to 2⁻²⁴ of the spread, and the bytes
 * are those of an unshifted call), else the midrange rounded to a multiple of the largest power of two not above
 * the half-range. The midrange, not the mean: it minimises the largest |v − c|, which is what float32's absolute
 * error follows, and one outlier cannot push it outside the data. The rounding keeps few significant bits in the
 * shift, so that for float32 inputs v − c is usually exact. Returns null when every shift is 0.
 */
export function chooseShift(cols, ...arrays) {
  const lo = new Float64Array(cols).fill(Infinity);
  const hi = new Float64Array(cols).fill(-Infinity);
  for (const a of arrays) {
    if (!a) continue;
    for (let i = 0; i < a.length; i += cols) {
      for (let c = 0; c < cols; c++) {
        const v = a[i + c];
        if (v < lo[c]) lo[c] = v;
        if (v > hi[c]) hi[c] = v;
      }
    }
  }
  let shift = null;
  for (let c = 0; c < cols; c++) {
    if (!(lo[c] > 0 || hi[c] < 0)) continue;  // contains 0, or no rows
    const mid = 0.5 * lo[c] + 0.5 * hi[c];
    const half = 0.5 * hi[c] - 0.5 * lo[c];
    const unit = half > 0 ? 2 ** Math.floor(Math.log2(half)) : 0;
    shift ??= new Float64Array(cols);
    shift[c] = unit > 0 && Number.isFinite(mid / unit) ? Math.round(mid / unit) * unit : mid;
  }
  return shift;
}

/**
 * The frame of an attention call (options.js's call description): `keys` and `queries` shifts per dimension (the
 * same for a distance kernel, chosen from both; the keys' alone for softmax, whose queries stay as given) and a
 * `values` shift per column. `states`: the shift of attentionState(), which every shard of keys must agree on: a
 * distance kernel's comes from the queries (which the shards share); softmax keys and the values stay unshifted,
 * since the state's log-max and value sums would carry the shift (docs/attention.md, "Partial states").
 * The values stay unshifted under `empty: 'zero'`, whose empty rows must read 0, not the shift.
 */
export function attentionFrame(call, distance, { states = false } = {}) {
  const { queries, keys, values, M, D } = call;
  let x;
  if (distance) x = states ? chooseShift(M, queries) : chooseShift(M, queries, keys);
  else x = states ? null : chooseShift(M, keys);
  const v = states || values === undefined || call.empty === 'zero' ? null : chooseShift(D, values);
  return { queries: distance ? x : null, keys: x, values: v };
}

/**
 * The frame of a regression sample (x: n × dim, y: n × width): one shift per dimension for x and the queries, one per
 * column of y (none under `empty: 'zero'`, as attentionFrame()).
 */
export function sampleFrame(x, dim, y, width, empty = 'nan') {
  return { x: chooseShift(dim, x), y: empty === 'zero' ? null : chooseShift(width, y) };
}

/** `a` (rows × cols) minus `shift` per column (null: none), as a new Float32Array, in one pass. */
export function shifted32(a, cols, shift) {
  if (!shift) return Float32Array.from(a);
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i += cols) {
    for (let c = 0; c < cols; c++) out[i + c] = a[i + c] - shift[c];
  }
  return out;
}

/** Adds `shift` per column back to `a` (rows × cols) in place (a Float32Array rounds once, from the double sum). */
export function addBack(a, cols, shift) {
  if (!shift) return a;
  for (let i = 0; i < a.length; i += cols) {
    for (let c = 0; c < cols; c++) a[i + c] += shift[c];
  }
  return a;
}

/** A Float64Array of the float32 results `a` (rows × cols) with `shift` added back per column, in double. */
export function back64(a, cols, shift) {
  const out = Float64Array.from(a);
  return addBack(out, cols, shift);
}
