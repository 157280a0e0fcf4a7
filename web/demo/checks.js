// What the engine (float32) cannot take, checked per column before any fit, with a message that names the column
// and the fix: values beyond float32's range, below its normal range, or an x whose spread it cannot resolve (or
// that has none). The
// library centres every column in double before its float32 pass, so an offset (timestamps, 10⁶ + microseconds)
// costs nothing: only the spread itself must be one float32 resolves.

const FLOAT32_MAX = 3.4028234663852886e38;
const FLOAT32_MIN_NORMAL = 1.1754943508222875e-38;
const sci = (v) => v.toExponential(2).replace('e', '×10^').replace('+', '');

// The smallest spread of x taken: 2²⁴ float32 normal-range steps, so centred values keep float32's 24 bits.
const MIN_SPREAD = FLOAT32_MIN_NORMAL * 2 ** 24;

/**
 * Why column `name` (values at `offset`, every `stride`) cannot go to the engine, which computes in float32, or null.
 * x also needs a spread float32 can resolve once centred: otherwise its points would sit on a few float32 values.
 */
export function float32Problem(values, name, { offset = 0, stride = 1, isX = false } = {}) {
  let lo = Infinity;
  let hi = -Infinity;
  let maxAbs = 0;
  for (let i = offset; i < values.length; i += stride) {
    const v = values[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
    maxAbs = Math.max(maxAbs, Math.abs(v));
  }
  if (maxAbs > FLOAT32_MAX) {
    return (
      `“${name}” holds ${sci(lo < -FLOAT32_MAX ? lo : hi)}, beyond ±3.4×10^38, the largest float32 (the engine computes in ` +
      'float32): divide the column by a power of ten before loading it.'
    );
  }
  if (maxAbs > 0 && maxAbs < FLOAT32_MIN_NORMAL) {
    return (
      `“${name}” holds only values below 1.2×10^-38 in size (largest ${sci(maxAbs)}), under float32’s range (the engine ` +
      'computes in float32): multiply the column by a power of ten before loading it.'
    );
  }
  // One value in every row (a year column of one year's months): no curve along it, only the mean of y.
  if (isX && hi === lo && values.length > stride) {
    return `“${name}” has the same value in every row kept, so there is no curve along it to fit: pick another x column.`;
  }
  if (isX && hi > lo && !(hi - lo >= MIN_SPREAD)) {
    return (
      `“${name}” spans only ${sci(hi - lo)} around ${sci(lo)}, finer than float32 resolves even once centred (the ` +
      'engine computes in float32): multiply the column by a power of ten before loading it.'
    );
  }
  return null;
}

/** The first float32 problem of data's columns (x first), or null. */
export function checkColumns({ names, x, y, dim }) {
  for (let d = 0; d < dim; d++) {
    const problem = float32Problem(x, names[d], { offset: d, stride: dim, isX: true });
    if (problem) return problem;
  }
  return float32Problem(y, names[dim]);
}
