// Interleaved A/B of centred arithmetic (web/src/frame.js) where a shift is applied: inputs off the origin, so the
// tested copy shifts them in its float32 copy and the reference copy does not. Inputs 10 + [0, 1] (and softmax keys
// 3 + [0, 1]) keep both copies' float32 problems alike, so the times compare the same work. One thread each.
//   node bench/ab-centring.mjs <reference web/src> [<web/src under test, default this checkout's>] [rounds, default 11]
import { interleaved, loadPair } from './interleave.mjs';
import { mulberry32 } from './workloads.mjs';

const pair = await loadPair('ab-centring.mjs');
const rand = mulberry32(7);
const from = (n, f) => Float64Array.from({ length: n }, f);

const n = 10000;
const k = from(n, () => 10 + rand());
const v = Float64Array.from(k, (t) => Math.sin(6 * t));
const q = from(n, () => 10 + rand());
const [M, N] = [64, 4096];
const qs = Float32Array.from({ length: N * M }, () => rand() - 0.5);
const ks = Float32Array.from({ length: N * M }, () => 3 + rand());
const vs = Float32Array.from({ length: N * M }, () => rand() - 0.5);
const x = from(20000, () => 10 + rand());
const y = Float64Array.from(x, (t) => Math.sin(6 * t) + 0.2 * rand());
const xq = from(2000, (_, i) => 10 + i / 1999);
const [xs, ys] = [x.subarray(0, 2000), y.subarray(0, 2000)];

const cases = [
  [
    'attention gaussian 1-D 10⁴ × 10⁴, queries and keys shifted',
    (ka) => ka.attention(q, k, v, { dim: 1, kernel: 'gaussian', bandwidth: 0.05, method: 'exact' }),
  ],
  ['attention softmax 4,096², M = D = 64, keys shifted', (ka) => ka.attention(qs, ks, vs, { dim: M, method: 'exact' })],
  [
    'kernelRegression local-linear n = 2·10⁴, fit + predictInterval at 2,000, x and y shifted',
    (ka) => {
      const model = ka.kernelRegression(x, y, { dim: 1, bandwidth: 0.02, method: 'exact' });
      try {
        return model.predictInterval(xq).mean;
      } finally {
        model.dispose();
      }
    },
  ],
  [
    'selectBandwidth local-linear CV, n = 2,000, x and y shifted',
    (ka) => ka.selectBandwidth(xs, ys, { dim: 1, estimator: 'local-linear' }).bandwidth,
  ],
];
for (const [id, run] of cases) console.log(`${id}: ${interleaved(pair, run).line}`);
