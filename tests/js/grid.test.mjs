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
      const binned = ka.kernelRegression(x, y, {
        dim: 1,
        estimator,
        kernel,
        bandwidth: 0.03,
        method: 'grid',
        tolerance: 1e-4,
      });
      assert.equal(exact.method, 'exact');
      assert.equal(binned.method, 'grid');
      const a = exact.predictInterval(grid);
      const b = binned.predictInterval(grid);
      const range = 2.4; // y spans about this
      const err = maxDiff(a.mean, b.mean) / range;
      assert.ok(err < 1e-3, `${estimator}/${kernel}: grid differs by ${err} of the range of y`);
      assert.equal(a.errorEstimate, 0);
      assert.ok(
        b.errorEstimate >= 0 && b.errorEstimate <= 2 * err + 1e-7,
        `error estimate ${b.errorEstimate} vs measured ${err}`,
      );
      assert.ok(maxDiff(a.stderr, b.stderr) < 0.05 * Math.max(...a.stderr), `${estimator}/${kernel} stderr`);
      assert.ok(Math.abs(binned.effectiveDegreesOfFreedom / exact.effectiveDegreesOfFreedom - 1) < 0.02, 'ν');
    }
  }
});

test('the CV search on a grid lands where the exact search does', () => {
  const { x, y } = sample(5000, 2);
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    const exact = ka.selectBandwidth(x, y, { dim: 1, estimator, method: 'exact' });
    const binned = ka.selectBandwidth(x, y, { dim: 1, estimator, method: 'grid', tolerance: 1e-4 });
    assert.equal(exact.method, 'exact');
    assert.equal(binned.method, 'grid');
    assert.ok(
      Math.abs(binned.bandwidth[0] / exact.bandwidth[0] - 1) < 0.03,
      `${binned.bandwidth[0]} vs ${exact.bandwidth[0]}`,
    );
    const exactScoreThere = ka.cvScore(x, y, { dim: 1, estimator, bandwidth: binned.bandwidth[0], method: 'exact' });
    assert.ok(
      exactScoreThere <= exact.score * (1 + 1e-3),
      `exact CV at the grid's choice: ${exactScoreThere} vs ${exact.score}`,
    );
  }
});

test('the 1-D AICc search on a grid lands where the exact AICc search does', () => {
  // The exact search's upper scan points reach every key (O(n²)); the grid's cost falls as h grows. The definition is
  // checked against a float64 loop in grid_test.cpp ("GridCv's AICc follows a float64 AICc loop").
  const { x, y } = sample(6000, 3);
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    const exact = ka.selectBandwidth(x, y, { dim: 1, estimator, rule: 'aicc', method: 'exact' });
    const binned = ka.selectBandwidth(x, y, { dim: 1, estimator, rule: 'aicc' }); // 'auto': the grid from 5,000 points
    assert.deepEqual([exact.method, binned.method], ['exact', 'grid']);
    const off = Math.abs(binned.bandwidth[0] / exact.bandwidth[0] - 1);
    assert.ok(off < 0.01, `${estimator}: ${binned.bandwidth[0]} vs ${exact.bandwidth[0]}`);
    assert.ok(Math.abs(binned.score - exact.score) < 1e-3, `${estimator}: AICc ${binned.score} vs ${exact.score}`);
  }
});

test('the 2-D AICc search on a grid lands where the exact AICc search does', () => {
  const rand = mulberry32(4);
  const n = 6000;
  const x = Float32Array.from({ length: 2 * n }, rand);
  const y = Float32Array.from(
    { length: n },
    (_, i) => Math.sin(6 * x[2 * i]) + Math.cos(4 * x[2 * i + 1]) + rand() - 0.5,
  );
  const exact = ka.selectBandwidth(x, y, { dim: 2, rule: 'aicc', method: 'exact' });
  const binned = ka.selectBandwidth(x, y, { dim: 2, rule: 'aicc' }); // 'auto': the grid from 5,000 points
  assert.deepEqual([exact.method, binned.method], ['exact', 'grid']);
  const off = Math.max(...binned.bandwidth.map((h, d) => Math.abs(h / exact.bandwidth[d] - 1)));
  assert.ok(off < 0.02, `${binned.bandwidth} vs ${exact.bandwidth}`);
  assert.ok(Math.abs(binned.score - exact.score) < 2e-3, `AICc ${binned.score} vs ${exact.score}`);
});

test("'auto' picks the grid for large 1-D and 2-D samples only, and 'grid' is refused where it cannot run", () => {
  const small = sample(500, 3);
  assert.equal(ka.kernelRegression(small.x, small.y, { dim: 1, bandwidth: 0.05 }).method, 'exact');
  const large = sample(25000, 4);
  assert.equal(ka.kernelRegression(large.x, large.y, { dim: 1, bandwidth: 0.05 }).method, 'grid');
  assert.equal(ka.selectBandwidth(large.x, large.y, { dim: 1 }).method, 'grid');
  const x3 = Float32Array.from({ length: 300 }, (_, i) => (i * 0.37) % 1);
  assert.throws(
    () => ka.kernelRegression(x3, small.y.subarray(0, 100), { dim: 3, bandwidth: 0.1, method: 'grid' }),
    (e) => e.code === 'BadArgument' && e.argument === 'options.method',
  );
  const plane = Float32Array.from({ length: 50000 }, (_, i) => (i * 0.618034) % 1);
  assert.equal(ka.kernelRegression(plane, large.y, { dim: 2, bandwidth: 0.1 }).method, 'grid');
  assert.throws(
    () => ka.kernelRegression(small.x, small.y, { dim: 1, kernel: 'cauchy', method: 'grid' }),
    (e) => e.code === 'BadArgument' && e.argument === 'options.method',
  );
  assert.throws(
    () => ka.kernelRegression(small.x, small.y, { dim: 1, method: 'fft' }),
    (e) => e.code === 'BadArgument' && e.argument === 'options.method',
  );
  for (const tolerance of [0, 1, -1, NaN, '1e-3']) {
    assert.throws(
      () => ka.kernelRegression(small.x, small.y, { dim: 1, tolerance }),
      (e) => e.code === 'BadArgument' && e.argument === 'options.tolerance',
      String(tolerance),
    );
    assert.throws(
      () => ka.selectBandwidth(small.x, small.y, { dim: 1, tolerance }),
      (e) => e.code === 'BadArgument' && e.argument === 'options.tolerance',
      String(tolerance),
    );
  }
  // A bandwidth the grid cannot resolve at this tolerance: the model runs exactly.
  assert.equal(ka.kernelRegression(large.x, large.y, { dim: 1, bandwidth: 1e-7, method: 'grid' }).method, 'exact');
});

test("a criterion in kernelRegression's `method` gets a pointer to `bandwidth`; an all-infinite AICc curve is an error", () => {
  assert.throws(
    () => ka.kernelRegression([0, 0.5, 1, 1.5], [0, 1, 0, 1], { dim: 1, method: 'cv' }),
    (e) => e.code === 'BadArgument' && e.argument === 'options.method' && /bandwidth: 'cv'/.test(e.message),
  );
  assert.throws(
    () => ka.kernelRegression([0, 0.4, 1], [0, 0.5, 1], { dim: 1, bandwidth: 'aicc' }),
    (e) => e.code === 'BadShape' && e.argument === 'x' && /AICc/.test(e.message),
  );
});

test('2-D grid fits follow the exact 2-D fits within the tolerance, with leave-one-out CV on the grid', () => {
  // y = sin(4 x₁) + cos(3 x₂) + noise on the unit square, both estimators, per-dimension bandwidths.
  let s = 17;
  const r = () => (s = (s * 16807) % 2147483647) / 2147483647;
  const n = 4000;
  const x = Float32Array.from({ length: 2 * n }, r);
  const y = Float32Array.from(
    { length: n },
    (_, j) => Math.sin(4 * x[2 * j]) + Math.cos(3 * x[2 * j + 1]) + 0.2 * (r() - 0.5),
  );
  const xq = Float32Array.from({ length: 400 }, () => 0.02 + 0.96 * r());
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    const options = { dim: 2, estimator, bandwidth: [0.06, 0.09], tolerance: 1e-3 };
    const exact = ka.kernelRegression(x, y, { ...options, method: 'exact' });
    const binned = ka.kernelRegression(x, y, { ...options, method: 'grid' });
    assert.equal(binned.method, 'grid');
    const a = exact.predictInterval(xq);
    const b = binned.predictInterval(xq);
    let worst = 0;
    for (let i = 0; i < a.mean.length; i++) worst = Math.max(worst, Math.abs(a.mean[i] - b.mean[i]));
    assert.ok(worst / 2.4 < 5e-3, `${estimator}: ${worst}`); // y spans about 2.4
    assert.ok(
      b.errorEstimate > 0 && b.errorEstimate <= (2 * worst) / 2.4 + 1e-6,
      `${estimator}: estimate ${b.errorEstimate}`,
    );
    const cvExact = ka.cvScore(x, y, { dim: 2, estimator, bandwidth: [0.06, 0.09], method: 'exact' });
    const cvGrid = ka.cvScore(x, y, { dim: 2, estimator, bandwidth: [0.06, 0.09], method: 'grid' });
    assert.ok(Math.abs(cvGrid - cvExact) <= 5e-3 * cvExact, `${estimator}: CV ${cvGrid} vs ${cvExact}`);
  }
});

test('grid predictions beyond the data: within reach on the grid, beyond it the empty-row policy or the far value', async () => {
  const { referenceLocalFit } = await import('./reference.mjs');
  const { x, y } = sample(6000, 5);
  // 101 queries spanning 1.05× the data's range (about 0.8 h beyond each end), and two far beyond it.
  const edges = Float32Array.from({ length: 101 }, (_, i) => -0.025 + (1.05 * i) / 100);
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    for (const kernel of ['gaussian', 'epanechnikov', 'laplacian']) {
      const model = ka.kernelRegression(x, y, { dim: 1, estimator, kernel, bandwidth: 0.03, method: 'grid' });
      assert.equal(model.method, 'grid');
      const got = model.predict(edges);
      const exact = ka
        .kernelRegression(x, y, { dim: 1, estimator, kernel, bandwidth: 0.03, method: 'exact' })
        .predict(edges);
      const ref = referenceLocalFit(x, y, edges, { dim: 1, kernel, bandwidth: Math.fround(0.03), estimator }).mean;
      let worst = 0;
      let skipped = 0;
      for (let i = 0; i < ref.length; i++) {
        if (Number.isNaN(ref[i])) assert.ok(Number.isNaN(got[i]), `${estimator}/${kernel}: row ${i} should be empty`);
        // Local-linear extrapolation from a compact kernel's last few keys is a near-singular design where the
        // float32 exact engine itself strays from float64 (the grid runs those rows exactly): compared where the
        // exact engine holds to 1e-4.
        else if (Math.abs(exact[i] - ref[i]) / 2.4 > 1e-4) skipped++;
        else worst = Math.max(worst, Math.abs(got[i] - ref[i]) / 2.4); // y spans about 2.4
      }
      assert.ok(
        skipped <= (estimator === 'local-linear' && kernel === 'epanechnikov' ? 10 : 0),
        `${estimator}/${kernel}: ${skipped} rows`,
      );
      assert.ok(worst < 1e-3, `${estimator}/${kernel}: ${worst} of the range of y`); // the grid's tolerance
    }
    // The Laplacian's Nadaraya–Watson fit beyond the data is the one at its end: any distance, on the grid. (Its
    // local-linear rows that far run exactly, and the engine's guard then departs from this float64 reference's
    // straight extrapolation: not compared.)
    const far = Float32Array.of(-5, 6);
    if (estimator === 'nadaraya-watson') {
      const laplace = ka.kernelRegression(x, y, {
        dim: 1,
        estimator,
        kernel: 'laplacian',
        bandwidth: 0.03,
        method: 'grid',
      });
      const refFar = referenceLocalFit(x, y, far, {
        dim: 1,
        kernel: 'laplacian',
        bandwidth: Math.fround(0.03),
        estimator,
      }).mean;
      const gotFar = laplace.predict(far);
      for (let i = 0; i < 2; i++)
        assert.ok(Math.abs(gotFar[i] - refFar[i]) / 2.4 < 1e-3, `laplacian far: ${gotFar[i]} vs ${refFar[i]}`);
    }
    // A compact kernel with no key within h: the empty-row policy, as the exact model applies it.
    for (const empty of ['nan', 'zero', 'nearest']) {
      const options = { dim: 1, estimator, kernel: 'epanechnikov', bandwidth: 0.03, empty };
      const a = ka.kernelRegression(x, y, { ...options, method: 'grid' }).predict(far);
      const b = ka.kernelRegression(x, y, { ...options, method: 'exact' }).predict(far);
      assert.deepEqual(Array.from(a), Array.from(b), `${estimator} ${empty}`);
    }
    assert.throws(
      () =>
        ka
          .kernelRegression(x, y, {
            dim: 1,
            estimator,
            kernel: 'epanechnikov',
            bandwidth: 0.03,
            empty: 'error',
            method: 'grid',
          })
          .predict(far),
      (e) => e.code === 'EmptyRow',
    );
  }
});

test('grid predictions 6–50 h beyond dense noisy data follow the float64 fit within the tolerance', async () => {
  // 20,000 points, noise sd 0.2: between the grid's reach (about 5–6 h) and far away, many keys behind each end still
  // weigh in, and the end keys' mean alone was up to 0.1 of range(y) off there.
  const { referenceLocalFit } = await import('./reference.mjs');
  const rand = mulberry32(31);
  const n = 20000;
  const x = Float32Array.from({ length: n }, rand);
  const y = Float32Array.from(x, (t) => {
    const noise = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand()); // Box–Muller
    return Math.sin(6 * t) + t + 0.2 * noise;
  });
  let [lo, hi, ylo, yhi] = [Infinity, -Infinity, Infinity, -Infinity];
  for (let j = 0; j < n; j++) {
    [lo, hi] = [Math.min(lo, x[j]), Math.max(hi, x[j])];
    [ylo, yhi] = [Math.min(ylo, y[j]), Math.max(yhi, y[j])];
  }
  const h = 0.01;
  const q = Float32Array.from([6, 8, 10, 15, 20, 30, 50].flatMap((d) => [lo - d * h, hi + d * h]));
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    const options = { dim: 1, estimator, kernel: 'gaussian', bandwidth: h, tolerance: 1e-3 };
    const model = ka.kernelRegression(x, y, { ...options, method: 'grid' });
    assert.equal(model.method, 'grid');
    const got = model.predict(q);
    // Local-linear this far out is a near-singular design that the engine's guard pulls toward Nadaraya–Watson and
    // the float64 textbook solve does not: compared with the exact model over all keys.
    const want =
      estimator === 'nadaraya-watson'
        ? referenceLocalFit(x, y, q, { dim: 1, kernel: 'gaussian', bandwidth: Math.fround(h), estimator }).mean
        : ka.kernelRegression(x, y, { ...options, method: 'exact' }).predict(q);
    for (let i = 0; i < q.length; i++) {
      const err = Math.abs(got[i] - want[i]) / (yhi - ylo);
      assert.ok(err < 1e-3, `${estimator} at ${q[i]}: ${got[i]} vs ${want[i]} (${err} of range(y))`); // the tolerance
    }
  }
});
