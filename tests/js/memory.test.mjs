// White-box: the API built on a module whose _malloc/_free are counted. Every call, successful or throwing, must leave
// nothing allocated; validation errors must allocate nothing at all; memory growth must not break later calls.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeEngine } from '../../web/src/engine.js';
import { makeAttention, makeWeights } from '../../web/src/attention.js';
import { makeBandwidth } from '../../web/src/bandwidth.js';
import { makeRegression } from '../../web/src/regression.js';
import { KernelAttentionError } from '../../web/src/errors.js';
import {
  maxAbsDiff,
  mulberry32,
  randomFloat32,
  referenceAttention,
  referenceLocalFit,
  referenceWeights,
} from './reference.mjs';
import { countedModule } from './counted.mjs';

const { module, live, stats } = await countedModule();

const attention = makeAttention(makeEngine(module));
const weights = makeWeights(makeEngine(module));

function assertNothingLeft(what) {
  assert.equal(live.size, 0, `${what}: ${live.size} allocations outstanding`);
  assert.equal(stats.badFrees, 0, `${what}: free() of a pointer that was not allocated (or twice)`);
}

function assertMatches(got, want, what) {
  const err = maxAbsDiff(got, want);
  assert.ok(err <= 1e-5, `${what}: max error ${err}`);
}

const rand = mulberry32(2024);
const KERNELS = ['softmax', 'gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'];

/** A small valid call n (varied kernel, masks, heads, bandwidths) and its options. */
function validCall(n) {
  const I = 1 + (n % 7);
  const J = 1 + ((n * 5) % 9);
  const heads = n % 3 === 0 ? 2 : 1;
  const dim = 2 * heads;
  const kernel = KERNELS[n % KERNELS.length];
  const options = { dim, kernel, heads, empty: ['nan', 'zero', 'nearest'][n % 3] };
  if (kernel !== 'softmax') options.bandwidth = n % 2 ? 1.5 : randomFloat32(rand, dim, 0.5, 2);
  if (n % 4 === 1) options.mask = Uint8Array.from({ length: J }, () => (rand() < 0.3 ? 1 : 0));
  if (n % 4 === 2) options.mask = Uint8Array.from({ length: I * J }, () => (rand() < 0.3 ? 1 : 0));
  if (n % 5 === 0)
    options.groups = {
      queries: Int32Array.from({ length: I }, (_, i) => i % 2),
      keys: Array.from({ length: J }, (_, j) => j % 2),
    };
  if (n % 6 === 0) options.causal = true;
  return {
    queries: randomFloat32(rand, I * dim),
    keys: randomFloat32(rand, J * dim),
    values: randomFloat32(rand, J * heads * 2),
    options,
  };
}

test('1,000 successful calls leave no allocation outstanding and do not grow memory', () => {
  const before = module.HEAPU8.length;
  for (let n = 0; n < 1000; n++) {
    const c = validCall(n);
    const mallocs = stats.mallocs;
    const out = n % 2 ? attention(c.queries, c.keys, c.values, c.options) : weights(c.queries, c.keys, c.options);
    assert.ok(stats.mallocs > mallocs, 'the call allocated through module._malloc');
    assertNothingLeft(`call ${n}`);
    if (n % 50 === 0) {
      const want =
        n % 2
          ? referenceAttention(c.queries, c.keys, c.values, c.options)
          : referenceWeights(c.queries, c.keys, c.options);
      assertMatches(out, want, `call ${n}`);
    }
  }
  assert.equal(module.HEAPU8.length, before, 'wasm memory grew during small calls: a leak inside the core?');
});

// Calls that throw: validation errors (before any allocation) and EmptyRow (after allocation, from the engine).
const THROWING = [
  { expect: 'BadArgument', before: true, run: () => attention([0, 1], [0, 1], [1, 2], { dim: 1, heads: 2 }) },
  { expect: 'BadShape', before: true, run: () => weights([0, 1, 2], [0, 1], { dim: 2 }) },
  { expect: 'NonFinite', before: true, run: () => attention([0, NaN], [0, 1], [1, 2], { dim: 1 }) },
  { expect: 'BadBandwidth', before: true, run: () => weights([0], [0], { dim: 1, kernel: 'gaussian', bandwidth: 0 }) },
  { expect: 'BadArgument', before: true, run: () => attention([0], [0], [1], undefined) },
  {
    expect: 'OutOfMemory',
    before: true,
    run: () => weights(new Float32Array(23171), new Float32Array(23171), { dim: 1 }),
  },
  {
    expect: 'EmptyRow',
    before: false,
    run: () =>
      attention([0, 1, 2], [0, 1, 2], [1, 2, 3], {
        dim: 1,
        mask: Uint8Array.from([0, 0, 0, 1, 1, 1, 0, 0, 0]),
        empty: 'error',
      }),
  },
  {
    expect: 'EmptyRow',
    before: false,
    run: () =>
      weights([0, 5], [0, 1], {
        dim: 1,
        kernel: 'epanechnikov',
        groups: { queries: [0, 0], keys: [0, 1] },
        empty: 'error',
        heads: 1,
      }),
  },
  {
    expect: 'EmptyRow',
    before: false,
    run: () => attention([0, 0, 0, 9], [0, 0], [1, 2], { dim: 2, heads: 2, kernel: 'uniform', empty: 'error' }),
  },
];

test('1,000 calls that throw (validation and EmptyRow) leave nothing allocated; validation allocates nothing', () => {
  for (let n = 0; n < 1000; n++) {
    const row = THROWING[n % THROWING.length];
    const mallocs = stats.mallocs;
    assert.throws(
      row.run,
      (e) => e instanceof KernelAttentionError && e.code === row.expect,
      `row ${n % THROWING.length}`,
    );
    if (row.before) assert.equal(stats.mallocs, mallocs, `${row.expect} must be thrown before any allocation`);
    else assert.ok(stats.mallocs > mallocs, 'EmptyRow is thrown after the inputs were copied in');
    assertNothingLeft(`throwing call ${n} (${row.expect})`);
  }
  const c = validCall(3);
  assertMatches(
    attention(c.queries, c.keys, c.values, c.options),
    referenceAttention(c.queries, c.keys, c.values, c.options),
    'after errors',
  );
  assertNothingLeft('valid call after errors');
});

test('an allocation failure at any point throws OutOfMemory and frees what was already allocated', () => {
  // Eight buffers to copy in: queries, keys, values, output, bandwidths, key padding, two group arrays.
  const c = {
    queries: randomFloat32(rand, 8),
    keys: randomFloat32(rand, 10),
    values: randomFloat32(rand, 15),
    options: {
      dim: 2,
      kernel: 'gaussian',
      bandwidth: [0.5, 2],
      mask: Uint8Array.from([0, 1, 0, 0, 0]),
      groups: { queries: [0, 1, 0, 1], keys: [0, 0, 1, 1, 1] },
    },
  };
  const mallocs = stats.mallocs;
  attention(c.queries, c.keys, c.values, c.options);
  const perCall = stats.mallocs - mallocs;
  assert.ok(perCall >= 8, `expected eight allocations per call, saw ${perCall}`);
  for (let k = 1; k <= perCall; k++) {
    stats.failNext = k;
    assert.throws(
      () => attention(c.queries, c.keys, c.values, c.options),
      { code: 'OutOfMemory' },
      `allocation ${k} failing`,
    );
    assert.equal(stats.failNext, 0);
    assertNothingLeft(`allocation ${k} failing`);
  }
  assertMatches(
    attention(c.queries, c.keys, c.values, c.options),
    referenceAttention(c.queries, c.keys, c.values, c.options),
    'after failures',
  );
});

test('weights of 3000×3000 grow memory; results stay correct and later calls re-read the heap views', () => {
  const small = validCall(11);
  const wantSmall = referenceAttention(small.queries, small.keys, small.values, small.options);
  const buffer = module.HEAPU8.buffer;
  const size = module.HEAPU8.length;

  const x = randomFloat32(rand, 3000);
  const w = weights(x, x, { dim: 1, kernel: 'gaussian', bandwidth: 0.01 });
  assert.ok(module.HEAPU8.length > size, 'the large call grew wasm memory');
  assert.notEqual(module.HEAPU8.buffer, buffer);
  assert.equal(w.length, 9e6);
  for (const i of [0, 1499, 2999]) {
    assertMatches(
      w.subarray(i * 3000, (i + 1) * 3000),
      referenceWeights(x.subarray(i, i + 1), x, { dim: 1, kernel: 'gaussian', bandwidth: 0.01 }),
      `row ${i}`,
    );
  }
  assertNothingLeft('large weights');

  for (let n = 0; n < 20; n++) {
    assertMatches(
      attention(small.queries, small.keys, small.values, small.options),
      wantSmall,
      `call ${n} after growth`,
    );
    const c = validCall(100 + n);
    assertMatches(
      weights(c.queries, c.keys, c.options),
      referenceWeights(c.queries, c.keys, c.options),
      `weights ${n} after growth`,
    );
  }
  assertNothingLeft('calls after growth');
});

test('memory grown inside the core during a call (large scratch) is read back through fresh views', () => {
  // One query, one key, D = 300,000: the core's per-call scratch (16 queries × D × lanes floats) is far larger than
  // the inputs, so wasm memory grows after the JS side has copied the inputs in and before it reads the output.
  const D = 300000;
  const values = randomFloat32(rand, D);
  const size = module.HEAPU8.length;
  const out = attention([0.5], [0.25], values, { dim: 1, kernel: 'laplacian' });
  assert.ok(
    module.HEAPU8.length > size,
    'memory grew during the call (if the core no longer needs scratch ∝ D, grow it another way)',
  );
  assertMatches(out, values, 'one key');
  assertNothingLeft('large scratch');
});

test("a value width too large for the core's scratch throws OutOfMemory and leaves nothing allocated", () => {
  // D = 8.5 million: the core's per-call scratch (64 keys × D floats, and 16 queries × D × lanes) exceeds 2 GiB.
  // Should the core stop needing scratch proportional to D, the call may succeed; it must then be correct.
  const values = new Float32Array(8_500_000);
  values[7] = 3;
  let out = null;
  try {
    out = attention([0], [0], values, { dim: 1 });
  } catch (e) {
    assert.ok(e instanceof KernelAttentionError, String(e));
    assert.equal(e.code, 'OutOfMemory');
  }
  if (out) assert.equal(out[7], 3);
  assertNothingLeft('core OutOfMemory');
  const c = validCall(7);
  assertMatches(
    attention(c.queries, c.keys, c.values, c.options),
    referenceAttention(c.queries, c.keys, c.values, c.options),
    'after OutOfMemory',
  );
});

// ---------------------------------------------------------------------------------------------------------------
// kernelRegression (fit, predict, predictInterval, dispose), selectBandwidth and cvScore, on their own module
// instance so that its heap starts at the default size: a leak inside the core then shows as memory growth.

const { module: regression, live: regLive, stats: regStats } = await countedModule();
const regEngine = makeEngine(regression);
const { selectBandwidth, cvScore } = makeBandwidth(regEngine, 1);
const kernelRegression = makeRegression(regEngine, 1, selectBandwidth);

// Live models hold their sample in the heap (resident copies, given back by dispose()): nothing else may stay.
function assertRegressionHeapClean(what) {
  const held = regEngine.residentUse().blocks;
  assert.equal(regLive.size, held, `${what}: ${regLive.size - held} allocations outstanding`);
  assert.equal(regStats.badFrees, 0, `${what}: free() of a pointer that was not allocated (or twice)`);
}

const BANDWIDTH_CHOICES = ['fixed', 'cv', 'scott', 'aicc', 'silverman', 'perDimension'];

/** Regression call n: a small sample (dim 1 or 2, D 1 or 2, weights or not) and options covering every choice. */
function regressionCall(n) {
  const dim = 1 + (n % 2);
  const D = 1 + ((n >> 1) % 2);
  const rows = 8 + ((n * 7) % 37); // AICc needs more points than the degrees of freedom + 2 (4 points in 2-D cannot)
  const x = randomFloat32(rand, rows * dim, 0, 1);
  const y = randomFloat32(rand, rows * D);
  const options = { dim, estimator: n % 3 === 0 ? 'nadaraya-watson' : 'local-linear' };
  if (n % 4 === 1) options.weights = randomFloat32(rand, rows, 0, 2);
  const choice = BANDWIDTH_CHOICES[n % BANDWIDTH_CHOICES.length];
  if (choice === 'fixed') options.bandwidth = n % 5 ? 0.3 : randomFloat32(rand, dim, 0.2, 0.6);
  else if (choice === 'perDimension') Object.assign(options, { bandwidth: 'cv', perDimension: true });
  else options.bandwidth = choice;
  if (n % 7 === 0) options.kernel = 'epanechnikov';
  return { x, y, xq: randomFloat32(rand, 5 * dim, 0, 1), options };
}

test('300 regression fits with predictions, bands, selections and CV scores leave the heap at its baseline', () => {
  const before = regression.HEAPU8.length;
  for (let n = 0; n < 300; n++) {
    const c = regressionCall(n);
    const mallocs = regStats.mallocs;
    const model = kernelRegression(c.x, c.y, c.options);
    assertRegressionHeapClean(`fit ${n}`);
    const mean = model.predict(c.xq);
    const band = model.predictInterval(c.xq, { level: 0.8 });
    assert.deepEqual(band.mean, mean);
    assert.ok(regEngine.residentUse().blocks >= 2, 'the model holds its x and y in the heap');
    model.dispose();
    model.dispose();
    assert.equal(regEngine.residentUse().blocks, 0, 'dispose() gave the sample back');
    assert.throws(() => model.predict(c.xq), { code: 'Disposed' });
    const { dim, estimator, weights, kernel } = c.options;
    const chosen = selectBandwidth(c.x, c.y, {
      dim,
      estimator,
      weights,
      kernel,
      method: ['cv', 'aicc', 'scott', 'silverman'][n % 4],
    });
    const score = cvScore(c.x, c.y, { dim, estimator, weights, kernel, bandwidth: Array.from(chosen.bandwidth) });
    assert.ok(regStats.mallocs > mallocs, 'the calls allocated through module._malloc');
    assertRegressionHeapClean(`call ${n}`);
    if (estimator === 'nadaraya-watson' && kernel === undefined) {
      assert.ok(mean.every(Number.isFinite), `call ${n}: gaussian Nadaraya–Watson is defined everywhere`);
      const want = referenceLocalFit(c.x, c.y, c.xq, {
        dim,
        estimator,
        weights,
        bandwidth: Array.from(model.bandwidth, Math.fround),
      }).mean;
      assertMatches(mean, want, `call ${n}`);
      assert.ok(Number.isFinite(score) && score >= 0, `call ${n}: CV score ${score}`);
    }
  }
  assert.equal(
    regression.HEAPU8.length,
    before,
    'wasm memory grew during small regression calls: a leak inside the core?',
  );
});

test('span fits and gradient() give every allocation back, also when they throw', () => {
  const before = regression.HEAPU8.length;
  for (let n = 0; n < 100; n++) {
    const c = regressionCall(n);
    const kernel = ['tricube', 'gaussian', 'epanechnikov'][n % 3];
    const span = kernelRegression(c.x, c.y, { dim: c.options.dim, kernel, bandwidth: { span: 0.2 + (n % 5) * 0.2 } });
    assertRegressionHeapClean(`span fit ${n}`);
    span.predictInterval(c.xq);
    span.gradient(c.xq);
    const fixed = kernelRegression(c.x, c.y, { ...c.options, kernel, bandwidth: 0.4 });
    fixed.gradient(c.xq);
    assert.throws(() => fixed.gradient(c.options.dim === 2 ? [1, 2, 3] : 'x'), { argument: 'xq' });
    assertRegressionHeapClean(`span call ${n}`);
    span.dispose();
    fixed.dispose();
  }
  const uniform = kernelRegression([0, 1, 2], [1, 2, 3], { dim: 1, kernel: 'uniform', bandwidth: 2 });
  assert.throws(() => uniform.gradient([1]), { argument: 'kernel' });
  assertRegressionHeapClean('uniform gradient');
  assert.equal(regression.HEAPU8.length, before, 'wasm memory grew during small span fits and gradients');
});

test('regression calls that throw (validation, Disposed, EmptyRow) leave nothing allocated; validation allocates nothing', () => {
  const x = [0, 0.1, 0.2, 0.8, 0.9, 1];
  const y = [1, 2, 1, 2, 1, 2];
  const model = kernelRegression(x, y, { dim: 1, bandwidth: 0.2 });
  const strict = kernelRegression(x, y, { dim: 1, kernel: 'epanechnikov', bandwidth: 0.15, empty: 'error' });
  const gone = kernelRegression(x, y, { dim: 1, bandwidth: 0.2 });
  gone.dispose();
  const rows = [
    {
      expect: 'BadArgument',
      before: true,
      run: () => kernelRegression(x, y, { dim: 1, weights: [1, 1, -1, 1, 1, 1] }),
    },
    {
      expect: 'BadArgument',
      before: true,
      run: () => kernelRegression(x, y, { dim: 1, weights: new Float32Array(6) }),
    },
    { expect: 'NonFinite', before: true, run: () => kernelRegression(x, y, { dim: 1, weights: [1, NaN, 1, 1, 1, 1] }) },
    { expect: 'BadShape', before: true, run: () => kernelRegression(x, y, { dim: 1, weights: [1, 1] }) },
    { expect: 'BadArgument', before: true, run: () => kernelRegression(x, y, { dim: 1, estimator: 'loess' }) },
    { expect: 'BadArgument', before: true, run: () => kernelRegression(x, y, { dim: 1, bandwidth: 'cv_ls' }) },
    { expect: 'BadBandwidth', before: true, run: () => kernelRegression(x, y, { dim: 1, bandwidth: 0 }) },
    { expect: 'BadArgument', before: true, run: () => model.predictInterval([0.5], { level: 1 }) },
    { expect: 'BadArgument', before: true, run: () => model.predictInterval([0.5], { level: '0.9' }) },
    { expect: 'NonFinite', before: true, run: () => model.predict([0.5, NaN]) },
    { expect: 'Disposed', before: true, run: () => gone.predictInterval([0.5]) },
    {
      expect: 'BadArgument',
      before: true,
      run: () => selectBandwidth(x, y, { dim: 1, estimator: 'local-linear', weights: [1, 1, 1, 1, 1, -1] }),
    },
    { expect: 'BadArgument', before: true, run: () => cvScore(x, y, { dim: 1, bandwidth: 0.2, estimator: 'lc' }) },
    { expect: 'EmptyRow', before: false, run: () => strict.predict([0.5]) },
    { expect: 'EmptyRow', before: false, run: () => strict.predictInterval([0.05, 0.5]) },
  ];
  for (let n = 0; n < 600; n++) {
    const row = rows[n % rows.length];
    const mallocs = regStats.mallocs;
    assert.throws(row.run, (e) => e instanceof KernelAttentionError && e.code === row.expect, `row ${n % rows.length}`);
    if (row.before)
      assert.equal(
        regStats.mallocs,
        mallocs,
        `${row.expect} (row ${n % rows.length}) must be thrown before any allocation`,
      );
    else assert.ok(regStats.mallocs > mallocs, 'EmptyRow is thrown after the inputs were copied in');
    assertRegressionHeapClean(`throwing call ${n} (${row.expect})`);
  }
  assert.deepEqual(model.predict([0.05, 0.5]), kernelRegression(x, y, { dim: 1, bandwidth: 0.2 }).predict([0.05, 0.5]));
});

test('an allocation failure at any point of a regression fit or band throws OutOfMemory and frees what was allocated', () => {
  const c = regressionCall(1); // local-linear, dim 2, weights, CV bandwidth
  c.options.bandwidth = 'cv';
  for (const step of ['fit', 'band', 'select', 'cv']) {
    const model = step === 'fit' ? null : kernelRegression(c.x, c.y, c.options);
    const run = {
      fit: () => kernelRegression(c.x, c.y, c.options).bandwidth,
      band: () => model.predictInterval(c.xq),
      select: () =>
        selectBandwidth(c.x, c.y, {
          dim: c.options.dim,
          estimator: 'local-linear',
          weights: c.options.weights,
          rule: 'aicc',
        }),
      cv: () =>
        cvScore(c.x, c.y, {
          dim: c.options.dim,
          estimator: 'local-linear',
          weights: c.options.weights,
          bandwidth: 0.4,
        }),
    }[step];
    const want = run();
    const mallocs = regStats.mallocs;
    run();
    const perCall = regStats.mallocs - mallocs;
    assert.ok(perCall >= 3, `${step}: expected several allocations per call, saw ${perCall}`);
    for (let k = 1; k <= perCall; k++) {
      regStats.failNext = k;
      assert.throws(run, { code: 'OutOfMemory' }, `${step}: allocation ${k} failing`);
      assert.equal(regStats.failNext, 0);
      assertRegressionHeapClean(`${step}: allocation ${k} failing`);
    }
    assert.deepEqual(run(), want, `${step}: the same answer after the failures`);
    model?.dispose();
  }
});

test('regression calls with large internal scratch (n = 600, D = 400) do not grow memory after the first', () => {
  // The core's scratch for a fit summary and a band is proportional to n·D (about 1 MB here): were any of it leaked,
  // 40 calls would need far more than the default 16 MiB heap and memory would grow.
  const n = 600;
  const D = 400;
  const x = randomFloat32(rand, n, 0, 1);
  const y = randomFloat32(rand, n * D);
  const xq = randomFloat32(rand, n, 0, 1);
  const run = () => {
    const model = kernelRegression(x, y, { dim: 1, estimator: 'nadaraya-watson', bandwidth: 0.05 });
    const band = model.predictInterval(xq);
    model.dispose();
    return cvScore(x, y, { dim: 1, estimator: 'local-linear', bandwidth: 0.05 }) + band.stderr[0];
  };
  const first = run();
  const size = regression.HEAPU8.length;
  for (let k = 0; k < 40; k++) assert.equal(run(), first);
  assert.equal(regression.HEAPU8.length, size, 'wasm memory grew across identical large regression calls: a leak?');
  assertRegressionHeapClean('large regression calls');
});
