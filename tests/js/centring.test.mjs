// Centred arithmetic (web/src/frame.js; docs/design.md, "The frame"): inputs far from the origin, given in double,
// give the answers of a float64 loop on the same numbers; regression results come back as Float64Array; states
// computed in shards agree on one shift and merge to the one-call result; attentionWithInfo's warnings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../web/src/index.js';
import { chooseShift } from '../../web/src/frame.js';
import { initOptions } from './build.mjs';
import { mulberry32, referenceAttention, referenceLocalFit, referenceWeights } from './reference.mjs';

const ka = await init(initOptions);
const range = (a) => Math.max(...a) - Math.min(...a);
const worst = (got, want) => Math.max(...Array.from(want, (w, i) => Math.abs(got[i] - w)));

test('the shift is 0 where a column is near the origin (largest |v| below 4 half-ranges) or constant, else a coarse midrange', () => {
  assert.equal(chooseShift(1, [-1, 2]), null);
  assert.equal(chooseShift(1, [0.1, 1]), null); // largest |v| below 4 half-ranges: not worth moving
  assert.equal(chooseShift(1, [5, 5, 5]), null);
  assert.equal(chooseShift(1, [1e30, 1e30 + 1e20]), null); // beyond 2⁹⁶: a far query could overflow float32 after it
  const [c] = chooseShift(1, [1.7e9 + 3, 1.7e9 + 10]); // half-range 3.5: a multiple of 2
  assert.equal(c % 2, 0);
  assert.ok(Math.abs(c - (1.7e9 + 6.5)) <= 1, `${c}`);
  const two = chooseShift(2, [1, 1000, -1, 1100], [3, 1200]); // columns [-1, 3] and [1000, 1200]
  assert.equal(two[0], 0);
  assert.equal(two[1], 1088); // 1100 to a multiple of 64, the power of two below the half-range 100
});

// A smooth curve sampled with noise: x as Unix seconds a minute apart, y near an offset.
function series(n, x0, y0, seed) {
  const rand = mulberry32(seed);
  const x = Float64Array.from({ length: n }, (_, i) => x0 + 60 * i + 20 * rand());
  const y = Float64Array.from(x, (t) => y0 + Math.sin((t - x0) / 900) + 0.1 * (rand() - 0.5));
  const q = Float64Array.from({ length: 37 }, (_, i) => x0 + 300 + (i * 60 * (n - 10)) / 36);
  return { x, y, q };
}

for (const estimator of ['nadaraya-watson', 'local-linear']) {
  for (const method of ['exact', 'grid']) {
    test(`${estimator} ${method}: x ≈ 1.7e9 s and y ≈ 1.7e9 come back as Float64Array within 1e-5 of range(y)`, () => {
      const { x, y, q } = series(400, 1.7e9, 1.7e9, 3);
      const h = 240;
      const model = ka.kernelRegression(x, y, { dim: 1, estimator, bandwidth: h, method });
      // The exact fit against a float64 loop; the grid (whose own error is its tolerance) against the grid on the
      // same data moved to the origin, shifted back.
      const centred = ka.kernelRegression(
        x.map((t) => t - 1.7e9),
        y.map((v) => v - 1.7e9),
        { dim: 1, estimator, bandwidth: h, method },
      );
      try {
        assert.equal(model.method, method);
        const want =
          method === 'exact'
            ? referenceLocalFit(x, y, q, { dim: 1, bandwidth: h, estimator }).mean
            : centred.predict(q.map((t) => t - 1.7e9)).map((v) => v + 1.7e9);
        const got = model.predict(q);
        assert.ok(got instanceof Float64Array);
        const err = worst(got, want) / range(y);
        assert.ok(err <= 1e-5, `${err.toExponential(3)} of range(y)`);
        const band = model.predictInterval(q);
        for (const key of ['mean', 'lower', 'upper', 'stderr']) assert.ok(band[key] instanceof Float64Array, key);
        assert.deepEqual(band.mean, got);
        for (let i = 0; i < q.length; i++) {
          assert.ok(
            band.lower[i] < got[i] && got[i] < band.upper[i],
            `row ${i}: ${band.lower[i]} ${got[i]} ${band.upper[i]}`,
          );
          assert.ok(Math.abs(band.upper[i] - got[i] - (got[i] - band.lower[i])) <= 1e-6 * range(y));
        }
      } finally {
        model.dispose();
        centred.dispose();
      }
    });
  }
}

test("async predictions are Float64Array and the same numbers; empty: 'zero' rows read 0 with y shifted", async () => {
  const { x, y, q } = series(200, 1.7e9, 5e4, 4);
  const model = ka.kernelRegression(x, y, {
    dim: 1,
    kernel: 'epanechnikov',
    estimator: 'nadaraya-watson',
    bandwidth: 200,
    empty: 'zero',
  });
  const nan = ka.kernelRegression(x, y, {
    dim: 1,
    kernel: 'epanechnikov',
    estimator: 'nadaraya-watson',
    bandwidth: 200,
  });
  try {
    const far = Float64Array.of(q[0], 1.6e9, q[5]); // the middle query is beyond every key's reach
    const got = model.predict(far);
    assert.ok(got instanceof Float64Array);
    assert.equal(got[1], 0);
    const nans = nan.predict(far);
    assert.ok(Number.isNaN(nans[1]));
    assert.equal(got[0], nans[0]);
    assert.equal(got[2], nans[2]);
    const later = await model.predictAsync(far);
    assert.ok(later instanceof Float64Array);
    assert.deepEqual(later, got);
    const band = await model.predictIntervalAsync(far);
    assert.ok(band.lower instanceof Float64Array);
  } finally {
    model.dispose();
    nan.dispose();
  }
});

test('selectBandwidth and cvScore on x ≈ 1.7e12 ms and y + 1e4 equal those on the centred data (1e-3)', () => {
  const { x, y } = series(300, 0, 0, 5);
  const xs = x.map((t) => t * 1000 + 1.7e12); // milliseconds
  const ys = y.map((v) => v + 1e4);
  const base = ka.selectBandwidth(
    x.map((t) => t * 1000),
    y,
    { dim: 1, estimator: 'local-linear' },
  );
  const moved = ka.selectBandwidth(xs, ys, { dim: 1, estimator: 'local-linear' });
  assert.ok(
    Math.abs(moved.bandwidth[0] / base.bandwidth[0] - 1) <= 1e-3,
    `${moved.bandwidth[0]} against ${base.bandwidth[0]}`,
  );
  const score = ka.cvScore(xs, ys, { dim: 1, bandwidth: base.bandwidth[0], estimator: 'local-linear' });
  assert.ok(Math.abs(score / base.score - 1) <= 1e-3, `${score} against ${base.score}`);
});

test('softmax attention with keys far from the origin (shifted alone) matches the float64 reference', () => {
  const rand = mulberry32(6);
  const [I, J, dim] = [5, 40, 2];
  const q = Float64Array.from({ length: I * dim }, () => rand() - 0.5);
  const k = Float64Array.from({ length: J * dim }, (_, n) => (n % dim === 0 ? 3e4 : -2e4) + 4 * rand());
  const v = Float64Array.from({ length: J }, () => rand());
  const want = referenceAttention(q, k, v, { dim, kernel: 'softmax' });
  const got = ka.attention(q, k, v, { dim, kernel: 'softmax' });
  assert.ok(worst(got, want) <= 1e-5, `${worst(got, want)}`);
});

test('weights, attentionAsync and attentionGradients at x ≈ 1.7e9 equal those at the origin (one frame for every chunk)', async () => {
  const { x, y, q } = series(300, 1.7e9, 0, 10);
  const options = { dim: 1, kernel: 'gaussian', bandwidth: 300 };
  const w = ka.weights(q, x, options);
  const wantW = referenceWeights(q, x, options);
  assert.ok(worst(w, wantW) <= 1e-5, `weights: ${worst(w, wantW)}`);
  const one = ka.attention(q, x, y, options);
  assert.deepEqual(await ka.attentionAsync(q, x, y, options), one);
  const dOut = Float64Array.from(q, (_, i) => Math.cos(i));
  const moved = ka.attentionGradients(q, x, y, dOut, options);
  const origin = ka.attentionGradients(
    q.map((t) => t - 1.7e9),
    x.map((t) => t - 1.7e9),
    y,
    dOut,
    options,
  );
  for (const key of ['output', 'dq', 'dk', 'dv', 'dLogBandwidth']) {
    const scale = Math.max(...Array.from(origin[key], Math.abs));
    assert.ok(worst(moved[key], origin[key]) <= 1e-4 * scale, `${key}: ${worst(moved[key], origin[key])} of ${scale}`);
  }
});

for (const kernel of ['gaussian', 'epanechnikov']) {
  test(`${kernel}: states of key shards at x ≈ 1.7e9 share the queries' shift and merge to the one-call result`, () => {
    const { x, y, q } = series(300, 1.7e9, 0, 7);
    const options = { dim: 1, kernel, bandwidth: 300 };
    const want = referenceAttention(q, x, y, options);
    const one = ka.attention(q, x, y, options);
    const cuts = [0, 97, 98, 300];
    const states = cuts
      .slice(1)
      .map((end, s) => ka.attentionState(q, x.subarray(cuts[s], end), y.subarray(cuts[s], end), options));
    const merged = ka.finalizeState(ka.mergeStates(...states));
    const scale = range(y);
    assert.ok(worst(one, want) <= 1e-5 * scale, `one call: ${worst(one, want)}`);
    assert.ok(worst(merged, want) <= 1e-5 * scale, `merged: ${worst(merged, want)}`);
    assert.ok(worst(merged, one) <= 1e-5 * scale, `merged against one call: ${worst(merged, one)}`);
  });
}

test("attentionWithInfo warns 'precision' for float32-stored inputs that kept few digits, and nothing otherwise", () => {
  const { x, y, q } = series(100, 1.7e9, 0, 8);
  const options = { dim: 1, kernel: 'gaussian', bandwidth: 300 };
  assert.deepEqual(ka.attentionWithInfo(q, x, y, options).warnings, []);
  const info = ka.attentionWithInfo(Float32Array.from(q), Float32Array.from(x), y, options);
  assert.deepEqual(
    info.warnings.map((w) => w.code),
    ['precision'],
  );
  assert.match(info.warnings[0].message, /queries, keys/);
  const sparse = ka.attentionWithInfo(q, Float32Array.from(x), y, { ...options, method: 'sparse' });
  assert.deepEqual(
    sparse.warnings.map((w) => w.code),
    ['precision'],
  );
});

// At a sample point the point's own weight keeps a 1-D design regular (the guard's pivot ratio is at least
// 1 / (1 + the neighbours' total weight)), so the guard acts on fitted values where the neighbours lie along a line in
// 2-D: a run of points along a diagonal, away from a well-sampled cloud.
test("the 'guard' warning appears where points along a line make local-linear designs near-singular, not on a well-sampled fit", () => {
  const rand = mulberry32(9);
  const cloud = Array.from({ length: 200 }, () => [rand(), rand()]).flat();
  const line = Array.from({ length: 10 }, (_, i) => [3 + i * 0.05, 3 + i * 0.05 + 1e-3 * (rand() - 0.5)]).flat();
  const f = (a, b) => Math.sin(3 * a) + b + 0.1 * (rand() - 0.5);
  const yOf = (x) => Array.from({ length: x.length / 2 }, (_, i) => f(x[2 * i], x[2 * i + 1]));
  const fine = ka.kernelRegression(cloud, yOf(cloud), { dim: 2, bandwidth: 0.1 });
  try {
    assert.deepEqual(fine.warnings, []);
  } finally {
    fine.dispose();
  }
  const x = [...cloud, ...line];
  const model = ka.kernelRegression(x, yOf(x), { dim: 2, bandwidth: 0.1 });
  try {
    assert.deepEqual(
      model.warnings.map((w) => w.code),
      ['guard'],
    );
    assert.match(model.warnings[0].message, /of 210 fitted values/);
  } finally {
    model.dispose();
  }
  const nw = ka.kernelRegression(x, yOf(x), { dim: 2, bandwidth: 0.1, estimator: 'nadaraya-watson' });
  try {
    assert.deepEqual(nw.warnings, []); // no local design, no guard
  } finally {
    nw.dispose();
  }
});
