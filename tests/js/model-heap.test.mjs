// Models own their sample in the wasm heap: predict copies only its queries (the heap's traffic counter says what was
// copied in), dispose() — or, as a safety net, garbage collection — gives the sample back, and withBandwidth() shares
// it with a model at another bandwidth that predicts as a fresh fit at that bandwidth would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { makeEngine } from '../../web/src/engine.js';
import { makeBandwidth } from '../../web/src/bandwidth.js';
import { makeRegression } from '../../web/src/regression.js';
import { countedModule } from './counted.mjs';
import { maxAbsDiff, mulberry32, referenceLocalFit } from './reference.mjs';

const { module, live } = await countedModule();
const engine = makeEngine(module);
const { selectBandwidth, selectBandwidthAsync } = makeBandwidth(engine, 1);
const kernelRegression = makeRegression(engine, 1, selectBandwidth, selectBandwidthAsync);

function sample(n, dim, seed) {
  const rand = mulberry32(seed);
  const x = Float64Array.from({ length: n * dim }, rand);
  const y = Float64Array.from({ length: n }, (_, i) => Math.sin(6 * x[i * dim]) + (dim > 1 ? x[i * dim + 1] : 0));
  for (let i = 0; i < n; i++) y[i] += 0.3 * (rand() - 0.5);
  return { x, y };
}
const queries = (I, dim, seed) => Float64Array.from({ length: I * dim }, mulberry32(seed));

/** The bytes `run` copies from JS into the heap, and its result. */
function traffic(run) {
  const before = engine.heapTraffic();
  const result = run();
  return { bytes: engine.heapTraffic() - before, result };
}

// What a call copies besides its queries: the bandwidth (dim floats) and the error estimate's seed (one double).
const CONSTANT = 64;

function assertCopiesOnlyQueries(model, n, dim, I, gradient = true) {
  const xq = queries(I, dim, 7);
  const q = I * dim * 4;
  for (const [name, run] of [
    ['predict', () => model.predict(xq)],
    ['predictInterval', () => model.predictInterval(xq)],
    ...(gradient ? [['gradient', () => model.gradient(xq)]] : []),
  ]) {
    const { bytes } = traffic(run);
    assert.ok(bytes >= q && bytes <= q + CONSTANT, `${name} on ${n} points copied ${bytes} bytes for ${q} of queries`);
  }
}

test('predict on a model of 10⁶ points copies only its queries (1-D grid; 1-D and 2-D exact, smaller)', async () => {
  const { x, y } = sample(1e6, 1, 1);
  const grid = kernelRegression(x, y, { dim: 1, bandwidth: 0.02 });
  assert.equal(grid.method, 'grid');
  assertCopiesOnlyQueries(grid, 1e6, 1, 512); // gradient() from the grid's moments, as predict()
  const copied = traffic(() => grid.predictAsync(queries(512, 1, 3)));
  assert.ok(copied.bytes <= 512 * 4 + CONSTANT, `predictAsync copied ${copied.bytes}`);
  await copied.result;
  grid.dispose();
  // An exact model's summary (its fit at its own n points) would take minutes at 10⁶: 10⁵ points.
  const exact = kernelRegression(x.subarray(0, 1e5), y.subarray(0, 1e5), { dim: 1, bandwidth: 0.002, method: 'exact' });
  assert.equal(exact.method, 'exact');
  assertCopiesOnlyQueries(exact, 1e5, 1, 512);
  exact.dispose();

  const s = sample(20000, 2, 2);
  const plane = kernelRegression(s.x, s.y, { dim: 2, bandwidth: [0.05, 0.08], method: 'exact' });
  assertCopiesOnlyQueries(plane, 20000, 2, 512);
  // The resident sample is the sample: the model still agrees with the float64 reference.
  const xq = queries(16, 2, 11);
  const want = referenceLocalFit(s.x, s.y, xq, { dim: 2, estimator: 'local-linear', bandwidth: [0.05, 0.08] }).mean;
  assert.ok(maxAbsDiff(plane.predict(xq), want) < 1e-4, 'the 2-D model against the reference');
  plane.dispose();
  assert.equal(live.size, 0, 'disposed models hold nothing');
});

test('1,000 create/predict/dispose cycles leave the heap as it was', () => {
  const { x, y } = sample(300, 1, 3);
  const xq = queries(20, 1, 4);
  let size = 0;
  for (let k = 0; k < 1000; k++) {
    const model = kernelRegression(x, y, { dim: 1, bandwidth: 0.05 + (k % 7) * 0.01, method: 'exact' });
    model.predict(xq);
    model.dispose();
    assert.equal(live.size, 0, `cycle ${k}: ${live.size} allocations outstanding`);
    assert.deepEqual(engine.residentUse(), { blocks: 0, bytes: 0 });
    if (k === 10) size = module.HEAPU8.length;
  }
  assert.equal(module.HEAPU8.length, size, 'wasm memory grew over the cycles');
});

test('a model dropped without dispose() gives its sample back when it is garbage-collected', async () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc');
  const { x, y } = sample(1000, 1, 5);
  (() => {
    const model = kernelRegression(x, y, { dim: 1, bandwidth: 0.1 });
    model.predict([0.5]);
  })();
  assert.ok(engine.residentUse().blocks >= 2);
  for (let k = 0; k < 50 && engine.residentUse().blocks > 0; k++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.deepEqual(engine.residentUse(), { blocks: 0, bytes: 0 });
  assert.equal(live.size, 0);
});

test('withBandwidth() shares the sample and predicts as a fresh fit at that bandwidth', () => {
  const { x, y } = sample(4000, 1, 6);
  const xq = queries(300, 1, 8);
  for (const options of [
    { dim: 1, bandwidth: 0.05, method: 'exact' },
    { dim: 1, bandwidth: 0.05, method: 'exact', estimator: 'nadaraya-watson', kernel: 'epanechnikov' },
    { dim: 1, bandwidth: 'cv', method: 'grid', tolerance: 1e-4 },
    { dim: 1, bandwidth: { span: 0.3 } },
    { dim: 1, bandwidth: 0.05, method: 'sparse', estimator: 'nadaraya-watson' },
  ]) {
    const what = JSON.stringify(options);
    const model = kernelRegression(x, y, options);
    const before = engine.residentUse();
    const { bytes, result: next } = traffic(() => model.withBandwidth(0.03));
    assert.ok(bytes <= CONSTANT, `${what}: withBandwidth copied ${bytes} bytes`);
    assert.deepEqual(engine.residentUse(), before, `${what}: no second copy of the sample`);
    const fresh = kernelRegression(x, y, {
      ...options,
      bandwidth: 0.03,
      ...(options.bandwidth.span && { method: 'exact' }),
    });
    assert.deepEqual(next.selection.rule, 'fixed');
    assert.equal(next.selection.score, null);
    assert.deepEqual(next.bandwidth, fresh.bandwidth);
    assert.equal(next.method, fresh.method, what);
    if (next.method === 'grid') {
      // Its grid may keep the finer bins of the first bandwidth: the same fit within the grid's tolerance.
      const [a, b] = [next.predictInterval(xq), fresh.predictInterval(xq)];
      assert.ok(maxAbsDiff(a.mean, b.mean) < 2 * 1e-4 * 2.4, `${what}: as a fresh fit, within the tolerance`);
    } else assert.deepEqual(next.predictInterval(xq), fresh.predictInterval(xq), `${what}: as a fresh fit`);
    assert.equal(next.effectiveDegreesOfFreedom, fresh.effectiveDegreesOfFreedom);
    assert.deepEqual(next.residualVariance, fresh.residualVariance);
    assert.deepEqual(next.warnings, fresh.warnings);
    // Against the float64 reference, within the grid's tolerance where the model is binned.
    const want = referenceLocalFit(x, y, xq, {
      dim: 1,
      estimator: options.estimator ?? 'local-linear',
      kernel: options.kernel ?? 'gaussian',
      bandwidth: [0.03],
    }).mean;
    assert.ok(maxAbsDiff(next.predict(xq), want) < (next.method === 'grid' ? 2e-3 : 1e-4), `${what}: reference`);
    // Disposing the first keeps the second working, and the last one gives the sample back.
    const before2 = next.predict(xq);
    model.dispose();
    assert.deepEqual(next.predict(xq), before2);
    const third = next.withBandwidth(0.04);
    next.dispose();
    assert.throws(() => next.predict(xq), { code: 'Disposed' });
    assert.throws(() => next.withBandwidth(0.1), { code: 'Disposed' });
    assert.ok(third.predict(xq).every(Number.isFinite));
    assert.throws(
      () => third.withBandwidth(0),
      (e) => e.code === 'BadBandwidth' && e.argument === 'h',
    );
    third.dispose();
    fresh.dispose();
    assert.equal(live.size, 0, `${what}: allocations outstanding`);
  }
});

test('withBandwidth() on a robust model refits its robustness weights at the new bandwidth', () => {
  const { x, y } = sample(500, 1, 9);
  y[10] += 8;
  const options = { dim: 1, bandwidth: 0.08, robust: true };
  const model = kernelRegression(x, y, options);
  const next = model.withBandwidth(0.05);
  const fresh = kernelRegression(x, y, { ...options, bandwidth: 0.05 });
  const xq = queries(40, 1, 12);
  assert.deepEqual(next.predict(xq), fresh.predict(xq));
  assert.deepEqual(next.robustnessWeights, fresh.robustnessWeights);
  for (const m of [model, next, fresh]) m.dispose();
  assert.equal(live.size, 0);
});

test('a grid model re-convolves its kept bins after withBandwidth() and re-bins only for a finer bandwidth', () => {
  const { x, y } = sample(100000, 1, 13);
  const xq = queries(512, 1, 14);
  // The handle of each grid fit, to read its counts (the engine looks module._gridModelFit up at every call).
  const fit = module._gridModelFit;
  let handle = 0;
  module._gridModelFit = (h, ...rest) => {
    handle = h;
    return fit(h, ...rest);
  };
  try {
    const model = kernelRegression(x, y, { dim: 1, bandwidth: 0.01 });
    assert.equal(model.method, 'grid');
    model.predict(xq);
    model.predict(xq);
    const counts = (h) => {
      const { binnings, convolutions } = engine.gridModelCounts({ model: h });
      return { binnings, convolutions };
    };
    assert.deepEqual(counts(handle), { binnings: 1, convolutions: 1 }, 'the same bandwidth again');
    const wider = model.withBandwidth(0.015);
    const got = wider.predict(xq);
    assert.deepEqual(counts(handle), { binnings: 1, convolutions: 2 }, 'kept bins, convolved again');
    const want = referenceLocalFit(x, y, xq, { dim: 1, estimator: 'local-linear', bandwidth: [0.015] }).mean;
    assert.ok(maxAbsDiff(got, want) < 1e-3 * 2.4, `within the tolerance of the float64 fit: ${maxAbsDiff(got, want)}`);
    const fresh = kernelRegression(x, y, { dim: 1, bandwidth: 0.015 });
    assert.ok(maxAbsDiff(got, fresh.predict(xq)) < 1e-3 * 2.4, 'within the tolerance of a fresh grid model');
    fresh.dispose();
    const finer = wider.withBandwidth(0.004);
    finer.predict(xq);
    assert.deepEqual(counts(handle), { binnings: 2, convolutions: 3 }, 'finer bins needed');
    // Binned at the plan's nodes: the bytes of a fresh model.
    const freshFine = kernelRegression(x, y, { dim: 1, bandwidth: 0.004 });
    assert.deepEqual(finer.predict(xq), freshFine.predict(xq));
    for (const m of [model, wider, finer, freshFine]) m.dispose();
    assert.equal(live.size, 0);
  } finally {
    module._gridModelFit = fit;
  }
});

test('a grid model predicts beyond its data without a pass over the sample: its sorted sample gives the keys in reach', () => {
  const n = 20000; // the grid's smallest sample under method 'auto'; the float64 reference reads I × n weights
  const { x, y } = sample(n, 1, 17);
  const fit = module._gridModelFit;
  let handle = 0;
  module._gridModelFit = (h, ...rest) => {
    handle = h;
    return fit(h, ...rest);
  };
  try {
    for (const estimator of ['nadaraya-watson', 'local-linear']) {
      const h = 0.002;
      const model = kernelRegression(x, y, { dim: 1, bandwidth: h, estimator });
      assert.equal(model.method, 'grid');
      model.predict(queries(256, 1, 18));
      assert.deepEqual(engine.gridModelCounts({ model: handle }), {
        binnings: 1,
        convolutions: 1,
        sorts: 0,
        keysRead: 0,
      });
      // 0.3 to 10⁴ bandwidths beyond either end: the grid's output nodes, its exact extrapolations, the far rules.
      const beyond = Float64Array.from({ length: 256 }, (_, i) => {
        const by = [0.3, 2, 6, 20, 100, 1e4][i % 6] * h * (1 + 0.01 * i);
        return i % 2 ? 1 + by : -by;
      });
      // The float64 loop, where its design is well conditioned (local-linear's guard acts from a few bandwidths out,
      // and the loop's differs from the engine's there), and the exact engine's fit everywhere.
      const want = referenceLocalFit(x, y, beyond, { dim: 1, estimator, bandwidth: [h] }).mean;
      const near = (i) => estimator === 'nadaraya-watson' || Math.min(beyond[i], 1 - beyond[i]) > -h;
      const exactModel = kernelRegression(x, y, { dim: 1, bandwidth: h, estimator, method: 'exact' });
      const exact = exactModel.predict(beyond);
      exactModel.dispose();
      for (let call = 0; call < 2; call++) {
        const { keysRead: before } = engine.gridModelCounts({ model: handle });
        const got = model.predict(beyond);
        const counts = engine.gridModelCounts({ model: handle });
        assert.equal(counts.sorts, 1, 'the sample sorted once, by the first call with such rows');
        assert.equal(counts.binnings, 1);
        // Each row reads at most the keys in its reach (about 620 at this density): not a pass per row or call.
        assert.ok(counts.keysRead - before < 256 * 1000, `read ${counts.keysRead - before} keys`);
        // The first call gathers the keys near each end, a later one none (the grid and the kept far tables).
        assert.equal(counts.keysRead > before, call === 0, 'keys read');
        const worst = maxAbsDiff(
          got.filter((_, i) => near(i)),
          want.filter((_, i) => near(i)),
        );
        assert.ok(worst < 1e-3 * 2.4, `${estimator}: within the tolerance of the float64 fit: ${worst}`);
        assert.ok(maxAbsDiff(got, exact) < 1e-3 * 2.4, `${estimator}: within the tolerance of the exact fit`);
      }
      model.dispose();
    }
    assert.equal(live.size, 0);
  } finally {
    module._gridModelFit = fit;
  }
});

test('a model planned on the grid, at a bandwidth no grid serves, fits exactly over its sample sorted once', () => {
  // The grid bins the sample in its own order, so the model keeps it unsorted; its exact fits read the grid model's
  // sorted copy (each query block the key tiles in its reach), as a model planned exact reads its own: the same bytes.
  const n = 20000;
  const { x, y } = sample(n, 1, 23);
  const h = 2e-5; // 0.4 of the mean spacing: no grid of at most 2^18 nodes serves it
  const calls = ['_gridModelFit', '_gridModelSummary', '_gridModelGradient'].map((name) => [name, module[name]]);
  let handle = 0;
  for (const [name, call] of calls) {
    module[name] = (model, ...rest) => {
      handle = model;
      return call(model, ...rest);
    };
  }
  try {
    const xq = Float64Array.from(x.subarray(0, 4000)); // the sample's own points, in its (unsorted) order
    for (const estimator of ['nadaraya-watson', 'local-linear']) {
      const model = kernelRegression(x, y, { dim: 1, bandwidth: h, estimator });
      assert.equal(model.method, 'exact');
      assert.match(model.reason, /no grid/);
      const exact = kernelRegression(x, y, { dim: 1, bandwidth: h, estimator, method: 'exact' });
      const got = model.predict(xq);
      assert.deepEqual(got, exact.predict(xq));
      assert.equal(model.effectiveDegreesOfFreedom, exact.effectiveDegreesOfFreedom);
      assert.deepEqual(model.residualVariance, exact.residualVariance);
      assert.deepEqual(model.gradient(xq.subarray(0, 256)), exact.gradient(xq.subarray(0, 256)));
      const counts = engine.gridModelCounts({ model: handle });
      assert.deepEqual([counts.sorts, counts.binnings], [1, 0], 'sorted once, never binned');
      if (estimator === 'nadaraya-watson') {
        const some = xq.subarray(0, 64);
        const want = referenceLocalFit(x, y, some, { dim: 1, estimator, bandwidth: [h] }).mean;
        assert.ok(
          maxAbsDiff(got.subarray(0, 64), want) < 1e-4,
          `the float64 fit: ${maxAbsDiff(got.subarray(0, 64), want)}`,
        );
      }
      model.dispose();
      exact.dispose();
    }
    assert.equal(live.size, 0);
  } finally {
    for (const [name, call] of calls) module[name] = call;
  }
});

/**
 * The float64 loop of a 1-D Gaussian fit at q over every key, local-linear with the engine's guard written out (the
 * slope pivot raised to at least 1e-2 of its diagonal, docs/regression.md): g = A'⁻¹e₁ for
 * A' = [[S₀, S₁], [S₁, S₁²/S₀ + pivot]].
 */
function guardedFit(x, y, q, h, estimator) {
  let top = -Infinity;
  for (const xj of x) top = Math.max(top, -(((xj - q) / h) ** 2) / 2);
  let [s0, s1, s2, t0, t1] = [0, 0, 0, 0, 0];
  for (let j = 0; j < x.length; j++) {
    const u = (x[j] - q) / h;
    const w = Math.exp(-(u * u) / 2 - top);
    [s0, s1, s2, t0, t1] = [s0 + w, s1 + w * u, s2 + w * u * u, t0 + w * y[j], t1 + w * u * y[j]];
  }
  if (estimator === 'nadaraya-watson') return t0 / s0;
  const pivot = Math.max(s2 - (s1 * s1) / s0, 1e-2 * s2);
  return (((s1 * s1) / s0 + pivot) * t0 - s1 * t1) / (s0 * pivot);
}

test('a grid model predicts 20 to 10⁴ bandwidths beyond its data from its far tables: no key read after the first call', () => {
  const n = 20000;
  const { x, y } = sample(n, 1, 19);
  const xs = Float32Array.from(x);
  const ys = Float32Array.from(y);
  const [lo, hi] = [Math.min(...xs), Math.max(...xs)];
  const [ylo, yhi] = [Math.min(...ys), Math.max(...ys)];
  const fit = module._gridModelFit;
  let handle = 0;
  module._gridModelFit = (h, ...rest) => {
    handle = h;
    return fit(h, ...rest);
  };
  try {
    for (const estimator of ['nadaraya-watson', 'local-linear']) {
      const h = 0.002;
      const model = kernelRegression(x, y, { dim: 1, bandwidth: h, estimator });
      assert.equal(model.method, 'grid');
      const beyond = Float64Array.from({ length: 128 }, (_, i) => {
        const by = [20, 27, 35, 50, 80, 130, 300, 1e3, 1e4][i % 9] * h * (1 + 0.003 * i);
        return i % 2 ? hi + by : lo - by;
      });
      for (let call = 0; call < 2; call++) {
        const { keysRead: before } = call ? engine.gridModelCounts({ model: handle }) : { keysRead: 0 };
        const got = model.predict(beyond);
        const counts = engine.gridModelCounts({ model: handle });
        assert.equal(counts.sorts, 1);
        // The first call gathers the keys within reach of 20 h behind each end (some 50 each), the second none.
        assert.ok(call ? counts.keysRead === before : counts.keysRead < 1000, `read ${counts.keysRead - before} keys`);
        const q32 = Float32Array.from(beyond);
        const h32 = Math.fround(h);
        for (let i = 0; i < q32.length; i++) {
          const want = guardedFit(xs, ys, q32[i], h32, estimator);
          const err = Math.abs(got[i] - want) / (yhi - ylo);
          assert.ok(err < 1e-4, `${estimator} at ${q32[i]}: ${got[i]} vs ${want} (${err} of range(y))`);
        }
      }
      model.dispose();
    }
    assert.equal(live.size, 0);
  } finally {
    module._gridModelFit = fit;
  }
});
