// Approximate attention with a reported error: `node node_modules/kernel-attention/examples/approximations.mjs`.
import { init } from '../web/src/index.js';

const ka = await init();

// 2,000 tokens of width 32 (keys = queries) and 4 value columns, from a seeded generator.
let seed = 11;
const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5;
const tokens = Float32Array.from({ length: 2000 * 32 }, random);
const values = Float32Array.from({ length: 2000 * 4 }, random);
const options = { dim: 32, causal: true };

const exact = ka.attention(tokens, tokens, values, options);
for (const method of ['random-features', 'nystrom']) {
  const run = ka.attentionWithInfo(tokens, tokens, values, { ...options, method, tolerance: 1e-2, seed: 1 });
  let sum = 0;
  run.output.forEach((o, n) => (sum += (o - exact[n]) ** 2));
  const measured = Math.sqrt(sum / exact.length) / 1;  // the values span about 1
  console.log(`${method}: ${run.features ?? run.landmarks} ${run.features ? 'features' : 'landmarks'}, ` +
    `estimated error ${run.errorEstimate.toExponential(2)}, measured ${measured.toExponential(2)}`);
}
