// Interleaved A/B of the exact 2-D local-quadratic fit (engine/local_fit_tiles.cpp) through the public API: two copies
// of web/src (each importing its own web/dist), one thread each, kernelRegression on 4,000 points in [0, 1]²
// (Gaussian, h = 0.1 per column, method 'exact'): predict() at the sample (no Σw²) and predictInterval() (with Σw²),
// and the tested copy's local-linear predict() for the ratio of the two degrees; prints the medians, their ratio and
// the largest difference between the copies over range(y).
//   node bench/ab-quadratic.mjs <reference web/src> [<web/src under test, default this checkout's>] [rounds]
import { interleaved, loadPair } from './interleave.mjs';
import { mulberry32 } from './workloads.mjs';

const pair = await loadPair('ab-quadratic.mjs');
const n = 4000;
const rand = mulberry32(42);
const x = Float64Array.from({ length: 2 * n }, () => rand());
const y = Float64Array.from({ length: n }, (_, i) => Math.sin(4 * x[2 * i]) + x[2 * i + 1] + 0.1 * (rand() - 0.5));
const options = (estimator) => ({ dim: 2, estimator, bandwidth: [0.1, 0.1], method: 'exact' });
const fit = (ka, estimator, withBand) => {
  const model = ka.kernelRegression(x, y, options(estimator));
  try {
    return withBand ? model.predictInterval(x).upper : model.predict(x);
  } finally {
    model.dispose();
  }
};
let lo = Infinity,
  hi = -Infinity;
for (const v of y) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
for (const withBand of [false, true]) {
  const a = fit(pair.reference, 'local-quadratic', withBand);
  const b = fit(pair.tested, 'local-quadratic', withBand);
  const differs = a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0) / (hi - lo);
  const what = withBand ? 'predictInterval' : 'predict';
  console.log(
    `local-quadratic ${what}: differs ${differs.toExponential(1)} of range(y); ` +
      interleaved(pair, (ka) => fit(ka, 'local-quadratic', withBand)).line,
  );
}
const linear = interleaved({ ...pair, reference: pair.tested }, (ka) => fit(ka, 'local-linear', false));
console.log(`tested local-linear predict: median ${linear.tested.toFixed(1)} ms`);
