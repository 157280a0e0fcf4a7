// Times method 'sparse' against the exact engine for Nadaraya–Watson at the sample (I = J = n) on uniform data, one
// thread: `node scripts/sparse-timing.mjs [n]` after `npm run build:wasm`. Prints one line per case (docs/approximations.md).
import { init } from '../web/src/index.js';

const ka = await init({ threads: 1 });
const n = Number(process.argv[2] ?? 100000);
let seed = 3;
const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;

function time(fn) {
  const start = performance.now();
  const result = fn();
  return { result, seconds: (performance.now() - start) / 1000 };
}

for (const [dim, kernel, h] of [
  [1, 'gaussian', 0.01],
  [1, 'epanechnikov', 0.01],
  [2, 'gaussian', 0.01],
  [2, 'epanechnikov', 0.01],
]) {
  const x = Float32Array.from({ length: n * dim }, random);
  const y = Float32Array.from(
    { length: n },
    (_, i) => Math.sin(6 * x[i * dim]) + (dim === 2 ? Math.cos(4 * x[i * dim + 1]) : 0),
  );
  const options = { dim, kernel, bandwidth: h, method: 'exact' };
  const exact = time(() => ka.attention(x, x, y, options));
  const sparse = time(() => ka.attentionWithInfo(x, x, y, { ...options, method: 'sparse', tolerance: 1e-3 }));
  const model = ka.kernelRegression(x, y, { ...options, estimator: 'nadaraya-watson', method: 'exact' });
  const fit = time(() => model.predict(x));
  model.dispose();
  let lo = Infinity;
  let hi = -Infinity;
  let worst = 0;
  for (const v of y) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
  for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(sparse.result.output[i] - exact.result[i]));
  console.log(
    `dim ${dim} ${kernel} h ${h} n ${n}: exact attention ${exact.seconds.toFixed(2)} s, exact regression predict ` +
      `${fit.seconds.toFixed(2)} s, sparse ${sparse.seconds.toFixed(3)} s (${(exact.seconds / sparse.seconds).toFixed(0)}x attention), ` +
      `kept ${((sparse.result.keptKeys / n / n) * 100).toFixed(2)} % of pairs, max |sparse - exact| / range ${(worst / (hi - lo)).toExponential(2)}, ` +
      `errorEstimate ${sparse.result.errorEstimate.toExponential(2)}`,
  );
}
