// attentionPooling() against an independent float64 reference: the loss L = Σ dOut ∘ f(θ) of a naive forward
// (reference.mjs's referenceAttention on inputs projected by the float64 matmul written here), differentiated by
// central differences in float64; Adam against its update written out by hand; dispose; bad arguments; untouched
// inputs; and the Dive into Deep Learning example (examples/attention-pooling.mjs) halving its loss.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { maxAbs, maxAbsDiff, mulberry32, randomFloat32, referenceAttention } from './reference.mjs';
import { initOptions } from './build.mjs';

const ka = await init(initOptions);
const root = fileURLToPath(new URL('../../', import.meta.url));

/** x (rows × cols) · W (cols × rank) in float64. */
function matmul(x, cols, W, rank) {
  const rows = x.length / cols;
  const out = new Float64Array(rows * rank);
  for (let i = 0; i < rows; i++) {
    for (let r = 0; r < rank; r++) {
      let sum = 0;
      for (let d = 0; d < cols; d++) sum += x[i * cols + d] * W[d * rank + r];
      out[i * rank + r] = sum;
    }
  }
  return out;
}

/**
 * The pooling's output in float64 at parameters `p` ({ logBandwidth | scale, Wq? Wk? | W? }): the kernel sees q·Wq
 * and k·Wk (rank columns) with projections, q·W and k·W with a shared one, else q and k; one log-bandwidth is shared
 * by every dimension.
 */
function naiveForward(q, k, v, dim, kernel, p, extra = {}) {
  const Wq = p.Wq ?? p.W;
  const Wk = p.Wk ?? p.W;
  const m = Wq ? Wq.length / dim : dim;
  const qp = Wq ? matmul(q, dim, Wq, m) : q;
  const kp = Wk ? matmul(k, dim, Wk, m) : k;
  const theta =
    kernel === 'softmax'
      ? { scale: p.scale }
      : {
          bandwidth: Array.from({ length: m }, (_, d) => Math.exp(p.logBandwidth[p.logBandwidth.length === 1 ? 0 : d])),
        };
  return referenceAttention(qp, kp, v, { dim: m, kernel, ...theta, ...extra });
}

const lossOf = (out, dOut) => out.reduce((s, o, n) => s + o * dOut[n], 0);

/** Central differences (step 1e-6, float64) of `loss` with respect to every entry of each named array of `p`. */
function centralDifferences(p, names, loss) {
  const step = 1e-6;
  const out = {};
  for (const name of names) {
    const scalar = typeof p[name] === 'number';
    const array = scalar ? Float64Array.of(p[name]) : Float64Array.from(p[name]);
    const at = (n, x) => {
      const copy = array.slice();
      copy[n] = x;
      return loss({ ...p, [name]: scalar ? copy[0] : copy });
    };
    const fd = array.map((x, n) => (at(n, x + step) - at(n, x - step)) / (2 * step));
    out[name] = scalar ? fd[0] : fd;
  }
  return out;
}

/** max |got − want| / max(max |want|, 1e-3). */
function relativeError(got, want) {
  const g = typeof got === 'number' ? [got] : Array.from(got);
  const w = typeof want === 'number' ? [want] : Array.from(want);
  return maxAbsDiff(g, w) / Math.max(maxAbs(w), 1e-3);
}

// The engine runs in float32 (inputs, projected inputs and bandwidths rounded to float32, sums in double): its
// gradients agree with float64 differences to about 1e-6 of their scale; 1e-4 leaves room and still catches a wrong
// factor, sign or index.
const TOLERANCE = 1e-4;

// Each case: the pooling's options, forward()'s options (`call`), and whether the keys are the queries (`same`).
const CASES = [
  {
    name: 'gaussian, one shared bandwidth, leave-one-out',
    dim: 1,
    options: { kernel: 'gaussian', bandwidth: 0.4 },
    call: { mask: 'loo' },
    same: true,
  },
  { name: 'gaussian, a bandwidth per dimension', dim: 3, options: { kernel: 'gaussian', bandwidth: [0.7, 1.1, 0.9] } },
  {
    name: 'cauchy, a bandwidth per dimension, causal',
    dim: 2,
    options: { kernel: 'cauchy', bandwidth: [0.5, 0.8] },
    call: { causal: true },
    same: true,
  },
  { name: 'softmax scale', dim: 4, options: { kernel: 'softmax', scale: 0.8 } },
  {
    name: 'gaussian with projections (rank 2), shared bandwidth',
    dim: 3,
    options: { kernel: 'gaussian', bandwidth: 0.6, projections: { rank: 2, seed: 5 } },
  },
  {
    name: 'gaussian with projections (rank 3), per-dimension bandwidths, leave-one-out',
    dim: 2,
    options: { kernel: 'gaussian', bandwidth: [0.5, 0.7, 0.9], projections: { rank: 3, seed: 1 } },
    call: { mask: 'loo' },
    same: true,
  },
  {
    name: 'softmax with projections (rank 4)',
    dim: 3,
    options: { kernel: 'softmax', projections: { rank: 4, seed: 2 } },
  },
  {
    name: 'gaussian with a shared projection (a learned metric, rank 2), leave-one-out',
    dim: 3,
    options: { kernel: 'gaussian', bandwidth: [0.4, 0.5], projections: { rank: 2, seed: 6, shared: true } },
    call: { mask: 'loo' },
    same: true,
  },
  {
    name: 'laplacian with a shared projection (rank 3)',
    dim: 2,
    options: { kernel: 'laplacian', bandwidth: 0.7, projections: { rank: 3, seed: 8, shared: true } },
  },
];

for (const c of CASES) {
  test(`gradients match float64 central differences of a naive loss: ${c.name}`, () => {
    const rand = mulberry32(c.dim * 100 + c.name.length);
    const I = 7,
      J = c.same ? 7 : 9,
      D = 2;
    const q = randomFloat32(rand, I * c.dim);
    const k = c.same ? q : randomFloat32(rand, J * c.dim);
    const v = randomFloat32(rand, J * D);
    const dOut = randomFloat32(rand, I * D);
    const pooling = ka.attentionPooling({ dim: c.dim, ...c.options });
    const p = pooling.parameters;
    const names = Object.keys(p).filter((name) => name !== 'bandwidth');

    const out = pooling.forward(q, k, v, c.call);
    const want = naiveForward(q, k, v, c.dim, c.options.kernel, p, c.call);
    assert.ok(maxAbsDiff(out, want) <= 1e-5, `output ${maxAbsDiff(out, want)}`);

    const dx = pooling.backward(dOut);
    const got = pooling.gradients;
    assert.deepEqual(Object.keys(got).sort(), names.sort());
    const fd = centralDifferences(p, names, (pp) =>
      lossOf(naiveForward(q, k, v, c.dim, c.options.kernel, pp, c.call), dOut),
    );
    for (const name of names) {
      const e = relativeError(got[name], fd[name]);
      assert.ok(
        e <= TOLERANCE,
        `${name}: ${e} (got ${Array.from([got[name]].flat())}, want ${Array.from([fd[name]].flat())})`,
      );
    }
    // The inputs' gradients (through the projections when there are any); with q = k the forward's queries and keys
    // are one array, so only their sum is a derivative of the loss.
    const inputs = centralDifferences(
      { q: Float64Array.from(q), k: Float64Array.from(k), v: Float64Array.from(v) },
      ['q', 'k', 'v'],
      ({ q: qq, k: kk, v: vv }) =>
        lossOf(naiveForward(qq, c.same ? qq : kk, vv, c.dim, c.options.kernel, p, c.call), dOut),
    );
    if (c.same) {
      assert.ok(
        relativeError(
          dx.dq.map((g, n) => g + dx.dk[n]),
          inputs.q,
        ) <= TOLERANCE,
        'dq + dk',
      );
    } else {
      assert.ok(relativeError(dx.dq, inputs.q) <= TOLERANCE, 'dq');
      assert.ok(relativeError(dx.dk, inputs.k) <= TOLERANCE, 'dk');
    }
    assert.ok(relativeError(dx.dv, inputs.v) <= TOLERANCE, 'dv');
    for (const g of Object.values(dx)) assert.ok(g instanceof Float32Array);
    pooling.dispose();
  });
}

test('the reference differences are themselves right: a shared log-bandwidth is the sum of the per-dimension ones', () => {
  // A check of the oracle, not of the package: d/d log h of the shared bandwidth equals Σ_d ∂/∂ log h_d.
  const rand = mulberry32(3);
  const q = randomFloat32(rand, 10),
    k = randomFloat32(rand, 12),
    v = randomFloat32(rand, 6),
    dOut = randomFloat32(rand, 5);
  const loss = (pp) => lossOf(naiveForward(q, k, v, 2, 'gaussian', pp), dOut);
  const shared = centralDifferences({ logBandwidth: [Math.log(0.6)] }, ['logBandwidth'], loss).logBandwidth[0];
  const each = centralDifferences(
    { logBandwidth: [Math.log(0.6), Math.log(0.6)] },
    ['logBandwidth'],
    loss,
  ).logBandwidth;
  assert.ok(Math.abs(shared - each[0] - each[1]) < 1e-8 * Math.max(1, Math.abs(shared)));
});

test('backward accumulates until step() or zeroGrad(); it differentiates the latest forward with the parameters it ran with', () => {
  const rand = mulberry32(11);
  const q = randomFloat32(rand, 8),
    k = randomFloat32(rand, 10),
    v = randomFloat32(rand, 5),
    dOut = randomFloat32(rand, 4);
  const pooling = ka.attentionPooling({
    dim: 2,
    bandwidth: [0.5, 0.9],
    projections: { rank: 2, seed: 9 },
    learningRate: 0.05,
  });
  pooling.forward(q, k, v);
  pooling.backward(dOut);
  const once = pooling.gradients;
  pooling.backward(dOut);
  const twice = pooling.gradients;
  for (const name of Object.keys(once))
    assert.deepEqual(
      Array.from(twice[name]),
      Array.from(once[name], (g) => 2 * g),
      name,
    );
  pooling.zeroGrad();
  for (const g of Object.values(pooling.gradients)) assert.ok(Array.from(g).every((x) => x === 0));
  // A step between forward and backward does not change what backward differentiates.
  pooling.backward(dOut);
  pooling.step();
  for (const g of Object.values(pooling.gradients))
    assert.ok(
      Array.from(g).every((x) => x === 0),
      'step() zeroes the gradients',
    );
  pooling.backward(dOut);
  const after = pooling.gradients;
  for (const name of Object.keys(once)) assert.deepEqual(Array.from(after[name]), Array.from(once[name]), name);
  pooling.dispose();
});

test('step() is Adam with bias correction, written out by hand in float64', () => {
  const rand = mulberry32(21);
  const q = randomFloat32(rand, 12),
    k = randomFloat32(rand, 15),
    v = randomFloat32(rand, 5),
    dOut = randomFloat32(rand, 4);
  const lr = 0.03,
    b1 = 0.8,
    b2 = 0.99,
    eps = 1e-6;
  for (const options of [
    { dim: 3, kernel: 'gaussian', bandwidth: [0.5, 0.9, 1.3] },
    { dim: 3, kernel: 'softmax', scale: 0.5, projections: { rank: 2, seed: 4 } },
  ]) {
    const pooling = ka.attentionPooling({ ...options, learningRate: lr, betas: [b1, b2], epsilon: eps });
    const names = Object.keys(pooling.gradients);
    const flat = (x) => (typeof x === 'number' ? [x] : Array.from(x));
    let theta = Object.fromEntries(names.map((name) => [name, flat(pooling.parameters[name])]));
    const m = Object.fromEntries(names.map((name) => [name, theta[name].map(() => 0)]));
    const s = Object.fromEntries(names.map((name) => [name, theta[name].map(() => 0)]));
    for (let t = 1; t <= 3; t++) {
      pooling.forward(q, k, v);
      pooling.backward(dOut.map((x) => x * t));
      const g = pooling.gradients;
      pooling.step();
      const next = {};
      for (const name of names) {
        next[name] = theta[name].map((x, n) => {
          const gn = flat(g[name])[n];
          m[name][n] = b1 * m[name][n] + (1 - b1) * gn;
          s[name][n] = b2 * s[name][n] + (1 - b2) * gn * gn;
          const mHat = m[name][n] / (1 - b1 ** t);
          const sHat = s[name][n] / (1 - b2 ** t);
          return x - (lr * mHat) / (Math.sqrt(sHat) + eps);
        });
        const got = flat(pooling.parameters[name]);
        assert.ok(
          maxAbsDiff(got, next[name]) <= 1e-15 * Math.max(1, maxAbs(next[name])),
          `${options.kernel} ${name} at step ${t}: ${got} vs ${next[name]}`,
        );
        // and the first step moves no entry by more than the learning rate (Adam's scale-free start)
        if (t === 1) theta[name].forEach((x, n) => assert.ok(Math.abs(next[name][n] - x) <= lr));
      }
      theta = next;
    }
    if (options.kernel === 'gaussian') {
      assert.deepEqual(Array.from(pooling.parameters.bandwidth), Array.from(pooling.parameters.logBandwidth, Math.exp));
    }
    pooling.dispose();
  }
});

test('the starting parameters: bandwidths read as float32, the default scale 1/√rank, projections seeded', () => {
  const a = ka.attentionPooling({ dim: 2, bandwidth: 0.1 });
  assert.deepEqual(Array.from(a.parameters.logBandwidth), [Math.log(Math.fround(0.1))]);
  assert.deepEqual(Object.keys(a.parameters).sort(), ['bandwidth', 'logBandwidth']);
  assert.deepEqual(Array.from(ka.attentionPooling({ dim: 2 }).parameters.logBandwidth), [0]);
  assert.equal(ka.attentionPooling({ dim: 9, kernel: 'softmax', projections: { rank: 4 } }).parameters.scale, 0.5);
  const p = ka.attentionPooling({ dim: 3, projections: { rank: 2, seed: 7 } }).parameters;
  assert.equal(p.Wq.length, 6);
  assert.ok(p.Wq.every((w) => Math.abs(w) <= 1 / Math.sqrt(3)) && p.Wk.every((w) => Math.abs(w) <= 1 / Math.sqrt(3)));
  assert.notDeepEqual(Array.from(p.Wq), Array.from(p.Wk));
  assert.deepEqual(ka.attentionPooling({ dim: 3, projections: { rank: 2, seed: 7 } }).parameters, p);
  assert.notDeepEqual(ka.attentionPooling({ dim: 3, projections: { rank: 2, seed: 8 } }).parameters.Wq, p.Wq);
  const shared = ka.attentionPooling({ dim: 3, projections: { rank: 2, seed: 7, shared: true } }).parameters;
  assert.deepEqual(Object.keys(shared).sort(), ['W', 'bandwidth', 'logBandwidth']);
  assert.deepEqual(shared.W, p.Wq);
  // the copies are copies: writing to them changes nothing
  p.Wq[0] = 100;
  const fresh = ka.attentionPooling({ dim: 3, projections: { rank: 2, seed: 7 } });
  fresh.parameters.Wq[0] = 100;
  assert.notEqual(fresh.parameters.Wq[0], 100);
  assert.ok(Object.isFrozen(fresh));
});

test('inputs are never changed, nor kept: editing them after forward() does not change backward()', () => {
  const rand = mulberry32(31);
  const q = Array.from(randomFloat32(rand, 8)),
    k = randomFloat32(rand, 8),
    v = Float64Array.from(randomFloat32(rand, 4));
  const dOut = Array.from(randomFloat32(rand, 4));
  const mask = Uint8Array.of(0, 0, 1, 0);
  const copies = [q, k, v, dOut, mask].map((a) => a.slice());
  const pooling = ka.attentionPooling({ dim: 2, bandwidth: [0.6, 0.8], projections: { rank: 2, seed: 3 } });
  const out = pooling.forward(q, k, v, { mask });
  const grads = pooling.backward(dOut);
  [q, k, v, dOut, mask].forEach((a, n) => assert.deepEqual(a, copies[n]));
  pooling.zeroGrad();
  q[0] += 1;
  k[1] += 1;
  v[2] += 1;
  mask[2] = 0;
  assert.deepEqual(pooling.backward(dOut), grads);
  // and a fresh forward at the edited inputs gives another output
  assert.notDeepEqual(pooling.forward(q, k, v, { mask }), out);
  pooling.dispose();
});

test('dispose(): idempotent, Symbol.dispose, and every later use throws Disposed naming the pooling', () => {
  const pooling = ka.attentionPooling({ dim: 1 });
  pooling.forward([0, 1], [0, 1], [1, 2]);
  assert.equal(typeof pooling.dispose, 'function');
  if (typeof Symbol.dispose === 'symbol') assert.equal(pooling[Symbol.dispose], pooling.dispose);
  pooling.dispose();
  pooling.dispose();
  const disposed = (e) =>
    e instanceof KernelAttentionError &&
    e.code === 'Disposed' &&
    e.argument === 'pooling' &&
    /disposed/.test(e.message);
  for (const use of [
    () => pooling.forward([0], [0], [1]),
    () => pooling.forward(null),
    () => pooling.backward([1]),
    () => pooling.step(),
    () => pooling.zeroGrad(),
    () => pooling.parameters,
    () => pooling.gradients,
  ])
    assert.throws(use, disposed);
  assert.equal(pooling.dim, 1);
});

test('bad arguments are refused naming them, before anything changes', () => {
  const refuses = (fn, code, argument) =>
    assert.throws(
      fn,
      (e) =>
        e instanceof KernelAttentionError && e.code === code && e.argument === argument && e.message.includes(argument),
      `${code} ${argument}`,
    );
  // the factory
  refuses(() => ka.attentionPooling(), 'BadArgument', 'options');
  refuses(() => ka.attentionPooling({}), 'BadArgument', 'options.dim');
  refuses(() => ka.attentionPooling({ dim: 1, leaveOneOut: true }), 'BadArgument', 'options.leaveOneOut');
  refuses(() => ka.attentionPooling({ dim: 1, lr: 0.1 }), 'BadArgument', 'options.lr');
  refuses(() => ka.attentionPooling({ dim: 1, kernel: 'uniform' }), 'BadArgument', 'options.kernel');
  refuses(() => ka.attentionPooling({ dim: 1, kernel: 'gauss' }), 'BadArgument', 'options.kernel');
  refuses(() => ka.attentionPooling({ dim: 1, bandwidth: 0 }), 'BadBandwidth', 'options.bandwidth');
  refuses(() => ka.attentionPooling({ dim: 2, bandwidth: [1] }), 'BadShape', 'options.bandwidth');
  refuses(
    () => ka.attentionPooling({ dim: 2, bandwidth: [1, 1], projections: { rank: 3 } }),
    'BadShape',
    'options.bandwidth',
  );
  refuses(() => ka.attentionPooling({ dim: 1, kernel: 'softmax', bandwidth: 1 }), 'BadArgument', 'options.bandwidth');
  refuses(() => ka.attentionPooling({ dim: 1, scale: 1 }), 'BadArgument', 'options.scale');
  refuses(() => ka.attentionPooling({ dim: 1, kernel: 'softmax', scale: NaN }), 'BadArgument', 'options.scale');
  refuses(() => ka.attentionPooling({ dim: 1, projections: 2 }), 'BadArgument', 'options.projections');
  refuses(() => ka.attentionPooling({ dim: 1, projections: {} }), 'BadArgument', 'options.projections.rank');
  refuses(
    () => ka.attentionPooling({ dim: 1, projections: { rank: 2, sead: 1 } }),
    'BadArgument',
    'options.projections.sead',
  );
  refuses(
    () => ka.attentionPooling({ dim: 1, projections: { rank: 2, seed: -1 } }),
    'BadArgument',
    'options.projections.seed',
  );
  refuses(
    () => ka.attentionPooling({ dim: 1, projections: { rank: 2, shared: 1 } }),
    'BadArgument',
    'options.projections.shared',
  );
  refuses(
    () => ka.attentionPooling({ dim: 2 ** 20, projections: { rank: 2 ** 10 } }),
    'BadArgument',
    'options.projections.rank',
  );
  refuses(() => ka.attentionPooling({ dim: 1, learningRate: 0 }), 'BadArgument', 'options.learningRate');
  refuses(() => ka.attentionPooling({ dim: 1, epsilon: -1 }), 'BadArgument', 'options.epsilon');
  refuses(() => ka.attentionPooling({ dim: 1, betas: [0.9] }), 'BadShape', 'options.betas');
  refuses(() => ka.attentionPooling({ dim: 1, betas: [0.9, 1] }), 'BadArgument', 'options.betas');
  refuses(() => ka.attentionPooling({ dim: 1, betas: 0.9 }), 'BadArgument', 'options.betas');

  // forward and backward
  const pooling = ka.attentionPooling({ dim: 2, projections: { rank: 3 } });
  refuses(() => pooling.backward([1, 2]), 'BadArgument', 'pooling');
  const q = [0, 1, 1, 0],
    v = [1, 2];
  refuses(() => pooling.forward(q, q), 'BadArgument', 'values');
  refuses(() => pooling.forward([0, 1, 2], q, v), 'BadShape', 'queries');
  refuses(() => pooling.forward(q, [0, NaN, 1, 0], v), 'NonFinite', 'keys');
  refuses(() => pooling.forward(q, [], v), 'BadShape', 'keys');
  refuses(() => pooling.forward(q, q, [1, 2, 3]), 'BadShape', 'values');
  refuses(() => pooling.forward(q, q, v, { bandwidth: 1 }), 'BadArgument', 'options.bandwidth');
  refuses(() => pooling.forward(q, q, v, { mask: 'LOO' }), 'BadArgument', 'options.mask');
  refuses(() => pooling.forward(q, q, v, { causal: 1 }), 'BadArgument', 'options.causal');
  refuses(() => pooling.forward(q, q, v, 'loo'), 'BadArgument', 'options');
  refuses(() => pooling.backward([1, 2]), 'BadArgument', 'pooling'); // the failed forwards recorded nothing
  pooling.forward(q, q, v, { mask: 'loo' });
  refuses(() => pooling.backward(), 'BadArgument', 'dOut');
  refuses(() => pooling.backward([1]), 'BadShape', 'dOut');
  refuses(() => pooling.backward([1, Infinity]), 'NonFinite', 'dOut');
  refuses(() => pooling.forward([0], q, v), 'BadShape', 'queries');
  refuses(() => pooling.backward([1, 2]), 'BadArgument', 'pooling'); // a refused forward leaves nothing to differentiate
  for (const g of Object.values(pooling.gradients))
    assert.ok(
      Array.from(g).every((x) => x === 0),
      'refused calls accumulate nothing',
    );
  // a bandwidth trained out of float32 range is reported as such
  // (Adam's first step moves log h by the learning rate, 200: exp(±200) is beyond float32 either way)
  const wild = ka.attentionPooling({ dim: 1, learningRate: 200 });
  wild.forward([0, 1, 2], [0, 1, 2], [1, 2, 4]);
  wild.backward([1, -1, 1]);
  wild.step();
  refuses(() => wild.forward([0, 1, 2], [0, 1, 2], [1, 2, 4]), 'BadBandwidth', 'parameters.logBandwidth');
});

test("Dive into Deep Learning's parametric Nadaraya–Watson example: the leave-one-out loss at least halves", () => {
  const output = execFileSync(process.execPath, [root + 'examples/attention-pooling.mjs'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  const losses = [...output.matchAll(/^epoch (\d+), loss (\S+)$/gm)].map((m) => Number(m[2]));
  assert.ok(losses.length >= 10, output);
  assert.ok(losses.every(Number.isFinite));
  assert.ok(losses.at(-1) <= losses[0] / 2, `loss ${losses[0]} → ${losses.at(-1)}`);
  const h = Number(/learned bandwidth (\S+)/.exec(output)[1]);
  assert.ok(h > 0.05 && h < 1, `learned bandwidth ${h}`);
});
