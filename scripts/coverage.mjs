// Measured coverage of predictInterval's global and local variance bands on a heteroscedastic design (the table of
// docs/regression.md, "Local variance"). Usage: node scripts/coverage.mjs [--replications R] [--n N] [--seed S]
//
// Design: x_j = (j + ½)/n on [0, 1], y_j = f(x_j) + sd(x_j)·ε_j with f(x) = sin 2πx, sd(x) = 0.1·(1 + 4x) (5× from
// left to right) and ε_j standard normal; local-linear, gaussian kernel, fixed bandwidth h = 0.05 (a fixed h makes
// the band's target well defined: E f̂(q) = Σ_j ℓ_j(q) f(x_j), the smoother applied to the noiseless f, computed by
// fitting f itself). Each replication draws new noise and asks for the band at `points` evenly spaced queries
// q_i = (i + ½)/points; coverage is the share of (replication, query) pairs whose band holds E f̂(q), averaged over
// all queries and over each third of [0, 1].
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { init } from '../web/src/index.js';

const f = (x) => Math.sin(2 * Math.PI * x);
const sd = (x) => 0.1 * (1 + 4 * x);

/** A small seeded generator of standard normals (mulberry32 + Box–Muller). */
function normals(seed) {
  let a = seed >>> 0;
  const uniform = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

/**
 * Runs the simulation; returns { design, global, local }, each band's { average, thirds: [3] } coverage, and the
 * local band's median variance bandwidth.
 */
export async function coverage({
  n = 200,
  replications = 1000,
  points = 60,
  seed = 1,
  bandwidth = 0.05,
  level = 0.95,
} = {}) {
  const ka = await init({ threads: 1 });
  const x = Float64Array.from({ length: n }, (_, j) => (j + 0.5) / n);
  const q = Float64Array.from({ length: points }, (_, i) => (i + 0.5) / points);
  const options = { dim: 1, kernel: 'gaussian', estimator: 'local-linear', bandwidth };
  const noiseless = ka.kernelRegression(x, x.map(f), options);
  const target = Float64Array.from(noiseless.predict(q));
  noiseless.dispose();
  const third = (i) => Math.min(2, Math.floor(3 * q[i]));
  const counts = { global: [0, 0, 0], local: [0, 0, 0] };
  const perThird = [0, 0, 0];
  for (let i = 0; i < points; i++) perThird[third(i)] += replications;
  const bandwidths = [];
  const noise = normals(seed);
  for (let r = 0; r < replications; r++) {
    const y = x.map((v) => f(v) + sd(v) * noise());
    const model = ka.kernelRegression(x, y, options);
    for (const variance of ['global', 'local']) {
      const band = model.predictInterval(q, { level, variance });
      for (let i = 0; i < points; i++)
        if (band.lower[i] <= target[i] && target[i] <= band.upper[i]) counts[variance][third(i)]++;
    }
    bandwidths.push(model.localVariance.bandwidth[0]);
    model.dispose();
  }
  const summary = (c) => ({
    average: (c[0] + c[1] + c[2]) / (points * replications),
    thirds: c.map((k, t) => k / perThird[t]),
  });
  bandwidths.sort((a, b) => a - b);
  return {
    design: { n, replications, points, seed, bandwidth, level },
    global: summary(counts.global),
    local: summary(counts.local),
    varianceBandwidthMedian: bandwidths[Math.floor(replications / 2)],
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { replications: { type: 'string' }, n: { type: 'string' }, seed: { type: 'string' } },
  });
  const number = (v, d) => (v === undefined ? d : Number(v));
  const result = await coverage({
    n: number(values.n, 200),
    replications: number(values.replications, 1000),
    seed: number(values.seed, 1),
  });
  const pct = (v) => `${(100 * v).toFixed(1)} %`;
  const d = result.design;
  console.log(
    `n = ${d.n}, ${d.replications} replications, ${d.points} query points, seed ${d.seed}, h = ${d.bandwidth}, level ${d.level}`,
  );
  console.log('| band | average over x | x in [0, 1/3) | [1/3, 2/3) | [2/3, 1] |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const name of ['global', 'local']) {
    const c = result[name];
    console.log(`| ${name} | ${pct(c.average)} | ${c.thirds.map(pct).join(' | ')} |`);
  }
  console.log(`median variance bandwidth (local): ${result.varianceBandwidthMedian.toPrecision(3)}`);
}
