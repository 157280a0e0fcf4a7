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
    dim: M,
    kernel = 'softmax',
    scale,
    bandwidth = 1,
    mask,
    causal = false,
    groups,
    heads: H = 1,
    empty = 'nan',
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
    if (mask.length === J)
      keyPadding = mask; // when I = J a length-J mask is key padding
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
    I,
    J,
    M,
    H,
    m,
    kernel,
    h,
    empty,
    allowed,
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
    case 'gaussian':
      return -0.5 * sumSquares;
    case 'laplacian':
      return -sumAbs;
    case 'cauchy':
      return -Math.log1p(sumSquares);
    default:
      return logProduct;
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
    for (let j = 0; j < c.J; j++) sum += w[j] = Math.exp(w[j] - max);
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

// ---------------------------------------------------------------------------------------------------------------
// Kernel regression as a linear smoother, from the weighted least-squares definition (Fan & Gijbels 1996, §3.1):
// at a query q the weight of sample j is w_j = ω_j K((q − x_j)/h) (ω the observation weights, ones when absent;
// K the unnormalised kernel exp(log-weight) above). Nadaraya–Watson is the weighted mean, ℓ_j = w_j / Σ w. Local-linear
// is the intercept of the weighted least-squares fit of y on z_j = [1, x_j − q]: with A = Σ_j w_j z_j z_jᵀ,
// ℓ_j = e₁ᵀ A⁻¹ z_j w_j, solved here by Gaussian elimination with partial pivoting in float64. No guard: callers keep
// to well-spread local designs (minPivotRatio reports how far from singular each one was).

/** Solves A s = b in place (A p×p row-major, copied); returns s. Partial pivoting. */
function solve(A, b, p) {
  const a = Float64Array.from(A);
  const s = Float64Array.from(b);
  for (let c = 0; c < p; c++) {
    let best = c;
    for (let r = c + 1; r < p; r++) if (Math.abs(a[r * p + c]) > Math.abs(a[best * p + c])) best = r;
    if (best !== c) {
      for (let k = 0; k < p; k++) [a[c * p + k], a[best * p + k]] = [a[best * p + k], a[c * p + k]];
      [s[c], s[best]] = [s[best], s[c]];
    }
    for (let r = c + 1; r < p; r++) {
      const f = a[r * p + c] / a[c * p + c];
      for (let k = c; k < p; k++) a[r * p + k] -= f * a[c * p + k];
      s[r] -= f * s[c];
    }
  }
  for (let c = p - 1; c >= 0; c--) {
    let acc = s[c];
    for (let k = c + 1; k < p; k++) acc -= a[c * p + k] * s[k];
    s[c] = acc / a[c * p + c];
  }
  return s;
}

/** Smallest (Cholesky pivot / diagonal entry) over the slope directions of A (p×p, SPD): 1 = orthogonal design. */
function slopePivotRatio(A, p) {
  const l = new Float64Array(p * p);
  let worst = 1;
  for (let c = 0; c < p; c++) {
    let pivot = A[c * p + c];
    for (let k = 0; k < c; k++) pivot -= l[c * p + k] ** 2;
    if (c > 0) worst = Math.min(worst, pivot / A[c * p + c]);
    l[c * p + c] = Math.sqrt(Math.max(pivot, 0));
    for (let r = c + 1; r < p; r++) {
      let acc = A[r * p + c];
      for (let k = 0; k < c; k++) acc -= l[r * p + k] * l[c * p + k];
      l[r * p + c] = acc / l[c * p + c];
    }
  }
  return worst;
}

/**
 * The local design's row z for the offsets u = x_j − q (dim of them): [1] (Nadaraya–Watson), [1, u] (local-linear),
 * [1, u, u_a·u_b for a ≤ b] (local-quadratic: in 2-D 1, u₁, u₂, u₁², u₁u₂, u₂²).
 */
function designRow(estimator, u) {
  if (estimator === 'nadaraya-watson') return [1];
  if (estimator === 'local-linear') return [1, ...u];
  const products = [];
  for (let a = 0; a < u.length; a++) for (let b = a; b < u.length; b++) products.push(u[a] * u[b]);
  return [1, ...u, ...products];
}

/**
 * The linear-smoother fit of y (n × D) on x (n × dim) at the queries xq (I × dim), in float64.
 * options: { dim, kernel = 'gaussian', bandwidth (number or one per dimension), estimator = 'local-linear'
 * ('nadaraya-watson', 'local-linear', 'local-quadratic': designRow), weights }.
 * Returns { mean (I×D), sumSq (Σ_j ℓ_j², I), effectiveKeys ((Σw)²/Σw², I), logDenominator (ln Σ w, I),
 * ell (I×n, the smoother weights ℓ_j(q_i)), minPivotRatio }. Rows with no weight get NaN.
 */
export function referenceLocalFit(x, y, xq, options) {
  const { dim, kernel = 'gaussian', bandwidth, estimator = 'local-linear', weights } = options;
  const c = describeCall(xq, x, { dim, kernel, bandwidth });
  const n = c.J;
  const I = c.I;
  const D = y.length / n;
  const p = designRow(estimator, new Array(dim).fill(0)).length;
  const out = {
    mean: new Float64Array(I * D),
    sumSq: new Float64Array(I),
    effectiveKeys: new Float64Array(I),
    logDenominator: new Float64Array(I),
    ell: new Float64Array(I * n),
    minPivotRatio: 1,
  };
  for (let i = 0; i < I; i++) {
    const logw = new Float64Array(n);
    let max = -Infinity;
    for (let j = 0; j < n; j++) {
      const omega = weights ? weights[j] : 1;
      logw[j] = omega > 0 ? logWeight(c, xq, x, 0, i, j) + Math.log(omega) : -Infinity;
      max = Math.max(max, logw[j]);
    }
    if (max === -Infinity) {
      out.mean.fill(NaN, i * D, (i + 1) * D);
      out.sumSq[i] = NaN;
      out.logDenominator[i] = -Infinity;
      continue;
    }
    const w = logw.map((l) => Math.exp(l - max)); // w_j / e^max: ℓ does not depend on the common factor
    let s0 = 0;
    let s2 = 0;
    for (let j = 0; j < n; j++) {
      s0 += w[j];
      s2 += w[j] * w[j];
    }
    out.effectiveKeys[i] = (s0 * s0) / s2;
    out.logDenominator[i] = max + Math.log(s0);
    // z_j = designRow(x_j − q); A = Σ w z zᵀ; ℓ_j = w_j z_jᵀ A⁻¹ e₁.
    const z = (j) =>
      designRow(
        estimator,
        Array.from({ length: dim }, (_, d) => x[j * dim + d] - xq[i * dim + d]),
      );
    const A = new Float64Array(p * p);
    for (let j = 0; j < n; j++) {
      if (w[j] === 0) continue;
      const v = z(j);
      for (let r = 0; r < p; r++) for (let k = 0; k < p; k++) A[r * p + k] += w[j] * v[r] * v[k];
    }
    if (p > 1) out.minPivotRatio = Math.min(out.minPivotRatio, slopePivotRatio(A, p));
    const e1 = new Float64Array(p);
    e1[0] = 1;
    const g = solve(A, e1, p);
    for (let j = 0; j < n; j++) {
      if (w[j] === 0) continue;
      const v = z(j);
      let dot = 0;
      for (let r = 0; r < p; r++) dot += g[r] * v[r];
      const l = w[j] * dot;
      out.ell[i * n + j] = l;
      out.sumSq[i] += l * l;
      for (let col = 0; col < D; col++) out.mean[i * D + col] += l * y[j * D + col];
    }
  }
  return out;
}

/**
 * The fit at its own sample and what the confidence bands need (cpp/core/stats/regression.h's definitions, in float64),
 * summed over the m observations with ω_i > 0 (a zero weight is the same as leaving the row out):
 * ν = tr L = Σ_i ℓ_i(x_i), ν̃ = tr LᵀL = Σ_i Σ_j ℓ_j(x_i)², rss_c = (m / Σω) Σ_i ω_i (y_ic − ŷ_ic)²,
 * σ²_c = rss_c / max(1, m − 2ν + ν̃). Returns { observations (m), trace, traceSq, rss (D), sigma2 (D) }.
 */
export function referenceFitSummary(x, y, options) {
  const n = x.length / options.dim;
  const D = y.length / n;
  const fit = referenceLocalFit(x, y, x, options);
  const { weights } = options;
  const omega = (i) => (weights ? weights[i] : 1);
  let total = 0;
  let m = 0;
  for (let i = 0; i < n; i++) {
    total += omega(i);
    if (omega(i) > 0) m++;
  }
  let trace = 0;
  let traceSq = 0;
  const rss = new Float64Array(D);
  for (let i = 0; i < n; i++) {
    if (!(omega(i) > 0)) continue;
    trace += fit.ell[i * n + i];
    traceSq += fit.sumSq[i];
    for (let col = 0; col < D; col++)
      rss[col] += ((omega(i) * m) / total) * (y[i * D + col] - fit.mean[i * D + col]) ** 2;
  }
  const dof = Math.max(1, m - 2 * trace + traceSq);
  return { observations: m, trace, traceSq, rss, sigma2: rss.map((r) => r / dof), minPivotRatio: fit.minPivotRatio };
}

/**
 * Cleveland's (1979) bisquare robustness on a fixed-bandwidth fit, in float64: fit at the sample with the observation
 * weights ω; then `iterations` times: r = y − ŷ at the sample, s = 6·median |r| over the points with ω > 0 (the mean
 * of the two middle values for an even count), robustness weight (1 − (r/s)²)² for |r| < s else 0, refit with
 * ω × that weight; stops early when s ≤ `exactScale`·range(y). y has one column.
 * Returns { mean (at xq), robustnessWeights (n), iterations }.
 */
export function referenceRobustFit(x, y, xq, options, iterations = 3, exactScale = 1e-5) {
  const n = y.length;
  const omega = options.weights;
  let range = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) range = Math.max(range, y[i] - y[j]);
  let rw = new Array(n).fill(1);
  let weights = omega;
  let done = 0;
  for (; done < iterations; done++) {
    const fitted = referenceLocalFit(x, y, x, { ...options, weights }).mean;
    const abs = [];
    for (let j = 0; j < n; j++) if (!omega || omega[j] > 0) abs.push(Math.abs(y[j] - fitted[j]));
    abs.sort((a, b) => a - b);
    const m = abs.length;
    const s = 6 * (m % 2 === 1 ? abs[(m - 1) / 2] : (abs[m / 2 - 1] + abs[m / 2]) / 2);
    if (!(s > exactScale * range)) break;
    rw = Array.from(y, (v, j) => {
      const u = (v - fitted[j]) / s;
      return Math.abs(u) < 1 ? (1 - u * u) * (1 - u * u) : 0;
    });
    weights = rw.map((r, j) => r * (omega ? omega[j] : 1));
  }
  return {
    mean: referenceLocalFit(x, y, xq, { ...options, weights }).mean,
    robustnessWeights: Float64Array.from(rw),
    iterations: done,
  };
}

/**
 * The local-variance band's standard error (docs/regression.md, "Local variance"), in float64, with the variance
 * smoother's bandwidth `varianceBandwidth` given: r = y − ŷ at the sample; z_j = ln(r_j² + σ̂²/n); g = the
 * local-linear fit of z at `varianceBandwidth`; σ²(q) = max(c·e^g(q), 0.01 σ̂²) with c making the ω-weighted mean of
 * c·e^g(x_j) σ̂²; stderr(q) = √(σ²(q) Σ_j ℓ_j(q)²). y has one column. Returns { stderr, variance } (at xq).
 */
export function referenceLocalBand(x, y, xq, options, varianceBandwidth) {
  const n = y.length;
  const { sigma2 } = referenceFitSummary(x, y, options);
  const s2 = sigma2[0];
  const fitted = referenceLocalFit(x, y, x, options).mean;
  const z = Array.from(y, (v, j) => Math.log((v - fitted[j]) ** 2 + s2 / n));
  const smooth = { ...options, estimator: 'local-linear', bandwidth: varianceBandwidth };
  const atSample = referenceLocalFit(x, z, x, smooth).mean;
  let sum = 0;
  let total = 0;
  for (let j = 0; j < n; j++) {
    const w = options.weights ? options.weights[j] : 1;
    sum += w * Math.exp(atSample[j]);
    total += w;
  }
  const c = (s2 * total) / sum;
  const g = referenceLocalFit(x, z, xq, smooth).mean;
  const fit = referenceLocalFit(x, y, xq, options);
  const variance = g.map((v) => Math.max(c * Math.exp(v), 0.01 * s2));
  return { variance, stderr: variance.map((v, i) => Math.sqrt(v * fit.sumSq[i])) };
}

/**
 * The local-linear (or, with options.estimator 'local-quadratic', local-quadratic) slopes at xq in float64: per query,
 * the weighted least-squares fit of y on designRow(x − q) with the kernel weights of `options` (as referenceLocalFit),
 * and the linear smoother of each slope, ℓ'_dj = w_j e_{d+1}ᵀ A⁻¹ z_j.
 * Returns { slope (I × dim × D, [(i·dim + d)·D + c]), sumSq (Σ_j ℓ'_dj², I × dim) }.
 */
export function referenceLocalSlope(x, y, xq, options) {
  const { dim, kernel = 'gaussian', bandwidth, weights, estimator = 'local-linear' } = options;
  const c = describeCall(xq, x, { dim, kernel, bandwidth });
  const n = c.J;
  const I = c.I;
  const D = y.length / n;
  const p = designRow(estimator, new Array(dim).fill(0)).length;
  const slope = new Float64Array(I * dim * D);
  const sumSq = new Float64Array(I * dim);
  for (let i = 0; i < I; i++) {
    const logw = Array.from({ length: n }, (_, j) => {
      const omega = weights ? weights[j] : 1;
      return omega > 0 ? logWeight(c, xq, x, 0, i, j) + Math.log(omega) : -Infinity;
    });
    const max = Math.max(...logw);
    const w = logw.map((l) => Math.exp(l - max));
    const z = (j) =>
      designRow(
        estimator,
        Array.from({ length: dim }, (_, d) => x[j * dim + d] - xq[i * dim + d]),
      );
    const A = new Float64Array(p * p);
    for (let j = 0; j < n; j++) {
      const v = z(j);
      for (let r = 0; r < p; r++) for (let k = 0; k < p; k++) A[r * p + k] += w[j] * v[r] * v[k];
    }
    for (let d = 0; d < dim; d++) {
      const e = new Float64Array(p);
      e[d + 1] = 1;
      const g = solve(A, e, p);
      for (let j = 0; j < n; j++) {
        const v = z(j);
        const l = w[j] * v.reduce((s, vr, r) => s + vr * g[r], 0);
        sumSq[i * dim + d] += l * l;
        for (let col = 0; col < D; col++) slope[(i * dim + d) * D + col] += l * y[j * D + col];
      }
    }
  }
  return { slope, sumSq };
}

/**
 * The nearest-neighbour span fit in float64, by its definition: k = ⌈span·n⌉ (a product within 1e-7 of an integer
 * counts as it); in 2-D and above each column of x scaled by its trimmed standard deviation (the ⌈0.1·n⌉ smallest and
 * largest values left out, n − 1 denominator; R's loess normalize = TRUE); query i's bandwidth along d is the Euclidean
 * distance, in the scaled space, to its k-th nearest sample point (every distance sorted) times the scale of d.
 * options: { dim, kernel, span, estimator }. Returns { mean (I × D), bandwidths (I × dim) }.
 */
export function referenceSpanFit(x, y, xq, options) {
  const { dim, kernel = 'gaussian', span, estimator = 'local-linear' } = options;
  const n = x.length / dim;
  const I = xq.length / dim;
  const D = y.length / n;
  const scales = Array.from({ length: dim }, (_, d) => {
    if (dim === 1) return 1;
    const trim = Math.ceil(0.1 * n);
    const kept = Array.from({ length: n }, (_, i) => x[i * dim + d])
      .sort((a, b) => a - b)
      .slice(trim, n - trim);
    const mean = kept.reduce((s, v) => s + v, 0) / kept.length;
    return Math.sqrt(kept.reduce((s, v) => s + (v - mean) ** 2, 0) / (kept.length - 1));
  });
  const k = Math.max(1, Math.min(n, Math.ceil(span * n - 1e-7)));
  const mean = new Float64Array(I * D);
  const bandwidths = new Float64Array(I * dim);
  for (let i = 0; i < I; i++) {
    const distances = Array.from({ length: n }, (_, j) =>
      Math.sqrt(scales.reduce((s, sd, d) => s + ((x[j * dim + d] - xq[i * dim + d]) / sd) ** 2, 0)),
    ).sort((a, b) => a - b);
    const h = scales.map((sd) => distances[k - 1] * sd);
    bandwidths.set(h, i * dim);
    const fit = referenceLocalFit(x, y, xq.slice(i * dim, (i + 1) * dim), { dim, kernel, bandwidth: h, estimator });
    mean.set(fit.mean, i * D);
  }
  return { mean, bandwidths };
}
