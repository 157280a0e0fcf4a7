// The compute worker's attention views of a Gaussian fit: the same fit as softmax attention (the identity), by an
// approximation of attention measured against it, and the weight matrix of a few queries binned over the keys.

const MATRIX_QUERIES = 40; // rows of the attention matrix
const MATRIX_BINS = 200; // its columns: keys, in x order, summed into at most this many bins
const TOP_KEYS = 8;
// The attention view's approximations (docs/approximations.md): one fixed seed, so a shared URL shows the same draw.
const APPROX_SEED = 1;
export const APPROX_METHODS = ['random-features', 'nystrom', 'sparse'];

/** [fn's value, the milliseconds it took]. */
export const timed = (fn) => {
  const t0 = performance.now();
  const value = fn();
  return [value, performance.now() - t0];
};

/**
 * The Gaussian identity: exp(−|q − k|²/2h²) ∝ exp(q'·k') with q' = [(q − c)/h, 1] and k' = [(k − c)/h, −|(k − c)/h|²/2]
 * (per-dimension h, centred at c to keep float32 accuracy), so softmax(Q'K'ᵀ)V is the Gaussian Nadaraya–Watson fit.
 */
export function attentionView(ka, s, queries, h) {
  const { dim, n } = s;
  const c = Array.from({ length: dim }, (_, d) => s.x.reduce((acc, v, i) => (i % dim === d ? acc + v : acc), 0) / n);
  const augment = (points, rows, last) => {
    const out = new Float32Array(rows * (dim + 1));
    for (let i = 0; i < rows; i++) {
      let sq = 0;
      for (let d = 0; d < dim; d++) {
        const u = (points[i * dim + d] - c[d]) / h[d];
        out[i * (dim + 1) + d] = u;
        sq += u * u;
      }
      out[i * (dim + 1) + dim] = last(sq);
    }
    return out;
  };
  const I = queries.length / dim;
  const [kernel, kernelMs] = timed(() => ka.attention(queries, s.x, s.y, { dim, kernel: 'gaussian', bandwidth: h }));
  const [softmax, softmaxMs] = timed(() =>
    ka.attention(
      augment(queries, I, () => 1),
      augment(s.x, n, (sq) => -sq / 2),
      s.y,
      { dim: dim + 1, kernel: 'softmax', scale: 1 },
    ),
  );
  let maxDiff = 0;
  for (let i = 0; i < I; i++) maxDiff = Math.max(maxDiff, Math.abs(kernel[i] - softmax[i]));
  return { kernel, softmax, maxDiff, centre: c, kernelMs, softmaxMs };
}

/**
 * The same Gaussian fit by an approximation of attention (random features or Nyström, which work through the same
 * identity internally, or certified sparsity, which skips the keys out of reach), measured against the exact kernel
 * fit: largest and RMS difference, relative to the range of y as the library's error estimate is. A refusal (too few
 * keys, …) comes back as `error`, and the rest of the fit stands.
 */
export function approximateView(ka, s, queries, h, exact, { method, tolerance }) {
  const options = { dim: s.dim, kernel: 'gaussian', bandwidth: h, method, tolerance, seed: APPROX_SEED };
  let run;
  let ms;
  try {
    [run, ms] = timed(() => ka.attentionWithInfo(queries, s.x, s.y, options));
  } catch (err) {
    return { method, tolerance, seed: APPROX_SEED, error: String((err && err.message) || err) };
  }
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of s.y) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  const range = hi - lo || 1;
  let maxDiff = 0;
  let sq = 0;
  for (let i = 0; i < exact.length; i++) {
    const d = Math.abs(run.output[i] - exact[i]);
    maxDiff = Math.max(maxDiff, d);
    sq += d * d;
  }
  return {
    method: run.method,
    tolerance,
    seed: APPROX_SEED,
    output: run.output,
    errorEstimate: run.errorEstimate,
    ...(run.method === 'sparse'
      ? { count: run.keptKeys, countName: `of ${(run.keptKeys + run.skippedKeys).toLocaleString('en')} weights kept` }
      : { count: run.features ?? run.landmarks, countName: run.features !== undefined ? 'features' : 'landmarks' }),
    exactRows: run.exactRows,
    maxDiff,
    rmsRelative: Math.sqrt(sq / exact.length) / range,
    range,
    ms,
  };
}

/**
 * The queries × keys weight matrix for MATRIX_QUERIES queries, binned over keys, and each query's top keys. A span
 * fit gives each query its own bandwidth (`rowH`: the I × dim bandwidths of the queries), so its rows are computed
 * one by one at those.
 */
export function attentionMatrix(ka, s, queries, h, kernel, rowH = null) {
  const { dim, n } = s;
  const I = queries.length / dim;
  const rows = Math.min(MATRIX_QUERIES, I);
  const pick = Array.from({ length: rows }, (_, r) => Math.round((r * (I - 1)) / Math.max(1, rows - 1)));
  const q = new Float64Array(rows * dim);
  pick.forEach((i, r) => q.set(queries.subarray(i * dim, (i + 1) * dim), r * dim));
  const [w, ms] = timed(() => {
    if (!rowH) return ka.weights(q, s.x, { dim, kernel, bandwidth: h, empty: 'nearest' });
    const all = new Float32Array(rows * n);
    pick.forEach((i, r) => {
      const bandwidth = Array.from(rowH.subarray(i * dim, (i + 1) * dim));
      all.set(ka.weights(q.subarray(r * dim, (r + 1) * dim), s.x, { dim, kernel, bandwidth, empty: 'nearest' }), r * n);
    });
    return all;
  });
  const bins = Math.min(MATRIX_BINS, n);
  const binned = new Float32Array(rows * bins);
  const top = [];
  for (let r = 0; r < rows; r++) {
    const row = w.subarray(r * n, (r + 1) * n);
    for (let j = 0; j < n; j++) binned[r * bins + Math.floor((j * bins) / n)] += row[j];
    const best = [];
    for (let j = 0; j < n; j++) {
      if (best.length < TOP_KEYS || row[j] > best[best.length - 1].w) {
        best.push({ j, w: row[j] });
        best.sort((a, b) => b.w - a.w);
        if (best.length > TOP_KEYS) best.pop();
      }
    }
    top.push(
      best.map(({ j, w: weight }) => ({ x: Array.from(s.x.subarray(j * dim, (j + 1) * dim)), y: s.y[j], w: weight })),
    );
  }
  const binStart = Float64Array.from(
    { length: bins + 1 },
    (_, b) => s.x[Math.min(n - 1, Math.floor((b * n) / bins)) * dim],
  );
  return { rows, bins, queryIndex: pick, queries: q, binned, top, binStart, keys: n, ms };
}
