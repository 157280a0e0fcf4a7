// Certified sparse attention: `node node_modules/kernel-attention/examples/sparse.mjs`.
import { init } from '../web/src/index.js';

const ka = await init();

// 20,000 noisy samples of a curve on [0, 1]² and 500 points to estimate at, from a seeded generator.
let seed = 5;
const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
const x = Float32Array.from({ length: 20000 * 2 }, random);
const y = Float32Array.from({ length: 20000 }, (_, i) => Math.sin(6 * x[2 * i]) * Math.cos(4 * x[2 * i + 1]) + 0.1 * random());
const at = Float32Array.from({ length: 500 * 2 }, random);

for (const kernel of ['gaussian', 'epanechnikov']) {
  const options = { dim: 2, kernel, bandwidth: 0.02 };
  const exact = ka.attention(at, x, y, options);
  const run = ka.attentionWithInfo(at, x, y, { ...options, method: 'sparse', tolerance: 1e-3 });
  let worst = 0;
  run.output.forEach((f, i) => (worst = Math.max(worst, Math.abs(f - exact[i]))));
  const range = 2.1;  // the values span about [-1, 1.1]
  console.log(`${kernel}: ${(100 * run.keptKeys / (500 * 20000)).toFixed(1)} % of the pairs visited, ` +
    `guaranteed error ≤ ${run.errorEstimate.toExponential(1)}, measured ${(worst / range).toExponential(1)} (of the range)`);
}
