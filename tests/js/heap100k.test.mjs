// White-box: 100,000 calls, successful and throwing, mixing attention, weights, cvScore and kernelRegression
// predict, on a module whose _malloc/_free are counted. The wasm heap must come back to its baseline: no allocation of
// the wrapper outstanding but the live models' samples, no free of anything not allocated, and no growth of wasm memory (a leak inside the core of
// more than ~170 bytes a call would need more than the 16 MiB the module starts with).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeEngine } from '../../web/src/engine.js';
import { makeAttention, makeWeights } from '../../web/src/attention.js';
import { makeBandwidth } from '../../web/src/bandwidth.js';
import { makeRegression } from '../../web/src/regression.js';
import { KernelAttentionError } from '../../web/src/errors.js';
import { countedModule } from './counted.mjs';

const CALLS = 100_000;

const { module, live, stats } = await countedModule();
const engine = makeEngine(module);
// Live models hold their sample in the heap (resident copies): the only allocations allowed to stay.
const held = () => engine.residentUse().blocks;

const attention = makeAttention(makeEngine(module), 1);
const weights = makeWeights(makeEngine(module));
const { selectBandwidth, cvScore } = makeBandwidth(makeEngine(module), 1);
const kernelRegression = makeRegression(makeEngine(module), 1, selectBandwidth);

const x = Float32Array.from({ length: 24 }, (_, i) => i / 23);
const y = x.map((t) => Math.sin(5 * t));
const q = Float32Array.from({ length: 3 * 4 }, (_, i) => Math.sin(i));
const k = Float32Array.from({ length: 5 * 4 }, (_, i) => Math.cos(i));
const v = Float32Array.from({ length: 5 * 2 }, (_, i) => i / 10);
const model = kernelRegression(x, y, { dim: 1, bandwidth: 0.2 });
const nwModel = kernelRegression(x, y, {
  dim: 1,
  bandwidth: 0.1,
  estimator: 'nadaraya-watson',
  kernel: 'epanechnikov',
  empty: 'error',
});
const gone = kernelRegression(x, y, { dim: 1, bandwidth: 0.2 });
gone.dispose();

// [what, expected error code or null, whether it must throw before allocating, the call]
const CALL_KINDS = [
  ['attention', null, false, () => attention(q, k, v, { dim: 4, heads: 2 })],
  [
    'attention gaussian',
    null,
    false,
    () => attention([0.1, 0.5], x, y, { dim: 1, kernel: 'gaussian', bandwidth: 0.1 }),
  ],
  ['weights', null, false, () => weights(q, k, { dim: 4, causal: true })],
  ['cvScore', null, false, () => cvScore(x, y, { dim: 1, bandwidth: 0.2 })],
  ['predict', null, false, () => model.predict([0.25, 0.75])],
  ['predictInterval', null, false, () => model.predictInterval([0.5])],
  ['attention BadShape', 'BadShape', true, () => attention(q, k, v.subarray(1), { dim: 4 })],
  ['attention NonFinite', 'NonFinite', true, () => attention([NaN], x, y, { dim: 1 })],
  ['weights BadBandwidth', 'BadBandwidth', true, () => weights(q, k, { dim: 4, kernel: 'gaussian', bandwidth: -1 })],
  ['cvScore BadArgument', 'BadArgument', true, () => cvScore(x, y, { dim: 1, bandwidth: 0.2, kernel: 'softmax' })],
  ['predict BadArgument', 'BadArgument', true, () => model.predict('x')],
  ['predict Disposed', 'Disposed', true, () => gone.predict([0.5])],
  [
    'attention EmptyRow',
    'EmptyRow',
    false,
    () => attention([0, 1], [0, 1], [1, 2], { dim: 1, mask: 'loo', kernel: 'uniform', bandwidth: 0.5, empty: 'error' }),
  ],
  ['predict EmptyRow', 'EmptyRow', false, () => nwModel.predict([5])],
];

test(`${CALLS.toLocaleString('en')} calls (successful and failing) leave the wasm heap at its baseline`, () => {
  const size = module.HEAPU8.length;
  const first = Array.from(model.predict([0.5, 0.9]));
  const counts = new Map();
  for (let n = 0; n < CALLS; n++) {
    const [what, code, early, call] = CALL_KINDS[n % CALL_KINDS.length];
    // Every 1000th call also fails at one of its allocations (a simulated out-of-memory).
    const oom = code === null && n % 1000 === 0;
    if (oom) stats.failNext = 1 + ((n / 1000) % 2);
    const mallocs = stats.mallocs;
    let error = null;
    try {
      call();
    } catch (e) {
      error = e;
    }
    stats.failNext = 0;
    const want = oom ? 'OutOfMemory' : code;
    if (want === null) {
      assert.equal(error, null, `${what} (call ${n}) threw ${error}`);
    } else {
      assert.ok(
        error instanceof KernelAttentionError && error.code === want,
        `${what} (call ${n}): expected ${want}, got ${error}`,
      );
      if (early) assert.equal(stats.mallocs, mallocs, `${what} must throw before allocating`);
    }
    if (live.size !== held() || stats.badFrees !== 0) {
      assert.fail(`${what} (call ${n}): ${live.size - held()} allocations outstanding, ${stats.badFrees} bad frees`);
    }
    counts.set(want ?? 'ok', (counts.get(want ?? 'ok') ?? 0) + 1);
  }
  assert.equal(module.HEAPU8.length, size, 'wasm memory grew over small calls: a leak inside the core?');
  assert.ok(counts.get('ok') > 40_000 && counts.get('OutOfMemory') > 30, JSON.stringify([...counts]));
  // The module still computes after it all.
  assert.deepEqual(Array.from(model.predict([0.5, 0.9])), first);
});

test('a kernelRegression model holds only its sample between calls, and dispose() gives it back', () => {
  const [before, blocks] = [stats.mallocs, live.size];
  const kept = kernelRegression(x, y, { dim: 1 });
  kept.predict([0.5]);
  assert.ok(stats.mallocs > before, 'fitting and predicting allocate through module._malloc');
  assert.equal(live.size, blocks + 2, 'a live model keeps its x and y, and nothing else');
  kept.dispose();
  assert.equal(live.size, blocks, 'dispose() gives the sample back');
});
