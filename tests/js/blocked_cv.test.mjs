// Blocked CV (issue 23 item 4; Chu & Marron 1991): `exclude: r` leaves out, for each held-out point, every sample point
// within r of it along x's first column. Judged by a float64 loop written here (each held-out fit by referenceLocalFit
// with the excluded points' weights set to 0), and on yearly sunspots by the numpy minimiser of
// tests/fixtures/make_gallery.py (tests/fixtures/blocked_cv.json).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { mulberry32, referenceLocalFit } from './reference.mjs';

const ka = await init();
const fixture = JSON.parse(readFileSync(new URL('../fixtures/blocked_cv.json', import.meta.url), 'utf8'));

/** Blocked CV in float64: Σ_i (y_i − f_{−band(i)}(x_i))² / n; +inf where a held-out point has no weight left. */
function blockedCv(x, y, dim, bandwidth, estimator, r) {
  const n = y.length;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const weights = Float64Array.from({ length: n }, (_, j) =>
      j === i || Math.abs(x[j * dim] - x[i * dim]) <= r ? 0 : 1,
    );
    if (!weights.some((w) => w > 0)) return Infinity;
    const fit = referenceLocalFit(x, y, x.subarray(i * dim, (i + 1) * dim), { dim, bandwidth, estimator, weights });
    if (!Number.isFinite(fit.mean[0])) return Infinity;
    sum += (y[i] - fit.mean[0]) ** 2;
  }
  return sum / n;
}

/** x unsorted on [0, 10] (the first column), y = sin(x₁) (+ 0.3·x₂ in 2-D) + uniform noise. */
function sample(n, dim, seed) {
  const rand = mulberry32(seed);
  const x = Float32Array.from({ length: n * dim }, () => 10 * rand());
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) y[i] = Math.sin(x[i * dim]) + (dim > 1 ? 0.3 * x[i * dim + 1] : 0) + 0.3 * (rand() - 0.5);
  return { x, y };
}

/** True when no pair's first-column distance lies within 1e-5 of r (float32 rounding cannot move a point across). */
function clearOf(x, dim, r) {
  const n = x.length / dim;
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) if (Math.abs(Math.abs(x[i * dim] - x[j * dim]) - r) < 1e-5) return false;
  return true;
}

for (const dim of [1, 2]) {
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    test(`cvScore with exclude equals the float64 blocked-CV loop: ${estimator}, ${dim}-D, several r (1e-4 relative)`, () => {
      const { x, y } = sample(120, dim, 7 + dim);
      const bandwidth = dim === 1 ? 0.6 : [0.6, 1.5];
      for (const r of [0.05, 0.3, 1.1]) {
        assert.ok(clearOf(x, dim, r), `r = ${r} sits on a pair's distance: choose another`);
        const want = blockedCv(x, y, dim, bandwidth, estimator, r);
        const got = ka.cvScore(x, y, { dim, bandwidth, estimator, exclude: r });
        assert.ok(Math.abs(got - want) <= 1e-4 * want, `r = ${r}: ${got} vs ${want}`);
        if (r === 0.05) assert.ok(got > ka.cvScore(x, y, { dim, bandwidth, estimator }), 'blocking changes the score');
      }
      assert.equal(
        ka.cvScore(x, y, { dim, bandwidth, estimator, exclude: 0 }),
        ka.cvScore(x, y, { dim, bandwidth, estimator }),
      );
    });
  }
}

test('blocked CV with observation weights: Σ ω_i e_i² / Σ ω_i, each held-out fit weighted by ω (1e-4 relative)', () => {
  const { x, y } = sample(90, 1, 11);
  const rand = mulberry32(12);
  const omega = Float64Array.from({ length: 90 }, () => 0.2 + rand());
  const r = 0.3;
  assert.ok(clearOf(x, 1, r));
  let sum = 0;
  let total = 0;
  for (let i = 0; i < 90; i++) {
    const weights = Float64Array.from(omega, (w, j) => (j === i || Math.abs(x[j] - x[i]) <= r ? 0 : w));
    const fit = referenceLocalFit(x, y, x.subarray(i, i + 1), {
      dim: 1,
      bandwidth: 0.5,
      estimator: 'local-linear',
      weights,
    });
    sum += omega[i] * (y[i] - fit.mean[0]) ** 2;
    total += omega[i];
  }
  const got = ka.cvScore(x, y, { dim: 1, bandwidth: 0.5, estimator: 'local-linear', weights: omega, exclude: r });
  assert.ok(Math.abs(got - sum / total) <= 1e-4 * (sum / total), `${got} vs ${sum / total}`);
});

test('a band that leaves a held-out point no neighbour in reach (compact kernel) scores +inf', () => {
  const { x, y } = sample(60, 1, 3);
  assert.equal(ka.cvScore(x, y, { dim: 1, bandwidth: 0.5, kernel: 'epanechnikov', exclude: 20 }), Infinity);
});

for (const c of fixture.cases) {
  const x = Float32Array.from(c.x),
    y = Float32Array.from(c.y);
  for (const [estimator, key] of [
    ['nadaraya-watson', 'nw'],
    ['local-linear', 'll'],
  ]) {
    const ref = c.reference[key];
    test(`${c.name}, exclude ${c.exclude}, ${estimator}: h above the spacing and within 1 % of the numpy minimiser`, () => {
      for (const { bandwidth, value } of ref.at) {
        const got = ka.cvScore(x, y, { dim: c.dim, bandwidth, estimator, exclude: c.exclude });
        assert.ok(Math.abs(got - value) <= 1e-4 * value, `h = ${bandwidth}: ${got} vs ${value}`);
      }
      const chosen = ka.selectBandwidth(x, y, { dim: c.dim, estimator, exclude: c.exclude });
      const [h] = chosen.bandwidth;
      assert.ok(h > c.medianSpacing, `h = ${h} vs spacing ${c.medianSpacing}`);
      assert.ok(Math.abs(h / ref.bandwidth - 1) <= 0.01, `h = ${h} vs numpy ${ref.bandwidth}`);
      assert.ok(Math.abs(chosen.score / ref.value - 1) <= 1e-4, `CV ${chosen.score} vs numpy ${ref.value}`);
      assert.equal(chosen.method, 'exact');
      assert.equal(chosen.score, Math.min(...chosen.curve.scores));
      // Leave-one-out on the same data interpolates (the failure blocked CV is for), and says so.
      const loo = ka.selectBandwidth(x, y, { dim: c.dim, estimator });
      assert.ok(loo.bandwidth[0] < c.medianSpacing);
      assert.ok(loo.warnings.some((w) => w.code === 'interpolating' && w.message.includes('exclude')));
      assert.ok(!chosen.warnings.some((w) => w.code === 'interpolating'), JSON.stringify(chosen.warnings));
    });
  }
}

test('kernelRegression and the async variants pass exclude to the search; inputs are not mutated', async () => {
  const c = fixture.cases[0];
  const x = Float64Array.from(c.x),
    y = Float64Array.from(c.y);
  const [x0, y0] = [x.slice(), y.slice()];
  const options = { dim: 1, estimator: 'local-linear', exclude: c.exclude };
  const chosen = ka.selectBandwidth(x, y, options);
  const model = ka.kernelRegression(x, y, { ...options, bandwidth: 'cv' });
  try {
    assert.deepEqual(Array.from(model.bandwidth), Array.from(chosen.bandwidth));
    assert.equal(model.selection.score, chosen.score);
  } finally {
    model.dispose();
  }
  const later = await ka.selectBandwidthAsync(x, y, options);
  assert.deepEqual(later, chosen);
  const asyncModel = await ka.kernelRegressionAsync(x, y, { ...options, bandwidth: 'cv' });
  try {
    assert.deepEqual(Array.from(asyncModel.bandwidth), Array.from(chosen.bandwidth));
  } finally {
    asyncModel.dispose();
  }
  assert.deepEqual(x, x0);
  assert.deepEqual(y, y0);
});

test('exclude: a finite number >= 0, for CV only; errors name options.exclude', () => {
  const { x, y } = sample(40, 1, 5);
  const named = (fn, pattern) =>
    assert.throws(
      fn,
      (e) =>
        e instanceof KernelAttentionError &&
        e.code === 'BadArgument' &&
        e.argument === 'options.exclude' &&
        pattern.test(e.message),
    );
  for (const bad of [-1, NaN, Infinity, '5', null]) {
    named(() => ka.cvScore(x, y, { dim: 1, bandwidth: 0.5, exclude: bad }), /finite number >= 0/);
    named(() => ka.selectBandwidth(x, y, { dim: 1, exclude: bad }), /finite number >= 0/);
    named(() => ka.kernelRegression(x, y, { dim: 1, exclude: bad }), /finite number >= 0/);
  }
  named(() => ka.selectBandwidth(x, y, { dim: 1, rule: 'aicc', exclude: 1 }), /'cv' only, not to the rule 'aicc'/);
  named(() => ka.selectBandwidth(x, y, { dim: 1, rule: 'cv-gradient', exclude: 1 }), /'cv' only/);
  named(() => ka.selectBandwidth(x, y, { dim: 1, rule: 'scott', exclude: 1 }), /'cv' only/);
  named(() => ka.kernelRegression(x, y, { dim: 1, bandwidth: 'aicc', exclude: 1 }), /'cv' only/);
  named(() => ka.kernelRegression(x, y, { dim: 1, bandwidth: 0.5, exclude: 1 }), /not to a given bandwidth/);
});

test('1-D blocked CV on a grid asked for follows the float64 loop within the grid tolerance (NW and local-linear)', () => {
  // 3,000 points on [0, 10], the band 5 spacings: at these bandwidths the grid serves every point (its moments less
  // the band's exact sums, tests/cpp/grid_blocked_cv_test.cpp checks it is served).
  const { x, y } = sample(3000, 1, 41);
  const r = 5 * (10 / 3000);
  for (const estimator of ['nadaraya-watson', 'local-linear'])
    for (const bandwidth of [0.2, 0.5, 1.5]) {
      const got = ka.cvScore(x, y, { dim: 1, bandwidth, estimator, exclude: r, method: 'grid' });
      const want = blockedCv(x, y, 1, [bandwidth], estimator, r);
      // At h = 1.5 the grid is coarse (65 nodes over 10): its leave-one-out score, no band, is 4.6e-3 off as well.
      const tolerance = bandwidth < 1 ? 3e-3 : 6e-3;
      assert.ok(Math.abs(got - want) <= tolerance * want, `${estimator}, h = ${bandwidth}: ${got} vs ${want}`);
    }
  assert.equal(ka.plan('regression', { n: 3000, dim: 1, method: 'grid', rule: 'cv', exclude: r }).method, 'grid');
});
