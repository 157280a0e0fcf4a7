// The async siblings (issue 8, item 4): attentionAsync, selectBandwidthAsync, kernelRegressionAsync and a model's
// predictAsync / predictIntervalAsync give the bytes of their synchronous forms, report monotone progress that ends
// at its total, and stop with the signal's reason when aborted before, during (from onProgress, a timer or another
// thread's message) and not after completion; no wasm memory stays allocated after any of it, and inputs are unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import { makeEngine } from '../../web/src/engine.js';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { makeAttention, makeAttentionAsync } from '../../web/src/attention.js';
import { makeBandwidth } from '../../web/src/bandwidth.js';
import { makeRegression, makeRegressionAsync } from '../../web/src/regression.js';
import { initOptions } from './build.mjs';
import { mulberry32, randomFloat32 } from './reference.mjs';
import { countedModule } from './counted.mjs';

const ka = await init(initOptions);
const rand = mulberry32(808);

// A module whose _malloc/_free are counted (counted.mjs): the white-box API on it must leave nothing.
const { module, live, stats } = await countedModule();
const counted = {
  attention: makeAttention(makeEngine(module)),
  attentionAsync: makeAttentionAsync(makeEngine(module)),
  ...makeBandwidth(makeEngine(module), 1),
};
counted.kernelRegression = makeRegression(makeEngine(module), 1, counted.selectBandwidth);
counted.kernelRegressionAsync = makeRegressionAsync(makeEngine(module), 1, counted.selectBandwidthAsync);

function assertNothingLeft(what) {
  assert.equal(live.size, 0, `${what}: ${live.size} wasm allocations outstanding`);
  assert.equal(stats.badFrees, 0, `${what}: free() of a pointer that was not allocated (or twice)`);
}

const bytes = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('hex');
const sameBytes = (got, want, what) =>
  assert.ok(bytes(got) === bytes(want), `${what}: other bytes than the synchronous call`);
const isAbortError = (e) => e instanceof DOMException && e.name === 'AbortError';

/** Records the progress reports of a call and checks they are monotone, within [0, total] and end at total. */
function progressLog() {
  const log = [];
  return {
    log,
    onProgress: (p) => log.push(p),
    check(what, { total } = {}) {
      assert.ok(log.length > 0, `${what}: no progress reported`);
      for (let i = 0; i < log.length; i++) {
        const { done, total: t } = log[i];
        assert.ok(
          Number.isInteger(done) && Number.isInteger(t) && done >= 1 && done <= t,
          `${what}: report ${i} ${JSON.stringify(log[i])}`,
        );
        if (i > 0)
          assert.ok(
            done >= log[i - 1].done && (done > log[i - 1].done || t === done),
            `${what}: done went from ${log[i - 1].done} to ${done}`,
          );
      }
      const last = log.at(-1);
      assert.equal(last.done, last.total, `${what}: the last report is not done === total`);
      if (total !== undefined) assert.equal(last.total, total, what);
    },
  };
}

// Attention workloads: many steps (I·J·(M + D) well beyond a step's 2²⁵ multiply-adds), every mask kind.
const I = 6000;
const J = 700;
const M = 16;
const D = 16;
const q = randomFloat32(rand, I * M, -1, 1);
const k = randomFloat32(rand, J * M, -1, 1);
const v = randomFloat32(rand, J * D, -1, 1);
const S = 3000; // the square (causal, leave-one-out) cases: S queries and S keys
const square = {
  q: randomFloat32(rand, S * M, -1, 1),
  k: randomFloat32(rand, S * M, -1, 1),
  v: randomFloat32(rand, S * D, -1, 1),
};

const CASES = [
  ['softmax', { q, k, v }, { dim: M }],
  [
    'softmax, 2 heads, key padding',
    { q, k, v },
    { dim: M, heads: 2, mask: Uint8Array.from({ length: J }, (_, j) => j % 5 === 0) },
  ],
  [
    'gaussian, general mask',
    { q, k, v },
    { dim: M, kernel: 'gaussian', bandwidth: 2, mask: Uint8Array.from({ length: I * J }, () => rand() < 0.3) },
  ],
  ['causal softmax', square, { dim: M, causal: true }],
  [
    'causal, key padding, empty nearest',
    square,
    { dim: M, causal: true, empty: 'nearest', mask: Uint8Array.from({ length: S }, (_, j) => j % 3 === 0) },
  ],
  ['leave-one-out epanechnikov', square, { dim: M, kernel: 'epanechnikov', bandwidth: 3, mask: 'loo', empty: 'zero' }],
  [
    'causal and general mask',
    square,
    { dim: M, causal: true, mask: Uint8Array.from({ length: S * S }, () => rand() < 0.2) },
  ],
  [
    'groups',
    { q, k, v },
    {
      dim: M,
      groups: {
        queries: Int32Array.from({ length: I }, (_, i) => i % 3),
        keys: Int32Array.from({ length: J }, (_, j) => j % 3),
      },
    },
  ],
];

for (const [name, data, options] of CASES) {
  test(`attentionAsync gives attention()'s bytes with monotone progress in rows: ${name}`, async () => {
    const want = ka.attention(data.q, data.k, data.v, options);
    const copies = [data.q.slice(), data.k.slice(), data.v.slice()];
    const p = progressLog();
    const got = await ka.attentionAsync(data.q, data.k, data.v, { ...options, onProgress: p.onProgress });
    sameBytes(got, want, name);
    p.check(name, { total: data.q.length / M });
    assert.ok(p.log.length > 2, `${name}: only ${p.log.length} steps`);
    assert.deepEqual([data.q, data.k, data.v], copies, 'an input changed');
  });
}

test('attentionAsync: few queries over many keys (the engine shards the keys) and empty queries give the bytes of attention()', async () => {
  const keys = randomFloat32(rand, 20000 * 8, -1, 1);
  const values = randomFloat32(rand, 20000 * 4, -1, 1);
  for (const rows of [1, 40, 63, 64, 100, 200]) {
    const queries = randomFloat32(rand, rows * 8, -1, 1);
    sameBytes(
      await ka.attentionAsync(queries, keys, values, { dim: 8 }),
      ka.attention(queries, keys, values, { dim: 8 }),
      `${rows} queries`,
    );
  }
  assert.equal((await ka.attentionAsync([], [0, 1], [1], { dim: 2 })).length, 0);
});

test('attentionAsync with an approximation runs it in one step', async () => {
  const options = { dim: M, method: 'random-features', seed: 5, features: 64 };
  const p = progressLog();
  sameBytes(
    await ka.attentionAsync(q, k, v, { ...options, onProgress: p.onProgress }),
    ka.attention(q, k, v, options),
    'random features',
  );
  p.check('random features', { total: I });
  assert.equal(p.log.length, 1);
});

test("abort before the start: rejects with the signal's reason, reports nothing, allocates nothing", async () => {
  const reason = new Error('not needed any more');
  for (const [signal, expect] of [
    [AbortSignal.abort(), isAbortError],
    [AbortSignal.abort(reason), (e) => e === reason],
  ]) {
    const calls = [
      () => counted.attentionAsync(q, k, v, { dim: M, signal, onProgress: () => assert.fail('progress') }),
      () =>
        counted.selectBandwidthAsync(q.subarray(0, 200), v.subarray(0, 200), {
          dim: 1,
          signal,
          onProgress: () => assert.fail('progress'),
        }),
      () =>
        counted.kernelRegressionAsync(q.subarray(0, 200), v.subarray(0, 200), {
          dim: 1,
          signal,
          onProgress: () => assert.fail('progress'),
        }),
    ];
    for (const call of calls) {
      await assert.rejects(call(), expect);
      assertNothingLeft('abort before start');
    }
  }
});

test("abort midway, from onProgress, from a timer and from another thread's message: rejects, frees everything", async () => {
  const sources = {
    onProgress: (controller) => ({ onProgress: ({ done }) => done > 0 && controller.abort() }),
    'a timer': (controller) => {
      setTimeout(() => controller.abort(), 0);
      return {};
    },
    'a MessagePort message': (controller) => {
      const { port1, port2 } = new MessageChannel();
      port1.once('message', () => {
        controller.abort();
        port1.close();
      });
      port2.postMessage('cancel');
      return {};
    },
  };
  for (const [source, arm] of Object.entries(sources)) {
    const runs = {
      attentionAsync: (extra) => counted.attentionAsync(q, k, v, { dim: M, ...extra }),
      selectBandwidthAsync: (extra) =>
        counted.selectBandwidthAsync(q.subarray(0, 400), v.subarray(0, 400), { dim: 1, ...extra }),
      kernelRegressionAsync: (extra) =>
        counted.kernelRegressionAsync(q.subarray(0, 400), v.subarray(0, 400), { dim: 1, ...extra }),
    };
    for (const [name, run] of Object.entries(runs)) {
      const controller = new AbortController();
      const log = [];
      const extra = arm(controller);
      const report = extra.onProgress;
      await assert.rejects(
        run({
          signal: controller.signal,
          onProgress: (p) => {
            log.push(p);
            report?.(p);
          },
        }),
        isAbortError,
        `${name}, aborted from ${source}`,
      );
      assert.ok(
        log.length === 0 || log.at(-1).done < log.at(-1).total,
        `${name}: ${source}: the call finished before the abort`,
      );
      assertNothingLeft(`${name} aborted from ${source}`);
    }
  }
  // And the module still gives the same bytes afterwards.
  sameBytes(await counted.attentionAsync(q, k, v, { dim: M }), counted.attention(q, k, v, { dim: M }), 'after aborts');
  assertNothingLeft('after aborts');
});

test('abort after completion changes nothing; a throwing onProgress rejects with its error and frees everything', async () => {
  const controller = new AbortController();
  const out = await counted.attentionAsync(q, k, v, { dim: M, signal: controller.signal });
  controller.abort();
  sameBytes(out, counted.attention(q, k, v, { dim: M }), 'aborted after completion');
  const oops = new Error('oops');
  await assert.rejects(
    counted.attentionAsync(q, k, v, {
      dim: M,
      onProgress: () => {
        throw oops;
      },
    }),
    (e) => e === oops,
  );
  await assert.rejects(
    counted.selectBandwidthAsync(q.subarray(0, 300), v.subarray(0, 300), {
      dim: 1,
      onProgress: () => {
        throw oops;
      },
    }),
    (e) => e === oops,
  );
  assertNothingLeft('throwing onProgress');
});

test('the heap does not grow over 200 aborted calls', async () => {
  const before = module.HEAPU8.length;
  for (let n = 0; n < 200; n++) {
    const controller = new AbortController();
    await assert.rejects(
      counted.attentionAsync(q, k, v, { dim: M, signal: controller.signal, onProgress: () => controller.abort() }),
      isAbortError,
    );
  }
  assertNothingLeft('200 aborted calls');
  assert.equal(module.HEAPU8.length, before, 'the wasm memory grew');
});

const x1 = randomFloat32(rand, 300, 0, 1);
const y1 = Float32Array.from(x1, (t) => Math.sin(6 * t) + 0.2 * (rand() - 0.5));
const x2 = randomFloat32(rand, 400, 0, 1);
const y2 = Float32Array.from({ length: 200 }, (_, i) => Math.sin(5 * x2[2 * i]) + x2[2 * i + 1] + 0.1 * rand());

const SELECTIONS = [
  ['cv, 1-D', x1, y1, { dim: 1 }],
  ['aicc, local-linear', x1, y1, { dim: 1, rule: 'aicc', estimator: 'local-linear' }],
  [
    'cv per dimension, 2-D, weights',
    x2,
    y2,
    { dim: 2, perDimension: true, weights: Float32Array.from({ length: 200 }, (_, i) => 1 + (i % 3)) },
  ],
  ['scott (one evaluation)', x1, y1, { dim: 1, rule: 'scott' }],
  ['epanechnikov', x1, y1, { dim: 1, kernel: 'epanechnikov' }],
];

for (const [name, x, y, options] of SELECTIONS) {
  test(`selectBandwidthAsync gives selectBandwidth()'s result, one progress report per evaluation: ${name}`, async () => {
    const want = ka.selectBandwidth(x, y, options);
    const p = progressLog();
    const got = await ka.selectBandwidthAsync(x, y, { ...options, onProgress: p.onProgress });
    assert.equal(got.method, want.method);
    assert.equal(got.rule, want.rule);
    assert.ok(Object.is(got.score, want.score), `${name}: score ${got.score} vs ${want.score}`);
    for (const key of ['bandwidth']) sameBytes(got[key], want[key], `${name}: ${key}`);
    sameBytes(got.curve.bandwidths, want.curve.bandwidths, `${name}: curve bandwidths`);
    sameBytes(got.curve.scores, want.curve.scores, `${name}: curve scores`);
    const evaluations = want.curve.scores.length;
    p.check(name, { total: Math.max(evaluations, 1) });
    // One report per evaluation, and the search's end (a rule of thumb is one step).
    assert.equal(p.log.length, evaluations ? evaluations + 1 : 1, `${name}: one report per evaluation`);
  });
}

test("kernelRegressionAsync gives kernelRegression()'s model; predictAsync and predictIntervalAsync give the bytes of predict and predictInterval", async () => {
  const xq = randomFloat32(rand, 30000, -0.1, 1.1);
  const xBig = randomFloat32(rand, 4000, 0, 1);
  const yBig = Float32Array.from(xBig, (t) => Math.cos(9 * t));
  for (const [x, y, options] of [
    [x1, y1, { dim: 1 }],
    [x1, y1, { dim: 1, bandwidth: 0.05, estimator: 'nadaraya-watson' }],
    [x1, y1, { dim: 1, method: 'grid' }],
    [x1, y1, { dim: 1, bandwidth: 'aicc' }],
    [xBig, yBig, { dim: 1, bandwidth: 0.01 }],
  ]) {
    const what = `${x.length} points, ${JSON.stringify(options)}`;
    const want = ka.kernelRegression(x, y, options);
    const p = progressLog();
    const model = await ka.kernelRegressionAsync(x, y, { ...options, onProgress: p.onProgress });
    sameBytes(model.bandwidth, want.bandwidth, `${what}: bandwidth`);
    assert.ok(Object.is(model.effectiveDegreesOfFreedom, want.effectiveDegreesOfFreedom), what);
    sameBytes(model.residualVariance, want.residualVariance, what);
    assert.equal(model.method, want.method);
    p.check(what, { total: want.selection.curve.scores.length + 1 });

    const pp = progressLog();
    sameBytes(await model.predictAsync(xq, { onProgress: pp.onProgress }), want.predict(xq), `${what}: predictAsync`);
    pp.check(`${what}: predictAsync`, { total: xq.length });
    if (x === xBig) assert.ok(pp.log.length > 4, `${what}: predictAsync ran in ${pp.log.length} steps`);
    const band = await model.predictIntervalAsync(xq, { level: 0.9, onProgress: () => {} });
    const wantBand = want.predictInterval(xq, { level: 0.9 });
    for (const key of ['mean', 'lower', 'upper', 'stderr', 'effectiveKeys', 'logDenominator'])
      sameBytes(band[key], wantBand[key], `${what}: ${key}`);
    assert.ok(Object.is(band.errorEstimate, wantBand.errorEstimate));

    if (x === xBig) {
      const controller = new AbortController();
      await assert.rejects(
        model.predictAsync(xq, { signal: controller.signal, onProgress: () => controller.abort() }),
        isAbortError,
        what,
      );
    }
    model.dispose();
    await assert.rejects(model.predictAsync(xq), (e) => e instanceof KernelAttentionError && e.code === 'Disposed');
    want.dispose();
  }
});

test('bad control options are typed errors naming them, as rejections', async () => {
  const bad = [null, 'signal', 7, {}, { aborted: 'no' }, () => {}];
  for (const signal of bad) {
    await assert.rejects(
      ka.attentionAsync(q, k, v, { dim: M, signal }),
      (e) => e instanceof KernelAttentionError && e.argument === 'options.signal',
    );
    await assert.rejects(ka.selectBandwidthAsync(x1, y1, { dim: 1, signal }), (e) => e.argument === 'options.signal');
  }
  for (const onProgress of [null, 'f', 1, {}]) {
    await assert.rejects(
      ka.kernelRegressionAsync(x1, y1, { dim: 1, onProgress }),
      (e) => e instanceof KernelAttentionError && e.argument === 'options.onProgress',
    );
  }
  // The synchronous functions do not take them: a typo of the API must not pass silently.
  assert.throws(
    () => ka.attention(q, k, v, { dim: M, signal: AbortSignal.abort() }),
    (e) => e.argument === 'options.signal',
  );
});
