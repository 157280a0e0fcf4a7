// predictInterval's variance: 'local' against the float64 loop of reference.mjs, and a small run of the coverage
// simulation (scripts/coverage.mjs; its full run is the table of docs/regression.md).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { makeEngine } from '../../web/src/engine.js';
import { makeBandwidth } from '../../web/src/bandwidth.js';
import { makeRegression } from '../../web/src/regression.js';
import { coverage } from '../../scripts/coverage.mjs';
import { countedModule } from './counted.mjs';
import { mulberry32, referenceLocalBand } from './reference.mjs';

const ka = await init({ threads: 1 });

/** n points in [0, 1]^dim; y = sin + normal noise whose sd grows 5× along the first coordinate. */
function heteroscedastic(seed, n, dim) {
  const rand = mulberry32(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const x = Float64Array.from({ length: n * dim }, () => Math.fround(rand()));
  const y = new Float64Array(n);
  for (let j = 0; j < n; j++)
    y[j] = Math.fround(
      Math.sin(4 * x[j * dim]) + (dim > 1 ? x[j * dim + 1] : 0) + 0.1 * (1 + 4 * x[j * dim]) * normal(),
    );
  const xq = Float64Array.from({ length: 30 * dim }, () => Math.fround(0.05 + 0.9 * rand()));
  return { x, y, xq };
}

const relErr = (a, b) => a.reduce((worst, v, i) => Math.max(worst, Math.abs(v - b[i]) / Math.abs(b[i])), 0);

for (const [dim, estimator, weighted] of [
  [1, 'local-linear', false],
  [1, 'nadaraya-watson', true],
  [2, 'local-linear', false],
]) {
  test(`local band, ${estimator}, ${dim}-D${weighted ? ', observation weights' : ''}: the float64 σ²(q)·Σℓ² at the chosen variance bandwidth`, () => {
    const { x, y, xq } = heteroscedastic(3 + dim, dim === 1 ? 150 : 200, dim);
    const rand = mulberry32(11);
    const weights = weighted ? Float64Array.from({ length: y.length }, () => Math.fround(0.5 + rand())) : undefined;
    // Nadaraya–Watson gets a smaller h: its boundary bias would otherwise dominate the residuals near x = 0.
    const options = {
      dim,
      estimator,
      bandwidth: dim === 1 ? (estimator === 'local-linear' ? 0.08 : 0.03) : 0.15,
      weights,
    };
    const model = ka.kernelRegression(x, y, options);
    const band = model.predictInterval(xq, { variance: 'local' });
    const lv = model.localVariance;
    assert.ok(lv.bandwidth.every((h) => h > 0));
    const ref = referenceLocalBand(x, y, xq, options, Array.from(lv.bandwidth, Math.fround));
    // float32 fits (of y, then of the log residuals) against float64: relative 1e-3 on the standard error.
    const err = relErr(band.stderr, ref.stderr);
    assert.ok(err < 1e-3, `stderr off the reference by ${err} (relative)`);
    const z = 1.959963984540054;
    for (let i = 0; i < xq.length / dim; i++) {
      assert.ok(
        Math.abs(band.upper[i] - band.mean[i] - z * band.stderr[i]) < 1e-5,
        `row ${i}: upper = mean + z·stderr`,
      );
    }
    // Relative to the global band, the local band widens with the noise (sd 5× from x₁ = 0 to 1).
    const global = model.predictInterval(xq);
    const ratio = band.stderr.map((s, i) => s / global.stderr[i]);
    const byX = Array.from(ratio)
      .map((r, i) => [xq[i * dim], r])
      .sort((a, b) => a[0] - b[0]);
    assert.ok(byX.at(-1)[1] > 2 * byX[0][1], `ratios local/global from ${byX[0][1]} to ${byX.at(-1)[1]}`);
    model.dispose();
  });
}

test('a small coverage simulation (seeded): the local band covers the noisiest third better than the global band, and stays near 95 %', async () => {
  const r = await coverage({ n: 200, replications: 40, points: 60, seed: 1 });
  assert.ok(
    r.local.thirds[2] > r.global.thirds[2] + 0.03,
    `noisiest third: local ${r.local.thirds[2]}, global ${r.global.thirds[2]}`,
  );
  assert.ok(r.local.average > 0.9 && r.local.average < 0.99, `local average ${r.local.average}`);
  assert.ok(
    r.local.thirds.every((c) => c > 0.88),
    `local thirds ${r.local.thirds}`,
  );
});

test('the floor: where residuals vanish the local band keeps 1/10 of the global standard error', () => {
  // Noise only for x > 0.5: on the left the residuals are (nearly) 0, below the log offset σ̂²/n, and σ²(x) there
  // (about 3.6 σ̂²/n before the floor, the scale for this noise) is floored at 0.01 σ̂².
  const n = 800;
  const rand = mulberry32(21);
  const x = Float64Array.from({ length: n }, (_, j) => j / (n - 1));
  const y = x.map((v) => 2 * v + (v > 0.5 ? rand() - 0.5 : 0));
  const model = ka.kernelRegression(x, y, { dim: 1, bandwidth: 0.01 });
  const q = [0.1, 0.2, 0.3];
  const local = model.predictInterval(q, { variance: 'local' });
  const global = model.predictInterval(q);
  for (let i = 0; i < q.length; i++) {
    assert.ok(local.stderr[i] > 0);
    assert.ok(
      local.stderr[i] >= 0.1 * global.stderr[i] * (1 - 1e-6),
      `q = ${q[i]}: ${local.stderr[i]} vs global ${global.stderr[i]}`,
    );
  }
  assert.deepEqual(
    model.localVariance.floor,
    model.residualVariance.map((s) => 0.01 * s),
  );
  model.dispose();
});

test("variance defaults to 'global'; async equals sync; a bad variance is a typed error naming it", async () => {
  const { x, y, xq } = heteroscedastic(30, 100, 1);
  const model = ka.kernelRegression(x, y, { dim: 1, bandwidth: 0.1 });
  assert.deepEqual(model.predictInterval(xq), model.predictInterval(xq, { variance: 'global' }));
  assert.equal(model.localVariance, null, 'no local band yet');
  const sync = model.predictInterval(xq, { variance: 'local', level: 0.9 });
  const other = ka.kernelRegression(x, y, { dim: 1, bandwidth: 0.1 });
  const async_ = await other.predictIntervalAsync(xq, { variance: 'local', level: 0.9 });
  assert.deepEqual(async_, sync);
  assert.deepEqual(other.localVariance.bandwidth, model.localVariance.bandwidth);
  for (const bad of ['Local', null, 1]) {
    assert.throws(
      () => model.predictInterval(xq, { variance: bad }),
      (e) => e instanceof KernelAttentionError && e.code === 'BadArgument' && e.argument === 'intervalOptions.variance',
    );
    await assert.rejects(model.predictIntervalAsync(xq, { variance: bad }), { argument: 'intervalOptions.variance' });
  }
  model.dispose();
  other.dispose();
  assert.throws(() => model.predictInterval(xq, { variance: 'local' }), { code: 'Disposed' });
  assert.equal(model.localVariance, null);
});

test('a signal aborts predictIntervalAsync before the variance search', async () => {
  const { x, y, xq } = heteroscedastic(31, 100, 1);
  const model = ka.kernelRegression(x, y, { dim: 1, bandwidth: 0.1 });
  const controller = new AbortController();
  controller.abort();
  await assert.rejects(model.predictIntervalAsync(xq, { variance: 'local', signal: controller.signal }), {
    name: 'AbortError',
  });
  model.dispose();
});

test('local bands give back every allocation, the variance smoother included', async () => {
  const { module, live } = await countedModule();
  const engine = makeEngine(module);
  const { selectBandwidth, selectBandwidthAsync } = makeBandwidth(engine, 1);
  const kernelRegression = makeRegression(engine, 1, selectBandwidth, selectBandwidthAsync);
  const { x, y, xq } = heteroscedastic(32, 80, 1);
  for (const robust of [false, true]) {
    const model = kernelRegression(x, y, { dim: 1, robust });
    model.predictInterval(xq, { variance: 'local' });
    await model.predictIntervalAsync(xq, { variance: 'local' });
    model.dispose();
    assert.equal(live.size, 0, `robust ${robust}`);
  }
});

test("zero weights and points out of a compact kernel's reach: no error under empty: 'error', and they take no part", () => {
  // Points 0..59 on [0, 0.6]; point 60 alone at 1.0 with weight 0, beyond the tricube's reach (h = 0.1) of the rest.
  const { x: x0, y: y0 } = heteroscedastic(40, 60, 1);
  const x = Float64Array.from([...x0.map((v) => 0.6 * v), 1]);
  const y = Float64Array.from([...y0, 100]);
  const weights = Float64Array.from(x, (_, j) => (j === 60 ? 0 : 1));
  const options = { dim: 1, kernel: 'tricube', bandwidth: 0.1, empty: 'error' };
  for (const robust of [false, true]) {
    const model = ka.kernelRegression(x, y, { ...options, weights, robust });
    const band = model.predictInterval([0.2, 0.4], { variance: 'local' });
    // The same as without point 60 at all.
    const without = ka.kernelRegression(
      x0.map((v) => 0.6 * v),
      y0,
      { ...options, robust },
    );
    const want = without.predictInterval([0.2, 0.4], { variance: 'local' });
    assert.ok(relErr(band.stderr, want.stderr) < 1e-5, `robust ${robust}: ${band.stderr} vs ${want.stderr}`);
    if (robust) assert.equal(model.robustnessWeights[60], 0);
    model.dispose();
    without.dispose();
  }
});

test('with two columns of y each column gets its own local variance, at the one bandwidth CV chose for both', () => {
  const a = heteroscedastic(50, 120, 1);
  const b = heteroscedastic(51, 120, 1);
  // Column 2: b's y (times −3) on a's x: another noise draw on the same design.
  const y2 = new Float64Array(240);
  for (let j = 0; j < 120; j++) [y2[2 * j], y2[2 * j + 1]] = [a.y[j], -3 * b.y[j]];
  const both = ka.kernelRegression(a.x, y2, { dim: 1, bandwidth: 0.08 });
  const band = both.predictInterval(a.xq, { variance: 'local' });
  const h = Array.from(both.localVariance.bandwidth, Math.fround);
  assert.equal(both.localVariance.scale.length, 2);
  for (const [c, y] of [
    [0, a.y],
    [1, b.y.map((v) => -3 * v)],
  ]) {
    const want = referenceLocalBand(a.x, y, a.xq, { dim: 1, bandwidth: 0.08 }, h);
    const got = Float64Array.from({ length: 30 }, (_, i) => band.stderr[2 * i + c]);
    assert.ok(relErr(got, want.stderr) < 1e-3, `column ${c}: ${relErr(got, want.stderr)}`);
  }
  both.dispose();
});
