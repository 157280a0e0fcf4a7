// estimator 'local-quadratic' (R's loess degree 2) in every place a local fit runs, against the float64
// weighted-least-squares loops of reference.mjs (designRow: 1, u, u_a·u_b): fixed bandwidths in 1-D and 2-D with
// Gaussian and compact kernels, ties and a sparse edge; predictInterval with both variances; gradient; the effective
// degrees of freedom; leave-one-out CV and AICc (scores and searches); span bandwidths; robustness; the guard's
// warning; and the plan (exact, never binned).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';
import {
  maxAbsDiff,
  mulberry32,
  referenceFitSummary,
  referenceLocalBand,
  referenceLocalFit,
  referenceLocalSlope,
  referenceRobustFit,
  referenceSpanFit,
} from './reference.mjs';

const ka = await init();
const LQ = 'local-quadratic';
const rangeOf = (a) => a.reduce((m, v) => Math.max(m, v), -Infinity) - a.reduce((m, v) => Math.min(m, v), Infinity);

/** |got − want| ≤ tol·|want| for every entry. */
function assertRelative(got, want, tol, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  for (let k = 0; k < want.length; k++) {
    const err = Math.abs(got[k] - want[k]);
    assert.ok(err <= tol * Math.abs(want[k]), `${what}[${k}]: got ${got[k]}, want ${want[k]}`);
  }
}

/**
 * A sample with curvature: 1-D dense on [0, 0.8] and 6 points spread up to 1 (a sparse edge), x rounded to 1/40 with
 * `ties`; 2-D on [0, 1]², thinner above x₂ = 0.7. float32 x and y, as the engine stores them.
 */
function sample(seed, n, dim, ties = false) {
  const rand = mulberry32(seed);
  const x = new Float32Array(n * dim);
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let a = i < n - 6 ? 0.8 * rand() : 0.8 + (0.2 * (i - n + 7)) / 6;
    if (ties) a = Math.round(a * 40) / 40;
    x[i * dim] = a;
    if (dim === 2) x[i * dim + 1] = rand() * (i % 10 === 0 ? 1 : 0.7);
    const b = dim === 2 ? x[i * dim + 1] : 0;
    y[i] = Math.sin(6 * x[i * dim]) + 2 * x[i * dim] * b - b * b + 0.2 * (rand() - 0.5);
  }
  const xq = [];
  for (let i = 0; i <= 20; i++) {
    // 2-D: x₁ inside the dense part, x₂ into the sparse band above 0.7.
    xq.push(dim === 1 ? i / 20 : (0.8 * i) / 20);
    if (dim === 2) xq.push(((i * 7) % 20) / 20);
  }
  return { x, y, xq: Float32Array.from(xq) };
}

for (const [dim, kernel, ties] of [
  [1, 'gaussian', false],
  [1, 'epanechnikov', false],
  [1, 'tricube', true],
  [2, 'gaussian', false],
  [2, 'tricube', false],
]) {
  test(`local-quadratic ${dim}-D ${kernel}${ties ? ' with ties' : ''}, fixed h: predict, predictInterval (global), ν, σ̂², gradient against the float64 loop`, () => {
    const { x, y, xq } = sample(20 + dim, dim === 1 ? 200 : 300, dim, ties);
    const compact = kernel !== 'gaussian';
    const bandwidth = dim === 1 ? (compact ? 0.16 : 0.06) : compact ? [0.6, 0.7] : [0.14, 0.16];
    const options = { dim, kernel, estimator: LQ, bandwidth };
    const model = ka.kernelRegression(x, y, options);
    assert.equal(model.estimator, LQ);
    assert.equal(model.method, 'exact');
    const ref = referenceLocalFit(x, y, xq, { ...options, bandwidth: [bandwidth].flat().map(Math.fround) });
    const summary = referenceFitSummary(x, y, { ...options, bandwidth: [bandwidth].flat().map(Math.fround) });
    // Designs the guard (pivot floor 1e-2) leaves alone; the sparse corner of the 2-D sample comes within 1.3e-2.
    assert.ok(ref.minPivotRatio > 0.012 && summary.minPivotRatio > 0.012, 'a design the guard leaves alone');
    const band = model.predictInterval(xq, { level: 0.9 });
    const err = maxAbsDiff(band.mean, ref.mean);
    assert.ok(err <= 2e-5 * rangeOf(y), `mean off the float64 loop by ${err}`);
    assert.deepEqual(model.predict(xq), band.mean);
    assertRelative([model.effectiveDegreesOfFreedom], [summary.trace], 1e-4, 'ν');
    assertRelative(model.residualVariance, summary.sigma2, 1e-4, 'σ̂²');
    const stderr = ref.sumSq.map((s) => Math.sqrt(summary.sigma2[0] * s));
    assertRelative(band.stderr, stderr, 1e-4, 'stderr');
    assert.deepEqual(model.warnings, []);
    if (kernel !== 'tricube' || dim === 2) {
      // The slope of the local parabola (the derivative of the fit at fixed h, as R's locpoly(drv = 1) takes it).
      const g = model.gradient(xq);
      const slope = referenceLocalSlope(x, y, xq, { ...options, bandwidth: [bandwidth].flat().map(Math.fround) });
      const scale = rangeOf(slope.slope);
      assert.ok(
        maxAbsDiff(g.gradient, slope.slope) <= 1e-4 * scale,
        `gradient: ${maxAbsDiff(g.gradient, slope.slope)}`,
      );
      const se = slope.sumSq.map((s) => Math.sqrt(summary.sigma2[0] * s));
      assertRelative(g.stderr, se, 1e-3, 'gradient stderr');
    }
    model.dispose();
  });
}

test('local-quadratic keeps a peak local-linear flattens, and reproduces a parabola at the edges', () => {
  const n = 200;
  const x = Float64Array.from({ length: n }, (_, i) => i / (n - 1));
  const y = x.map((v) => 1 + 2 * v - 3 * v * v);
  const q = [0, 0.5, 1];
  const lq = ka.kernelRegression(x, y, { dim: 1, estimator: LQ, bandwidth: 0.1 });
  const ll = ka.kernelRegression(x, y, { dim: 1, estimator: 'local-linear', bandwidth: 0.1 });
  assert.ok(maxAbsDiff(lq.predict(q), [1, 1.25, 0]) < 1e-5);
  assert.ok(Math.abs(ll.predict([0.5])[0] - 1.25) > 1e-2); // about 3h²: the curvature flattened
  lq.dispose();
  ll.dispose();
});

test("local-quadratic predictInterval variance: 'local': the float64 σ²(q)·Σℓ² at the chosen variance bandwidth", () => {
  const rand = mulberry32(31);
  const n = 160;
  const x = Float32Array.from({ length: n }, () => rand());
  const y = Float32Array.from(x, (v) => Math.sin(5 * v) + (0.05 + 0.3 * v) * (rand() - 0.5) * 2);
  const xq = Float32Array.from({ length: 15 }, (_, i) => 0.05 + i / 16);
  const options = { dim: 1, estimator: LQ, bandwidth: 0.1 };
  const model = ka.kernelRegression(x, y, options);
  const band = model.predictInterval(xq, { variance: 'local' });
  const lv = model.localVariance;
  const ref = referenceLocalBand(
    x,
    y,
    xq,
    { ...options, bandwidth: [Math.fround(0.1)] },
    Array.from(lv.bandwidth, Math.fround),
  );
  for (let i = 0; i < xq.length; i++)
    assert.ok(
      Math.abs(band.stderr[i] - ref.stderr[i]) <= 1e-3 * ref.stderr[i],
      `row ${i}: ${band.stderr[i]} vs ${ref.stderr[i]}`,
    );
  model.dispose();
});

test('local-quadratic CV and AICc: cvScore at a bandwidth and the searches against the float64 leave-one-out loop', () => {
  const { x, y } = sample(41, 120, 1);
  const n = y.length;
  const looScore = (h) => {
    let sum = 0;
    for (let i = 0; i < n; i++) {
      const keep = (_, j) => j !== i;
      const fit = referenceLocalFit(x.filter(keep), y.filter(keep), [x[i]], { dim: 1, estimator: LQ, bandwidth: h });
      sum += (y[i] - fit.mean[0]) ** 2;
    }
    return sum / n;
  };
  for (const h of [0.05, 0.1]) {
    const got = ka.cvScore(x, y, { dim: 1, estimator: LQ, bandwidth: h });
    assertRelative([got], [looScore(Math.fround(h))], 1e-6, `cvScore at ${h}`);
  }
  const model = ka.kernelRegression(x, y, { dim: 1, estimator: LQ, bandwidth: 'cv' });
  const h = model.bandwidth[0];
  assertRelative([model.selection.score], [looScore(Math.fround(h))], 1e-6, 'the search score');
  for (const f of [0.9, 1.1])
    assert.ok(model.selection.score <= looScore(Math.fround(h * f)) * (1 + 1e-9), `a minimum (×${f})`);
  // Local-quadratic wants a wider window than local-linear on the same data (its bias is of higher order).
  const ll = ka.kernelRegression(x, y, { dim: 1, estimator: 'local-linear', bandwidth: 'cv' });
  assert.ok(h > ll.bandwidth[0], `h: local-quadratic ${h}, local-linear ${ll.bandwidth[0]}`);
  const aicc = ka.kernelRegression(x, y, { dim: 1, estimator: LQ, bandwidth: 'aicc' });
  const s = referenceFitSummary(x, y, { dim: 1, estimator: LQ, bandwidth: [Math.fround(aicc.bandwidth[0])] });
  // Hurvich, Simonoff & Tsai (1998): ln σ̂² + (1 + ν/n) / (1 − (ν + 2)/n), σ̂² = RSS/n.
  const want = Math.log(s.rss[0] / n) + (1 + s.trace / n) / (1 - (s.trace + 2) / n);
  assertRelative([aicc.selection.score], [want], 1e-6, 'AICc');
  for (const m of [model, ll, aicc]) m.dispose();
});

test('local-quadratic span fits and robust fits against the float64 loops', () => {
  const { x, y, xq } = sample(51, 200, 1);
  // span·n = 60, an integer: the neighbour count is the same whether the span takes ⌈f·n⌉ or ⌊f·n⌋.
  const span = ka.kernelRegression(x, y, { dim: 1, kernel: 'tricube', estimator: LQ, bandwidth: { span: 0.3 } });
  const want = referenceSpanFit(x, y, xq, { dim: 1, kernel: 'tricube', estimator: LQ, span: 0.3 });
  assert.ok(maxAbsDiff(span.predict(xq), want.mean) <= 1e-4 * rangeOf(y));
  span.dispose();
  const outliers = Float32Array.from(y, (v, j) => (j % 17 === 3 ? v + 6 : v));
  const options = { dim: 1, kernel: 'tricube', estimator: LQ, bandwidth: 0.2 };
  const robust = ka.kernelRegression(x, outliers, { ...options, robust: { iterations: 3 } });
  const ref = referenceRobustFit(x, outliers, xq, { ...options, bandwidth: [Math.fround(0.2)] }, 3);
  assert.ok(maxAbsDiff(robust.predict(xq), ref.mean) <= 1e-4 * rangeOf(outliers));
  assert.ok(maxAbsDiff(robust.robustnessWeights, ref.robustnessWeights) < 1e-3);
  robust.dispose();
});

test("local-quadratic's guard: a window with two distinct x warns 'guard'; the grid is refused, 'auto' runs exactly", () => {
  // Clusters of two points 0.03 apart, 0.3 between clusters: an Epanechnikov window of 0.1 holds two distinct x,
  // too few for a parabola (local-linear fits them).
  const x = Float64Array.from({ length: 40 }, (_, i) => Math.floor(i / 2) * 0.3 + (i % 2) * 0.03);
  const y = x.map((v, i) => Math.sin(v) + (i % 3) * 0.01);
  const model = ka.kernelRegression(x, y, { dim: 1, kernel: 'epanechnikov', estimator: LQ, bandwidth: 0.1 });
  const guard = model.warnings.find((w) => w.code === 'guard');
  assert.ok(guard, JSON.stringify(model.warnings));
  assert.match(guard.message, /or local-linear/);
  assert.ok(model.predict([0.55]).every(Number.isFinite));
  model.dispose();
  assert.throws(
    () => ka.kernelRegression(x, y, { dim: 1, estimator: LQ, bandwidth: 0.3, method: 'grid' }),
    (e) =>
      e instanceof KernelAttentionError &&
      e.code === 'BadArgument' &&
      e.argument === 'options.method' &&
      /local-quadratic/.test(e.message),
  );
  const p = ka.plan('regression', { n: 100000, dim: 1, estimator: LQ });
  assert.equal(p.method, 'exact');
  assert.match(p.reason, /local-quadratic/);
});
