// Interleaved A/B of exact bandwidth searches (selectBandwidth, method 'exact': every evaluation runs on the sorted
// sample) on two copies of web/src: whether the chosen bandwidth and score are bit-identical, and the medians.
//   node bench/ab-search.mjs <reference web/src> [<web/src under test, default this checkout's>] [rounds, default 11]
import { interleaved, loadPair } from './interleave.mjs';

const pair = await loadPair('ab-search.mjs');
function data(n, dim, seed) {
  let s = seed;
  const rand = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const x = Float64Array.from({ length: n * dim }, rand);
  const y = Float64Array.from({ length: n }, (_, i) => Math.sin(6 * x[i * dim]) + 0.3 * (rand() - 0.5));
  return { x, y };
}
const cases = [
  { id: '1-D local-linear CV, 3,000 points', n: 3000, dim: 1, o: {} },
  { id: '1-D Nadaraya–Watson AICc, 3,000 points', n: 3000, dim: 1, o: { estimator: 'nadaraya-watson', rule: 'aicc' } },
  { id: '1-D blocked CV, 2,000 points', n: 2000, dim: 1, o: { exclude: 0.01 } },
  { id: '2-D local-linear CV per dimension, 1,500 points', n: 1500, dim: 2, o: { perDimension: true } },
];
for (const c of cases) {
  const { x, y } = data(c.n, c.dim, 7);
  const run = (ka) => ka.selectBandwidth(x, y, { dim: c.dim, method: 'exact', ...c.o });
  const [a, b] = [run(pair.reference), run(pair.tested)];
  const same = Buffer.from(a.bandwidth.buffer).equals(Buffer.from(b.bandwidth.buffer)) && Object.is(a.score, b.score);
  console.log(`${c.id}: bit-identical ${same}; ${interleaved(pair, run).line}`);
}
