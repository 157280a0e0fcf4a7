// The grid (binned) computation against the exact engine through the public API: predictions, bands and the CV
// search within the tolerance, the measured error estimate, and the rules for when the grid may run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../web/src/index.js';
import { mulberry32 } from './reference.mjs';

const ka = await init();

function sample(n, seed) {
  const rand = mulberry32(seed);
  const x = Float32Array.from({ length: n }, rand);
  const y = Float32Array.from(x, (t) => Math.sin(6 * t) + t + 0.3 * (rand() - 0.5));
  return { x, y, grid: Float32Array.from({ length: 301 }, (_, i) => i / 300) };
}

const maxDiff = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

test('grid and exact models agree within the tolerance; the grid reports its measured error', () => {
  const { x, y, grid } = sample(6000, 1);
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    for (const kernel of ['gaussian', 'epanechnikov']) {
      const exact = ka.kernelRegression(x, y, { dim: 1, estimator, kernel, bandwidth: 0.03, method: 'exact' });
      const binned = ka.kernelRegression(x, y, { dim: 1, estimator, kernel, bandwidth: 0.03, method: 'grid', tolerance: 1e-4 });
      assert.equal(exact.method, 'exact');
      assert.equal(binned.method, 'grid');
      const a = exact.predictInterval(grid);
      const b = binned.predictInterval(grid);
      const range = 2.4;  // y spans about this
      const err = maxDiff(a.mean, b.mean) / range;
      assert.ok(err < 1e-3, `${estimator}/${kernel}: grid differs by ${err} of the range of y`);
      assert.equal(a.errorEstimate, 0);
      assert.ok(b.errorEstimate >= 0 && b.errorEstimate <= 2 * err + 1e-7, `error estimate ${b.errorEstimate} vs measured ${err}`);
      assert.ok(maxDiff(a.stderr, b.stderr) < 0.05 * Math.max(...a.stderr), `${estimator}/${kernel} stderr`);
      assert.ok(Math.abs(binned.effectiveDegreesOfFreedom / exact.effectiveDegreesOfFreedom - 1) < 0.02, 'ν');
    }
  }
});

test('the CV search on a grid lands where the exact search does', () => {
  const { x, y } = sample(5000, 2);
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    const exact = ka.selectBandwidth(x, y, { dim: 1, estimator, approximation: 'exact' });
    const binned = ka.selectBandwidth(x, y, { dim: 1, estimator, approximation: 'grid', tolerance: 1e-4 });
    assert.equal(exact.approximation, 'exact');
    assert.equal(binned.approximation, 'grid');
    assert.ok(Math.abs(binned.bandwidth[0] / exact.bandwidth[0] - 1) < 0.03, `${binned.bandwidth[0]} vs ${exact.bandwidth[0]}`);
    const exactScoreThere = ka.cvScore(x, y, { dim: 1, estimator, bandwidth: binned.bandwidth[0], approximation: 'exact' });
    assert.ok(exactScoreThere <= exact.score * (1 + 1e-3), `exact CV at the grid's choice: ${exactScoreThere} vs ${exact.score}`);
  }
});

test("'auto' picks the grid for large 1-D samples only, and 'grid' is refused where it cannot run", () => {
  const small = sample(500, 3);
  assert.equal(ka.kernelRegression(small.x, small.y, { dim: 1, bandwidth: 0.05 }).method, 'exact');
  const large = sample(25000, 4);
  assert.equal(ka.kernelRegression(large.x, large.y, { dim: 1, bandwidth: 0.05 }).method, 'grid');
  assert.equal(ka.selectBandwidth(large.x, large.y, { dim: 1 }).approximation, 'grid');
  const x2 = Float32Array.from({ length: 200 }, (_, i) => (i * 0.37) % 1);
  assert.throws(() => ka.kernelRegression(x2, small.y.subarray(0, 100), { dim: 2, bandwidth: 0.1, method: 'grid' }),
    (e) => e.code === 'BadArgument' && e.argument === 'options.method');
  assert.throws(() => ka.kernelRegression(small.x, small.y, { dim: 1, kernel: 'cauchy', method: 'grid' }),
    (e) => e.code === 'BadArgument' && e.argument === 'options.method');
  assert.throws(() => ka.kernelRegression(small.x, small.y, { dim: 1, method: 'fft' }),
    (e) => e.code === 'BadArgument' && e.argument === 'options.method');
  for (const tolerance of [0, 1, -1, NaN, '1e-3']) {
    assert.throws(() => ka.kernelRegression(small.x, small.y, { dim: 1, tolerance }),
      (e) => e.code === 'BadArgument' && e.argument === 'options.tolerance', String(tolerance));
    assert.throws(() => ka.selectBandwidth(small.x, small.y, { dim: 1, tolerance }),
      (e) => e.code === 'BadArgument' && e.argument === 'options.tolerance', String(tolerance));
  }
  // A bandwidth the grid cannot resolve at this tolerance: the model runs exactly.
  assert.equal(ka.kernelRegression(large.x, large.y, { dim: 1, bandwidth: 1e-7, method: 'grid' }).method, 'exact');
});

test("a criterion in kernelRegression's `method` gets a pointer to `bandwidth`; an all-infinite AICc curve is an error", () => {
  assert.throws(() => ka.kernelRegression([0, 0.5, 1, 1.5], [0, 1, 0, 1], { dim: 1, method: 'cv' }),
    (e) => e.code === 'BadArgument' && e.argument === 'options.method' && /bandwidth: 'cv'/.test(e.message));
  assert.throws(() => ka.kernelRegression([0, 0.4, 1], [0, 0.5, 1], { dim: 1, bandwidth: 'aicc' }),
    (e) => e.code === 'BadShape' && e.argument === 'x' && /AICc/.test(e.message));
});
