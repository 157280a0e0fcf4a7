// An independent float64 oracle for the JS tests, written from the formulas in web/types/index.d.ts.
// It imports nothing from web/src: naive loops, two passes per row (the row's largest log-weight, then
// exp(l − max) and normalisation), no streaming, no SIMD, no float32.
//
// Layout: queries I×M, keys J×M, values J×D, row-major. With H heads, head h reads columns h·M/H … (h+1)·M/H − 1
// of queries and keys (and the same columns of a per-dimension bandwidth) and columns h·D/H … of values; the output
// is I×D ([token][head][dim]) and weights are H×I×J ([head][query][key]).

/** A seeded PRNG (mulberry32): returns a function giving floats in [0, 1). */
export function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n float32 numbers drawn uniformly from [lo, hi). */
export function randomFloat32(rand, n, lo = -1, hi = 1) {
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * rand();
  return out;
}

/** Largest |a_i − b_i|; NaN matches only NaN (a NaN against a number, or a length mismatch, gives Infinity). */
export function maxAbsDiff(a, b) {
  if (a.length !== b.length) return Infinity;
  let worst = 0;
  for (let n = 0; n < a.length; n++) {
    const x = a[n];
    const y = b[n];
    if (Number.isNaN(x) || Number.isNaN(y)) {
      if (Number.isNaN(x) && Number.isNaN(y)) continue;
      return Infinity;
    }
    worst = Math.max(worst, Math.abs(x - y));
  }
  return worst;
}

/** Largest |x| of an array (NaN entries ignored). */
export function maxAbs(a) {
  let m = 0;
  for (const x of a) if (Math.abs(x) > m) m = Math.abs(x);
  return m;
}

const DISTANCE_KERNELS = ['gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'];

// Reads the options into plain numbers and an admissibility predicate.
function describeCall(queries, keys, options) {
  const {
    dim: M, kernel = 'softmax', scale, bandwidth = 1, mask, causal = false, groups, heads: H = 1, empty = 'nan',
  } = options;
  const I = queries.length / M;
  const J = keys.length / M;
  const m = M / H;
  if (!Number.isInteger(I) || !Number.isInteger(J) || !Number.isInteger(m)) throw new Error('reference: bad shape');
  if (kernel !== 'softmax' && !DISTANCE_KERNELS.includes(kernel)) throw new Error(`reference: kernel ${kernel}`);
  const h = typeof bandwidth === 'number' ? new Array(M).fill(bandwidth) : Array.from(bandwidth);

  let keyPadding = null;
  let general = null;
  const loo = mask === 'loo';
  if (mask !== undefined && !loo) {
    if (mask.length === J) keyPadding = mask;  // when I = J a length-J mask is key padding
    else if (mask.length === I * J) general = mask;
    else throw new Error('reference: bad mask length');
  }
  const allowed = (i, j) => {
    if (causal && j > i) return false;
    if (loo && j === i) return false;
    if (keyPadding && keyPadding[j]) return false;
    if (general && general[i * J + j]) return false;
    if (groups && groups.queries[i] !== groups.keys[j]) return false;
    return true;
  };
  return {
    I, J, M, H, m, kernel, h, empty, allowed,
    scale: scale === undefined ? 1 / Math.sqrt(m) : scale,
  };
}

// log w(q_i, k_j) for head `head`: −Infinity outside a compact kernel's support.
function logWeight(c, queries, keys, head, i, j) {
  const base = head * c.m;
  if (c.kernel === 'softmax') {
    let dot = 0;
    for (let d = base; d < base + c.m; d++) dot += queries[i * c.M + d] * keys[j * c.M + d];
    return c.scale * dot;
  }
  let sumSquares = 0;
  let sumAbs = 0;
  let logProduct = 0;
  for (let d = base; d < base + c.m; d++) {
    const u = (queries[i * c.M + d] - keys[j * c.M + d]) / c.h[d];
    const a = Math.abs(u);
    sumSquares += u * u;
    sumAbs += a;
    if (c.kernel === 'epanechnikov') logProduct += a < 1 ? Math.log(1 - u * u) : -Infinity;
    if (c.kernel === 'tricube') logProduct += a < 1 ? 3 * Math.log(1 - a * a * a) : -Infinity;
    if (c.kernel === 'uniform') logProduct += a <= 1 ? 0 : -Infinity;
  }
  switch (c.kernel) {
    case 'gaussian': return -0.5 * sumSquares;
    case 'laplacian': return -sumAbs;
    case 'cauchy': return -Math.log1p(sumSquares);
    default: return logProduct;
  }
}

// What 'nearest' maximises: scale·q·k for softmax, −Σ u_d² (no support limit) for every distance kernel.
function nearestScore(c, queries, keys, head, i, j) {
  if (c.kernel === 'softmax') return logWeight(c, queries, keys, head, i, j);
  let sumSquares = 0;
  for (let d = head * c.m; d < (head + 1) * c.m; d++) {
    const u = (queries[i * c.M + d] - keys[j * c.M + d]) / c.h[d];
    sumSquares += u * u;
  }
  return -sumSquares;
}

// The J weights of query i in head `head`, following the empty-row policy; null means a row of NaN.
function rowWeights(c, queries, keys, head, i) {
  const w = new Float64Array(c.J).fill(-Infinity);
  let max = -Infinity;
  for (let j = 0; j < c.J; j++) {
    if (!c.allowed(i, j)) continue;
    w[j] = logWeight(c, queries, keys, head, i, j);
    if (w[j] > max) max = w[j];
  }
  if (max > -Infinity) {
    let sum = 0;
    for (let j = 0; j < c.J; j++) sum += (w[j] = Math.exp(w[j] - max));
    for (let j = 0; j < c.J; j++) w[j] /= sum;
    return w;
  }
  // Empty row: no admissible key.
  if (c.empty === 'nan') return null;
  if (c.empty === 'error') throw new Error(`reference: query ${i} (head ${head}) has no admissible key`);
  w.fill(0);
  if (c.empty === 'zero') return w;
  // 'nearest': the mask-allowed keys with the best nearest score share the weight; zeros if the masks allow none.
  let best = -Infinity;
  const score = new Float64Array(c.J).fill(-Infinity);
  for (let j = 0; j < c.J; j++) {
    if (!c.allowed(i, j)) continue;
    score[j] = nearestScore(c, queries, keys, head, i, j);
    if (score[j] > best) best = score[j];
  }
  let count = 0;
  for (let j = 0; j < c.J; j++) if (c.allowed(i, j) && score[j] === best) count++;
  for (let j = 0; j < c.J; j++) if (c.allowed(i, j) && score[j] === best) w[j] = 1 / count;
  return w;
}

/** The normalised weights, a Float64Array of H·I·J laid out [head][query][key]. */
export function referenceWeights(queries, keys, options) {
  const c = describeCall(queries, keys, options);
  const out = new Float64Array(c.H * c.I * c.J);
  for (let head = 0; head < c.H; head++) {
    for (let i = 0; i < c.I; i++) {
      const w = rowWeights(c, queries, keys, head, i);
      const at = (head * c.I + i) * c.J;
      for (let j = 0; j < c.J; j++) out[at + j] = w ? w[j] : NaN;
    }
  }
  return out;
}

/** f(q_i) = Σ_j w_ij v_j per head, a Float64Array of I·D laid out [token][head][dim]. */
export function referenceAttention(queries, keys, values, options) {
  const c = describeCall(queries, keys, options);
  const D = values.length / c.J;
  const width = D / c.H;
  if (!Number.isInteger(D) || !Number.isInteger(width)) throw new Error('reference: bad values shape');
  const out = new Float64Array(c.I * D);
  for (let head = 0; head < c.H; head++) {
    for (let i = 0; i < c.I; i++) {
      const w = rowWeights(c, queries, keys, head, i);
      for (let d = head * width; d < (head + 1) * width; d++) {
        let acc = 0;
        if (w) for (let j = 0; j < c.J; j++) if (w[j] !== 0) acc += w[j] * values[j * D + d];
        out[i * D + d] = w ? acc : NaN;
      }
    }
  }
  return out;
}
