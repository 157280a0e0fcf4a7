// The benchmark cases (seeded float32 inputs) and the float64 two-pass reference every contender is checked against.
// The reference loops are also the "naive JS" contender: what one would write by hand, in float64, with no tricks.

/** mulberry32: a seeded PRNG giving floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal draws by Box–Muller (1 − u keeps log away from 0). */
export function normal(rand) {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

const filled = (n, draw) => Float32Array.from({ length: n }, draw);

/**
 * Workload A: softmax attention, queries/keys/values I×M, J×M, J×D with standard normal entries, default scale
 * 1/√M. Work is counted as 2·I·J·(M + D) floating-point operations (the two matrix products).
 */
export function attentionCase(n, { M = 64, D = 64, seed = 1 } = {}) {
  const rand = mulberry32(seed);
  const draw = () => normal(rand);
  return {
    id: `A-${n}`,
    kind: 'attention',
    title: `A: attention, I = J = ${n}, M = D = ${M}, softmax`,
    I: n,
    J: n,
    M,
    D,
    scale: 1 / Math.sqrt(M),
    q: filled(n * M, draw),
    k: filled(n * M, draw),
    v: filled(n * D, draw),
    work: 2 * n * n * (M + D),
    unit: 'GFLOP/s',
    perUnit: 1e9,
  };
}

/**
 * Workload B: 1-D Gaussian Nadaraya–Watson regression. Keys x uniform on [0, 1] in random (unsorted) order,
 * values y = sin(2πx) + 0.1·N(0, 1), queries an independent uniform draw on [0, 1], bandwidth 0.05.
 * Work is counted as I·J kernel evaluations.
 */
export function regressionCase(n, { h = 0.05, seed = 2 } = {}) {
  const rand = mulberry32(seed);
  const x = filled(n, rand);
  const y = Float32Array.from(x, (xi) => Math.sin(2 * Math.PI * xi) + 0.1 * normal(rand));
  return {
    id: `B-${n}`,
    kind: 'nw',
    title: `B: 1-D Gaussian Nadaraya–Watson, I = J = ${n.toLocaleString('en')}, h = ${h}`,
    I: n,
    J: n,
    M: 1,
    D: 1,
    h,
    q: filled(n, rand),
    k: x,
    v: y,
    work: n * n,
    unit: 'evals/s',
    perUnit: 1,
  };
}

/**
 * The float64 two-pass answer for query rows [0, rows): per row, every log-weight and their maximum, then
 * Σ exp(l − max)·v / Σ exp(l − max). Returns a Float64Array of rows × D.
 */
export function naiveRows(c, rows) {
  const { J, M, D, q, k, v } = c;
  const logW = new Float64Array(J);
  const out = new Float64Array(rows * D);
  const acc = new Float64Array(D);
  const gaussian = c.kind === 'nw';
  const a = gaussian ? -0.5 / (c.h * c.h) : c.scale;
  for (let i = 0; i < rows; i++) {
    let max = -Infinity;
    for (let j = 0; j < J; j++) {
      let s = 0;
      if (gaussian) {
        const d = q[i] - k[j];
        s = a * d * d;
      } else {
        for (let m = 0; m < M; m++) s += q[i * M + m] * k[j * M + m];
        s *= a;
      }
      logW[j] = s;
      if (s > max) max = s;
    }
    let z = 0;
    acc.fill(0);
    for (let j = 0; j < J; j++) {
      const w = Math.exp(logW[j] - max);
      z += w;
      for (let d = 0; d < D; d++) acc[d] += w * v[j * D + d];
    }
    for (let d = 0; d < D; d++) out[i * D + d] = acc[d] / z;
  }
  return out;
}

/** Rows checked against the reference: every row of small cases, the first 64 of big ones (queries are random). */
export const checkedRows = (c) => (c.I <= 1024 ? c.I : 64);

/** max |out − ref| / max |v| over the checked rows; Infinity for a NaN or a missing row. */
/** max |a − b| over the entries, relative to the range of y: how far two fits of the sample y are apart. */
export function differsOverRange(a, b, y) {
  let lo = Infinity;
  let hi = -Infinity;
  let worst = 0;
  for (let i = 0; i < y.length; i++) {
    lo = Math.min(lo, y[i]);
    hi = Math.max(hi, y[i]);
    worst = Math.max(worst, Math.abs(a[i] - b[i]));
  }
  return worst / (hi - lo);
}

export function relativeError(c, reference, out) {
  let scale = 0;
  for (const x of c.v) scale = Math.max(scale, Math.abs(x));
  let worst = 0;
  for (let n = 0; n < reference.length; n++) {
    const e = Math.abs(out[n] - reference[n]); // NaN for a NaN or a missing entry
    if (Number.isNaN(e)) return Infinity;
    if (e > worst) worst = e;
  }
  return worst / scale;
}
