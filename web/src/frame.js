// The coordinates the float32 pass works in (docs/design.md, "The frame"): per call (or per model), in double, a shift
// per column of x and the queries (and, for the regressions, of y), applied while the inputs are converted to float32
// for the heap, and added back to the results in double. The identities that make it exact: distance kernels see only
// q − k (shift queries and keys together); softmax attention sees q·k, and q·c is constant along a row (shift the keys
// alone); every normalised smoother's weights sum to 1 (shift y, add the shift to the fit).

// Shift where the largest |v| = |mid| + half is at least 4·half: centring then gains at least 2 bits.
const MIN_GAIN = 3;
// No shift beyond 2⁹⁶ (7.9e28): a query that the shift's choice did not see (a model's, a state's key) then stays
// within float32 range after it (|q − c| < FLT_MAX + 2¹⁰³ rounds to FLT_MAX at most, never to infinity).
const MAX_SHIFT = 2 ** 96;

/**
 * Per column of the rows × cols row-major `arrays` (one or more, same cols), the shift to subtract: the midrange
 * rounded to a multiple of the largest power of two not above the half-range, where that gains at least 2 bits, i.e.
 * where the largest |v| is at least 4 half-ranges; else 0 (float32 already holds every value to within 4 of its steps
 * at the spread's scale, and the call keeps the bytes of an unshifted one: data on [0, 1] or around 0 are not moved).
 * The midrange, not the mean: it minimises the largest |v − c|, which is what float32's absolute error follows, and
 * one outlier cannot push it outside the data. The rounding keeps few significant bits in the shift, so that for
 * float32 inputs v − c is usually exact. Returns null when every shift is 0.
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
    const mid = 0.5 * lo[c] + 0.5 * hi[c];
    const half = 0.5 * hi[c] - 0.5 * lo[c];
    // Near the origin, no rows, or a constant column (already exact: its differences are 0, and a rule's fallback for
    // a constant column reads its magnitude).
    if (!(Math.abs(mid) >= MIN_GAIN * half) || half === 0 || Math.abs(mid) > MAX_SHIFT) continue;
    const unit = 2 ** Math.floor(Math.log2(half));
    shift ??= new Float64Array(cols);
    shift[c] = unit > 0 && Number.isFinite(mid / unit) ? Math.round(mid / unit) * unit : mid;
  }
  return shift;
}

/**
 * The frame of an attention call (options.js's call description): `keys` and `queries` shifts per dimension, the same
 * for a distance kernel, chosen from both; the keys' alone for softmax, whose queries stay as given. With `states`,
 * the frame of attentionState(), which every shard of keys must agree on: a distance kernel's comes from the queries
 * (which the shards share), and softmax keys stay unshifted, since a state's log-max would carry q·c
 * (docs/design.md, "Partial states").
 * `values`: a shift per value column, for calls whose values did not come as a Float32Array (`call.values64`: a
 * Float64Array, an array of numbers): their outputs are Float64Array, in double, as a regression's are (outputOf()),
 * so values around 1.7e9 come back to float32's precision on their spread, not on their magnitude. A Float32Array's
 * values are not shifted: its outputs are float32 in the values' units, already held to that type's own relative
 * precision. States and gradients keep their values unshifted (`values: false`): a state's sums, merged across
 * shards, stay in the caller's units.
 */
export function attentionFrame(call, distance, { states = false, values = !states } = {}) {
  const { queries, keys, M } = call;
  let x;
  if (distance) x = states ? chooseShift(M, queries) : chooseShift(M, queries, keys);
  else x = states ? null : chooseShift(M, keys);
  const v = values && call.values64 ? chooseShift(call.D, call.values) : null;
  return { queries: distance ? x : null, keys: x, values: v };
}

/**
 * An attention call's outputs (`out`, I × D float32 from the heap, in its frame) as the call returns them: as they
 * are for Float32Array values, else a Float64Array with the values' shift added back and, under `empty: 'zero'`, the
 * empty rows (which ran under coreEmpty()'s 'nan') as zeros.
 */
export function outputOf(out, call) {
  if (!call.values64) return out;
  return back64(out, call.D, call.frame.values, call.empty);
}

/**
 * The frame of a regression sample (x: n × dim, y: n × width): one shift per dimension for x and the queries, one per
 * column of y. An empty row under `empty: 'zero'` must read 0, not y's shift: with y shifted, the core runs such a
 * call under 'nan' (coreEmpty()) and back64() writes the zeros, so that the other rows are the same bytes under every
 * policy ('nearest' always finds a key here: a regression has no masks).
 */
export function sampleFrame(x, dim, y, width) {
  return { x: chooseShift(dim, x), y: chooseShift(width, y) };
}

/**
 * The empty policy the core runs under for a call that asks for `empty` with its outputs' column shifts `shift` (a
 * regression's y, attention's values; null: none).
 */
export const coreEmpty = (empty, shift) => (shift && empty === 'zero' ? 'nan' : empty);

/** `a` (rows × cols) minus `shift` per column (null: none), as a new Float32Array, in one pass. */
export function shifted32(a, cols, shift) {
  if (!shift) return Float32Array.from(a);
  const out = new Float32Array(a.length);
  for (let i = 0; i < a.length; i += cols) {
    for (let c = 0; c < cols; c++) out[i + c] = a[i + c] - shift[c];
  }
  return out;
}

/**
 * A Float64Array of float32 results `a` (rows × cols) with the column shifts `shift` (null: none) added back, in
 * double; `empty` is the policy the call asked for (its empty rows ran under coreEmpty()'s).
 */
export function back64(a, cols, shift, empty) {
  const out = Float64Array.from(a);
  if (!shift) return out;
  for (let i = 0; i < out.length; i += cols) {
    for (let c = 0; c < cols; c++) out[i + c] += shift[c];
  }
  if (empty === 'zero') for (let i = 0; i < out.length; i++) if (Number.isNaN(out[i])) out[i] = 0;
  return out;
}
