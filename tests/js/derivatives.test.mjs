// model.gradient(): local-linear slopes against statsmodels' KernelReg(reg_type='ll') marginal effects
// (tests/fixtures/make_derivatives.py) and a float64 slope loop; Nadaraya–Watson derivatives against central finite
// differences of the float64 reference fit and of the model's own predictions; standard errors against the float64
// linear smoother of the derivative; refusals.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { mulberry32, randomFloat32, referenceLocalFit, referenceLocalSlope } from './reference.mjs';

const ka = await init();
const fixtures = JSON.parse(readFileSync(new URL('../fixtures/derivatives.json', import.meta.url), 'utf8'));

/** Largest |got − want| over the largest |want|. */
function errorOverScale(got, want) {
  assert.equal(got.length, want.length, 'length');
  let scale = 0;
  let worst = 0;
  for (let k = 0; k < want.length; k++) {
    scale = Math.max(scale, Math.abs(want[k]));
    const err = Math.abs(got[k] - want[k]);
    worst = Math.max(worst, Number.isNaN(err) ? Infinity : err);
  }
  return worst / scale;
}

/** A seeded smooth sample: n points in [−2, 2]^dim (float32 values), y = a smooth surface plus noise. */
function sample(seed, n, dim) {
  const rand = mulberry32(seed);
  const x = randomFloat32(rand, n * dim, -2, 2);
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let v = 0;
    for (let d = 0; d < dim; d++) v += Math.sin((d + 1.3) * x[i * dim + d]);
    y[i] = v + 0.2 * (rand() - 0.5);
  }
  return { x, y, xq: randomFloat32(rand, 15 * dim, -1.5, 1.5) };
}

/** Central differences of fit(q) (I × 1 values) along each dimension: I × dim. */
function centralDifferences(fit, xq, dim, steps) {
  const I = xq.length / dim;
  const out = new Float64Array(I * dim);
  for (let d = 0; d < dim; d++) {
    const plus = Float64Array.from(xq);
    const minus = Float64Array.from(xq);
    for (let i = 0; i < I; i++) {
      plus[i * dim + d] += steps[d];
      minus[i * dim + d] -= steps[d];
    }
    const [fp, fm] = [fit(plus), fit(minus)];
    for (let i = 0; i < I; i++) out[i * dim + d] = (fp[i] - fm[i]) / (2 * steps[d]);
  }
  return out;
}

/** Whether the derivative of query i along d has a kink within one step: a key at the Laplacian's peak or at the Epanechnikov kernel's edge. */
function nearKink(kernel, x, xq, i, d, dim, h, steps) {
  if (kernel !== 'laplacian' && kernel !== 'epanechnikov') return false; // the tricube's edge is smooth
  const n = x.length / dim;
  for (let j = 0; j < n; j++) {
    const gap = Math.abs(xq[i * dim + d] - x[j * dim + d]);
    const at = kernel === 'laplacian' ? 0 : h[d];
    if (Math.abs(gap - at) <= 2 * steps[d]) return true;
  }
  return false;
}

test('local-linear gradients match statsmodels KernelReg(reg_type="ll") marginal effects (1-D, 2-D)', () => {
  for (const c of fixtures.cases) {
    const model = ka.kernelRegression(c.x, c.y, { dim: c.dim, kernel: 'gaussian', bandwidth: c.bandwidth });
    const { gradient, stderr } = model.gradient(c.queries);
    assert.ok(gradient instanceof Float64Array && stderr instanceof Float64Array, c.name);
    assert.equal(gradient.length, c.gradient.length, c.name);
    const err = errorOverScale(gradient, c.gradient);
    assert.ok(err <= 1e-4, `${c.name}: ${err} of the marginal effects' scale`);
  }
});

test('local-linear gradients and their standard errors match the float64 slope smoother', () => {
  for (const dim of [1, 2]) {
    const { x, y, xq } = sample(11 + dim, 150, dim);
    const bandwidth = dim === 1 ? [0.35] : [0.6, 0.8];
    for (const kernel of ['gaussian', 'tricube', 'cauchy']) {
      const model = ka.kernelRegression(x, y, { dim, kernel, bandwidth });
      const got = model.gradient(xq);
      const want = referenceLocalSlope(x, y, xq, { dim, kernel, bandwidth });
      const err = errorOverScale(got.gradient, want.slope);
      assert.ok(err <= 1e-4, `${kernel} ${dim}-D slope: ${err}`);
      const se = Float64Array.from(want.sumSq, (s) => Math.sqrt(model.residualVariance[0] * s));
      const seErr = errorOverScale(got.stderr, se);
      assert.ok(seErr <= 1e-4, `${kernel} ${dim}-D stderr: ${seErr}`);
    }
  }
});

test('Nadaraya–Watson gradients are the derivative of the fit: central differences of the float64 reference and of predict()', () => {
  for (const dim of [1, 2]) {
    const { x, y, xq } = sample(23 + dim, 120, dim);
    const bandwidth = dim === 1 ? [0.4] : [0.7, 0.9];
    for (const kernel of ['gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube']) {
      const options = { dim, kernel, bandwidth, estimator: 'nadaraya-watson' };
      const model = ka.kernelRegression(x, y, options);
      const { gradient, stderr } = model.gradient(xq);
      const exactSteps = bandwidth.map((h) => 1e-5 * h);
      const reference = centralDifferences((q) => referenceLocalFit(x, y, q, options).mean, xq, dim, exactSteps);
      const err = errorOverScale(gradient, reference);
      assert.ok(err <= 1e-4, `${kernel} ${dim}-D against the float64 fit: ${err}`);
      // predict() is float32 inside: a wider step and a looser bound (float32 rounding over the step, and the
      // Laplacian kernel's kinks at the sample points within it).
      const ownSteps = bandwidth.map((h) => 2e-3 * h);
      const own = centralDifferences((q) => model.predict(q), xq, dim, ownSteps);
      // Where a sample point's kink (the Laplacian's peak, the Epanechnikov kernel's edge) lies within a step of the query,
      // a finite difference is not the derivative there: those entries are compared with the float64 fit only.
      const kept = (k) => !nearKink(kernel, x, xq, Math.floor(k / dim), k % dim, dim, bandwidth, ownSteps);
      const ownErr = errorOverScale(
        gradient.filter((_, k) => kept(k)),
        own.filter((_, k) => kept(k)),
      );
      assert.ok(
        gradient.filter((_, k) => kept(k)).length >= 0.7 * gradient.length,
        `${kernel} ${dim}-D: too few entries kept`,
      );
      assert.ok(ownErr <= 5e-3, `${kernel} ${dim}-D against predict(): ${ownErr}`);
      // The derivative of the smoother's weights is the derivative's own linear smoother: σ² Σ (∂ℓ_j/∂q_d)².
      const I = xq.length / dim;
      const want = new Float64Array(I * dim);
      for (let d = 0; d < dim; d++) {
        const plus = Float64Array.from(xq);
        const minus = Float64Array.from(xq);
        for (let i = 0; i < I; i++) {
          plus[i * dim + d] += exactSteps[d];
          minus[i * dim + d] -= exactSteps[d];
        }
        const [lp, lm] = [referenceLocalFit(x, y, plus, options).ell, referenceLocalFit(x, y, minus, options).ell];
        const n = x.length / dim;
        for (let i = 0; i < I; i++) {
          let s = 0;
          for (let j = 0; j < n; j++) s += ((lp[i * n + j] - lm[i * n + j]) / (2 * exactSteps[d])) ** 2;
          want[i * dim + d] = Math.sqrt(model.residualVariance[0] * s);
        }
      }
      const seErr = errorOverScale(stderr, want);
      assert.ok(seErr <= 1e-4, `${kernel} ${dim}-D stderr: ${seErr}`);
    }
  }
});

test('gradient(): several value columns, layout [(i·dim + d)·width + c], grid models from their moments, inputs untouched', () => {
  const { x, y, xq } = sample(5, 300, 1);
  const y2 = Float32Array.from({ length: 600 }, (_, k) => (k % 2 ? -3 * y[k >> 1] : y[k >> 1]));
  const model = ka.kernelRegression(x, y2, { dim: 1, kernel: 'gaussian', bandwidth: 0.3 });
  const copy = Float32Array.from(xq);
  const g = model.gradient(xq).gradient;
  assert.deepEqual(xq, copy);
  const single = ka.kernelRegression(x, y, { dim: 1, kernel: 'gaussian', bandwidth: 0.3 }).gradient(xq).gradient;
  for (let i = 0; i < xq.length; i++) {
    assert.ok(Math.abs(g[2 * i] - single[i]) <= 1e-9 * Math.abs(single[i]) + 1e-12, `column 0, row ${i}`);
    assert.ok(Math.abs(g[2 * i + 1] + 3 * single[i]) <= 1e-6 * Math.abs(single[i]) + 1e-9, `column 1, row ${i}`);
  }
  const grid = ka.kernelRegression(x, y, { dim: 1, kernel: 'gaussian', bandwidth: 0.3, method: 'grid' });
  assert.equal(grid.method, 'grid');
  const gridGradient = grid.gradient(xq).gradient;
  // From the grid's moments (tolerance 1e-3 on the fit): against the float64 slope of the weighted least-squares line
  // at each query (Gaussian weights over every point), as the exact engine's derivative.
  const h = Math.fround(0.3);
  const want = Float64Array.from(xq, (q) => {
    let [s0, s1, s2, t0, t1] = [0, 0, 0, 0, 0];
    for (let j = 0; j < x.length; j++) {
      const u = (x[j] - q) / h;
      const w = Math.exp(-(u * u) / 2);
      [s0, s1, s2, t0, t1] = [s0 + w, s1 + w * u, s2 + w * u * u, t0 + w * y[j], t1 + w * u * y[j]];
    }
    return (s0 * t1 - s1 * t0) / (s0 * s2 - s1 * s1) / h;
  });
  const err = errorOverScale(gridGradient, want);
  assert.ok(err <= 2e-3 && errorOverScale(single, want) <= 1e-6, `a grid model's gradient: ${err}`);
});

test('gradient() refuses the uniform kernel, bad queries and disposed models by name', () => {
  const { x, y } = sample(7, 50, 2);
  const uniform = ka.kernelRegression(x, y, { dim: 2, kernel: 'uniform', bandwidth: 1 });
  assert.throws(
    () => uniform.gradient([0, 0]),
    (e) => e instanceof KernelAttentionError && e.code === 'BadArgument' && e.argument === 'kernel',
  );
  const model = ka.kernelRegression(x, y, { dim: 2, kernel: 'gaussian', bandwidth: 1 });
  assert.throws(
    () => model.gradient([0, 0, 0]),
    (e) => e instanceof KernelAttentionError && e.argument === 'xq',
  );
  assert.throws(
    () => model.gradient('a'),
    (e) => e instanceof KernelAttentionError && e.argument === 'xq',
  );
  assert.deepEqual(model.gradient(new Float32Array(0)).gradient, new Float64Array(0));
  model.dispose();
  assert.throws(
    () => model.gradient([0, 0]),
    (e) => e instanceof KernelAttentionError && e.code === 'Disposed',
  );
});

test('Nadaraya–Watson gradients far from the data (every key below e^-20 of the peak) still follow the float64 fit', () => {
  const { x, y } = sample(31, 200, 1);
  const xq = Float32Array.of(2.5, -2.7, 3.1, 1.9, 0.3);
  for (const kernel of ['gaussian', 'laplacian']) {
    const options = { dim: 1, kernel, bandwidth: [0.05], estimator: 'nadaraya-watson' };
    const { gradient } = ka.kernelRegression(x, y, options).gradient(xq);
    const want = centralDifferences((q) => referenceLocalFit(x, y, q, options).mean, xq, 1, [1e-7]);
    for (let i = 0; i < xq.length; i++) {
      assert.ok(
        Math.abs(gradient[i] - want[i]) <= 1e-4 * Math.max(1, Math.abs(want[i])),
        `${kernel} at ${xq[i]}: ${gradient[i]} vs ${want[i]}`,
      );
    }
  }
});
