// Interleaved A/B for changes to the build or to template instances (issue 21, download size): one representative
// call of each engine a size cut can touch, on two copies of web/src (each importing its own web/dist), one thread
// each, alternated every round; prints each case's median CPU times and ratio and whether the outputs are bit-identical.
//   node bench/ab-size.mjs <reference web/src> [<web/src under test, default this checkout's>] [rounds, default 11]
import { loadPair } from './interleave.mjs';
import { attentionCase, mulberry32, regressionCase } from './workloads.mjs';

const pair = await loadPair('ab-size.mjs');
const uniform = (n, seed) => {
  const rand = mulberry32(seed);
  return Float32Array.from({ length: n }, () => rand());
};
const a = attentionCase(1024);
const small = attentionCase(2048, { M: 4, D: 2 });
const r = regressionCase(1e4);
const x2 = uniform(2 * 20000, 3);
const y2 = uniform(20000, 4);
const xs = uniform(2000, 5);
const ys = Float32Array.from(xs, (x) => Math.sin(6.28 * x));
const g = attentionCase(512);
const xg = uniform(100000, 7);
const yg = Float32Array.from(xg, (x, i) => Math.sin(6.28 * x) + 0.1 * Math.sin(i));
// A model's cases: fit, `use` it, dispose; the result is what `use` returned.
const withModel = (ka, x, y, options, use) => {
  const m = ka.kernelRegression(x, y, options);
  try {
    return use(m);
  } finally {
    m.dispose();
  }
};
const dOut = uniform(512 * 64, 6);
// loess (R's loess(), float64): x uniform on [0, 10]^d, y = Σ sin x_j + noise, as bench/loess.mjs.
const loessSample = (n, dims, seed) => {
  const rand = mulberry32(seed);
  const x = Float64Array.from({ length: n * dims }, () => 10 * rand());
  const y = Float64Array.from({ length: n }, (_, i) => {
    let s = 0.3 * (rand() - 0.5);
    for (let j = 0; j < dims; j++) s += Math.sin(x[i * dims + j]);
    return s;
  });
  return { x, y };
};
const l5 = loessSample(100000, 1, 8);
const l4 = loessSample(10000, 1, 9);
const l2 = loessSample(20000, 2, 10);
const lq = Float64Array.from({ length: 200 }, (_, i) => 0.05 * i);
// 2-D queries: a 20 × 10 grid inside [1, 9]², (x1, x2) pairs.
const lq2 = Float64Array.from({ length: 400 }, (_, i) =>
  i % 2 ? 1 + Math.floor(i / 40) * 0.8 : 1 + ((i >> 1) % 20) * 0.4,
);
// A loess case: the fit's values and statistics, with `band` its predictInterval at `q`.
const loessCase = (ka, { x, y }, options, q = null) => {
  const m = ka.loess(x, y, options);
  try {
    return [m.fitted, m.enp, m.residualScale, m.oneDelta, m.twoDelta, q && m.predictInterval(q).stderr];
  } finally {
    m.dispose();
  }
};
const statesOf = new Map(); // each API's own two states, for the merge case
const cases = [
  ['loess 1-D interpolate 10⁵ span 0.3', (ka) => loessCase(ka, l5, { span: 0.3, traceHat: 'approximate' }, lq)],
  ['loess 1-D interpolate exact trace 10⁴', (ka) => loessCase(ka, l4, { span: 0.3 }, lq)],
  ['loess 1-D direct 10⁴ span 0.3', (ka) => loessCase(ka, l4, { span: 0.3, surface: 'direct' }, lq)],
  ['loess 1-D symmetric 10⁴ degree 1', (ka) => loessCase(ka, l4, { span: 0.5, degree: 1, family: 'symmetric' }, lq)],
  ['loess 2-D interpolate 2·10⁴', (ka) => loessCase(ka, l2, { dim: 2, span: 0.3, traceHat: 'approximate' }, lq2)],
  ['softmax 1024² dim 64 (wide)', (ka) => ka.attention(a.q, a.k, a.v, { dim: a.M, scale: a.scale, method: 'exact' })],
  ['softmax 2048² dim 4 (narrow)', (ka) => ka.attention(small.q, small.k, small.v, { dim: 4, method: 'exact' })],
  [
    'gaussian 1-D 10⁴²',
    (ka) => ka.attention(r.q, r.k, r.v, { dim: 1, kernel: 'gaussian', bandwidth: r.h, method: 'exact' }),
  ],
  [
    'epanechnikov 1-D 10⁴²',
    (ka) => ka.attention(r.q, r.k, r.v, { dim: 1, kernel: 'epanechnikov', bandwidth: 0.2, method: 'exact' }),
  ],
  [
    'laplacian 2-D 20000² / 4',
    (ka) =>
      ka.attention(x2.subarray(0, 10000), x2, y2, { dim: 2, kernel: 'laplacian', bandwidth: 0.05, method: 'exact' }),
  ],
  [
    'cauchy 2-D width 2',
    (ka) =>
      ka.attention(x2.subarray(0, 8000), x2.subarray(0, 16000), x2.subarray(0, 16000), {
        dim: 2,
        kernel: 'cauchy',
        bandwidth: 0.05,
        method: 'exact',
      }),
  ],
  [
    'sparse gaussian 1-D 10⁴²',
    (ka) => ka.attention(r.q, r.k, r.v, { dim: 1, kernel: 'gaussian', bandwidth: 0.01, method: 'sparse' }),
  ],
  [
    'sparse gaussian 2-D 20000²',
    (ka) => ka.attention(x2, x2, y2, { dim: 2, kernel: 'gaussian', bandwidth: 0.01, method: 'sparse' }),
  ],
  [
    'sparse tricube 2-D 20000²',
    (ka) => ka.attention(x2, x2, y2, { dim: 2, kernel: 'tricube', bandwidth: 0.02, method: 'sparse' }),
  ],
  [
    'sparse laplacian 3-D width 2',
    (ka) =>
      ka.attention(x2.subarray(0, 30000), x2.subarray(0, 30000), x2.subarray(0, 20000), {
        dim: 3,
        kernel: 'laplacian',
        bandwidth: 0.05,
        method: 'sparse',
      }),
  ],
  [
    'sparse cauchy 2-D 400 × 20000',
    (ka) => ka.attention(x2.subarray(0, 800), x2, y2, { dim: 2, kernel: 'cauchy', bandwidth: 0.001, method: 'sparse' }),
  ],
  [
    'sparse gaussian 1-D 10⁴² causal',
    (ka) =>
      ka.attention(r.q, r.k, r.v, { dim: 1, kernel: 'gaussian', bandwidth: 0.01, causal: true, method: 'sparse' }),
  ],
  [
    'sparse uniform 1-D 10⁴²',
    (ka) => ka.attention(r.q, r.k, r.v, { dim: 1, kernel: 'uniform', bandwidth: 0.03, method: 'sparse' }),
  ],
  [
    'sparse epanechnikov 3-D 13333²',
    (ka) =>
      ka.attention(x2.subarray(0, 39999), x2.subarray(0, 39999), y2.subarray(0, 13333), {
        dim: 3,
        kernel: 'epanechnikov',
        bandwidth: 0.08,
        method: 'sparse',
      }),
  ],
  [
    'sparse gaussian 1-D 10⁴² width 2',
    (ka) =>
      ka.attention(r.q, r.k, x2.subarray(0, 20000), { dim: 1, kernel: 'gaussian', bandwidth: 0.01, method: 'sparse' }),
  ],
  [
    'sparse epanechnikov 2-D 20000² width 2',
    (ka) => ka.attention(x2, x2, x2, { dim: 2, kernel: 'epanechnikov', bandwidth: 0.02, method: 'sparse' }),
  ],
  ['top-k 512² k 16', (ka) => ka.attention(g.q, g.k, g.v, { dim: g.M, method: 'top-k', topK: 16 })],
  [
    'top-k gaussian 1-D 500 × 10⁴ k 32',
    (ka) =>
      ka.attention(r.q.subarray(0, 500), r.k, r.v, {
        dim: 1,
        kernel: 'gaussian',
        bandwidth: r.h,
        method: 'top-k',
        topK: 32,
      }),
  ],
  [
    'selectBandwidth exact 1-D 2000',
    (ka) => ka.selectBandwidth(xs, ys, { dim: 1, estimator: 'nadaraya-watson', method: 'exact' }).bandwidth,
  ],
  [
    'selectBandwidth local-linear 1-D 2000',
    (ka) => ka.selectBandwidth(xs, ys, { dim: 1, estimator: 'local-linear' }).bandwidth,
  ],
  ['attentionGradients 512² dim 64', (ka) => ka.attentionGradients(g.q, g.k, g.v, dOut, { dim: 64 })],
  [
    'attentionGradients gaussian 2-D 2000²',
    (ka) =>
      ka.attentionGradients(x2.subarray(0, 4000), x2.subarray(0, 4000), y2.subarray(0, 2000), y2.subarray(2000, 4000), {
        dim: 2,
        kernel: 'gaussian',
        bandwidth: 0.1,
      }),
  ],
  [
    'kernelRegression local-linear 1-D 2000, h given',
    (ka) =>
      withModel(
        ka,
        xs,
        ys,
        { dim: 1, estimator: 'local-linear', bandwidth: 0.05 },
        (m) => m.predictInterval(xs.subarray(0, 500)).mean,
      ),
  ],
  [
    'attentionState + mergeStates + finalizeState 1024² dim 64',
    (ka) => {
      const s1 = ka.attentionState(a.q, a.k.subarray(0, 512 * 64), a.v.subarray(0, 512 * 64), { dim: 64 });
      const s2 = ka.attentionState(a.q, a.k.subarray(512 * 64), a.v.subarray(512 * 64), { dim: 64 });
      return ka.finalizeState(ka.mergeStates(s1, s2));
    },
  ],
  [
    'grid kernelRegression 1-D 10⁵ + predict, h given',
    (ka) =>
      withModel(
        ka,
        xg,
        yg,
        { dim: 1, bandwidth: 0.01, method: 'grid' },
        (m) => m.predictInterval(xg.subarray(0, 20000)).mean,
      ),
  ],
  [
    'selectBandwidth exact 1-D 400 (criterion in double)',
    (ka) => ka.selectBandwidth(xs.subarray(0, 400), ys.subarray(0, 400), { dim: 1, method: 'exact' }).bandwidth,
  ],
  [
    'selectBandwidth local-linear 2-D 1500 exact',
    (ka) => ka.selectBandwidth(x2.subarray(0, 3000), y2.subarray(0, 1500), { dim: 2, method: 'exact' }).bandwidth,
  ],
  [
    'selectBandwidth aicc tricube 1-D 2000',
    (ka) => ka.selectBandwidth(xs, ys, { dim: 1, rule: 'aicc', kernel: 'tricube', method: 'exact' }).bandwidth,
  ],
  ['selectBandwidth grid 1-D 20000', (ka) => ka.selectBandwidth(x2.subarray(0, 20000), y2, { dim: 1 }).bandwidth],
  [
    'lowess 20000',
    (ka) => ka.lowess(Float64Array.from(x2.subarray(0, 20000)), Float64Array.from(y2), { frac: 0.05, delta: 0 }).fitted,
  ],
  [
    'kernelRegression span 0.2 1-D 2000',
    (ka) =>
      withModel(ka, xs, ys, { dim: 1, kernel: 'tricube', bandwidth: { span: 0.2 } }, (m) =>
        m.predict(xs.subarray(0, 500)),
      ),
  ],
  [
    'grid kernelRegression 2-D 50000 + predict, h given',
    (ka) =>
      withModel(
        ka,
        x2.subarray(0, 100000),
        y2.subarray(0, 50000),
        {
          dim: 2,
          bandwidth: 0.05,
          method: 'grid',
        },
        (m) => m.predict(x2.subarray(0, 20000)),
      ),
  ],
  [
    'kernelRegression laplacian 2-D 4000, h given',
    (ka) =>
      withModel(
        ka,
        x2.subarray(0, 8000),
        y2.subarray(0, 4000),
        {
          dim: 2,
          kernel: 'laplacian',
          bandwidth: 0.05,
          method: 'exact',
        },
        (m) => m.predictInterval(x2.subarray(0, 2000)).mean,
      ),
  ],
  [
    'kernelRegression gradient local-linear 1-D 2000',
    (ka) => withModel(ka, xs, ys, { dim: 1, bandwidth: 0.05, method: 'exact' }, (m) => m.gradient(xs)),
  ],
  [
    'selectBandwidth local-linear 2-D 400 (criterion in double)',
    (ka) => ka.selectBandwidth(x2.subarray(0, 800), y2.subarray(0, 400), { dim: 2, method: 'exact' }).bandwidth,
  ],
  [
    'selectBandwidth nadaraya-watson 2-D 1500 exact (scan bound)',
    (ka) =>
      ka.selectBandwidth(x2.subarray(0, 3000), y2.subarray(0, 1500), {
        dim: 2,
        estimator: 'nadaraya-watson',
        method: 'exact',
      }).bandwidth,
  ],
  ['random features 512²', (ka) => ka.attention(g.q, g.k, g.v, { dim: g.M, method: 'random-features', seed: 1 })],
  ['nystrom 1024²', (ka) => ka.attention(a.q, a.k, a.v, { dim: a.M, method: 'nystrom', seed: 1 })],
  // The engines of weights(), states of a distance kernel, the Fourier features, Nyström and the double backward of
  // the other kernels (issue 21: each engine a size cut touches has a case).
  ['weights softmax 1024² dim 64', (ka) => ka.weights(a.q, a.k, { dim: 64 })],
  [
    'weights gaussian 2-D 1000 × 4000',
    (ka) => ka.weights(x2.subarray(0, 2000), x2.subarray(0, 8000), { dim: 2, kernel: 'gaussian', bandwidth: 0.05 }),
  ],
  [
    'weights tricube 1-D 2000² causal',
    (ka) => ka.weights(xs, xs, { dim: 1, kernel: 'tricube', bandwidth: 0.05, causal: true }),
  ],
  [
    'attentionState laplacian 2-D + merge + finalize 4000 × 2·8000',
    (ka) => {
      const o = { dim: 2, kernel: 'laplacian', bandwidth: 0.05 };
      const s1 = ka.attentionState(x2.subarray(0, 8000), x2.subarray(0, 16000), y2.subarray(0, 8000), o);
      const s2 = ka.attentionState(x2.subarray(0, 8000), x2.subarray(16000, 32000), y2.subarray(8000, 16000), o);
      return ka.finalizeState(ka.mergeStates(s1, s2));
    },
  ],
  [
    'mergeStates + finalizeState 1024 × dim 64, states given',
    (ka) => {
      if (!statesOf.has(ka))
        statesOf.set(ka, [
          ka.attentionState(a.q, a.k.subarray(0, 512 * 64), a.v.subarray(0, 512 * 64), { dim: 64 }),
          ka.attentionState(a.q, a.k.subarray(512 * 64), a.v.subarray(512 * 64), { dim: 64 }),
        ]);
      const [s1, s2] = statesOf.get(ka);
      let merged = s1;
      for (let n = 0; n < 20; n++) merged = ka.mergeStates(merged, s2);
      return ka.finalizeState(merged);
    },
  ],
  [
    'random features laplacian 2-D 4000²',
    (ka) =>
      ka.attention(x2.subarray(0, 8000), x2.subarray(0, 8000), y2.subarray(0, 4000), {
        dim: 2,
        kernel: 'laplacian',
        bandwidth: 0.2,
        method: 'random-features',
        seed: 1,
        features: 256,
      }),
  ],
  [
    'nystrom cauchy 2-D 10⁴² causal',
    (ka) =>
      ka.attention(x2.subarray(0, 20000), x2.subarray(0, 20000), y2.subarray(0, 10000), {
        dim: 2,
        kernel: 'cauchy',
        bandwidth: 0.2,
        method: 'nystrom',
        causal: true,
        seed: 1,
      }),
  ],
  [
    'attentionGradients laplacian 2-D 1000² causal',
    (ka) =>
      ka.attentionGradients(x2.subarray(0, 2000), x2.subarray(0, 2000), y2.subarray(0, 1000), y2.subarray(1000, 2000), {
        dim: 2,
        kernel: 'laplacian',
        bandwidth: 0.1,
        causal: true,
      }),
  ],
  [
    'attentionGradients tricube 1-D 2000²',
    (ka) => ka.attentionGradients(xs, xs, ys, ys, { dim: 1, kernel: 'tricube', bandwidth: 0.1 }),
  ],
  [
    'attentionGradients softmax 2048² dim 8 causal',
    (ka) =>
      ka.attentionGradients(
        g.q.subarray(0, 16384),
        g.k.subarray(0, 16384),
        g.v.subarray(0, 16384),
        dOut.subarray(0, 16384),
        {
          dim: 8,
          causal: true,
        },
      ),
  ],
];
const bytes = (v) =>
  ArrayBuffer.isView(v)
    ? Buffer.from(v.buffer, v.byteOffset, v.byteLength)
    : Buffer.from(JSON.stringify(v, (k, x) => (ArrayBuffer.isView(x) ? Array.from(x) : x)));
// The medians of each API's process CPU time per call (user + system, process.cpuUsage), over rounds whose order
// alternates: on a shared 2-core host, wall time also counts the slices other processes take, CPU time much less.
function interleaved({ reference, tested, rounds }, run) {
  const t = { reference: [], tested: [] };
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 ? ['tested', 'reference'] : ['reference', 'tested']) {
      const start = process.cpuUsage();
      run(name === 'tested' ? tested : reference);
      const used = process.cpuUsage(start);
      t[name].push((used.user + used.system) / 1000);
    }
  }
  const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const [a, b] = [median(t.reference), median(t.tested)];
  return {
    line: `CPU ms median reference ${a.toFixed(1)}, tested ${b.toFixed(1)}, tested/reference ${(b / a).toFixed(3)}`,
  };
}

const only = process.env.KA_AB_CASES?.split(',');
for (const [name, run] of cases) {
  if (only && !only.some((o) => name.includes(o))) continue;
  const same = bytes(run(pair.reference)).equals(bytes(run(pair.tested)));
  console.log(`${name}: bit-identical ${same}; ${interleaved(pair, run).line}`);
}
