// attentionState / mergeStates / finalizeState: shards merged in any order equal the float64 reference over all keys.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { maxAbsDiff, mulberry32, randomFloat32, referenceAttention } from './reference.mjs';

const ka = await init();
const KERNELS = ['softmax', 'gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'];

function shardStates(q, k, v, dim, cuts, options) {
  const J = k.length / dim,
    D = v.length / J;
  const states = [];
  for (let s = 0; s + 1 < cuts.length; s++) {
    const [j0, j1] = [cuts[s], cuts[s + 1]];
    const mask = options.mask instanceof Uint8Array ? options.mask.subarray(j0, j1) : undefined;
    states.push(
      ka.attentionState(q, k.subarray(j0 * dim, j1 * dim), v.subarray(j0 * D, j1 * D), { ...options, dim, mask }),
    );
  }
  return states;
}

for (const kernel of KERNELS) {
  test(`${kernel}: three shards merged in any order match the reference over all keys`, () => {
    const rand = mulberry32(KERNELS.indexOf(kernel) + 1);
    const [I, J, dim, D, heads] = [9, 130, 4, 6, 2];
    const q = randomFloat32(rand, I * dim),
      k = randomFloat32(rand, J * dim),
      v = randomFloat32(rand, J * D);
    const mask = Uint8Array.from({ length: J }, () => (rand() < 0.2 ? 1 : 0));
    const options =
      kernel === 'softmax'
        ? { kernel, heads, mask }
        : {
            kernel,
            heads,
            mask,
            bandwidth: kernel === 'epanechnikov' || kernel === 'tricube' || kernel === 'uniform' ? 2.5 : 0.8,
          };
    const want = referenceAttention(q, k, v, { ...options, dim });
    const [a, b, c] = shardStates(q, k, v, dim, [0, 64, 65, J], options);
    for (const order of [
      [a, b, c],
      [c, a, b],
      [b, c, a],
    ]) {
      const got = ka.finalizeState(ka.mergeStates(...order));
      assert.ok(maxAbsDiff(got, want) <= 1e-5, `${kernel}: error ${maxAbsDiff(got, want)}`);
    }
  });
}

test('states survive structured cloning (postMessage) and inputs are not mutated', () => {
  const x = Float32Array.from([0, 0.5, 1, 1.5]),
    y = Float32Array.from([1, 2, 3, 4]);
  const before = [x.slice(), y.slice()];
  const s = ka.attentionState([0.7], x, y, { dim: 1, kernel: 'gaussian', bandwidth: 0.5 });
  const cloned = structuredClone(s);
  assert.deepEqual(ka.finalizeState(cloned), ka.attention([0.7], x, y, { dim: 1, kernel: 'gaussian', bandwidth: 0.5 }));
  assert.deepEqual([x, y], before);
});

test('a query no shard reaches follows the empty policy; nearest is refused at finalize', () => {
  const s = ka.attentionState([0, 10], [0.1, 0.2], [1, 3], { dim: 1, kernel: 'uniform', bandwidth: 0.5 });
  assert.equal(s.max[1], -Infinity);
  assert.deepEqual(Array.from(ka.finalizeState(s, { empty: 'zero' })), [2, 0]);
  assert.ok(Number.isNaN(ka.finalizeState(s)[1]));
  assert.throws(
    () => ka.finalizeState(s, { empty: 'error' }),
    (e) => e.code === 'EmptyRow' && /query 1/.test(e.message),
  );
  assert.throws(
    () => ka.finalizeState(s, { empty: 'nearest' }),
    (e) => e.code === 'BadArgument' && e.argument === 'options.empty',
  );
});

test('bad states and options give typed errors naming the argument', () => {
  const s = ka.attentionState([0], [0], [1], { dim: 1 });
  const t = ka.attentionState([0, 1], [0], [1], { dim: 1 });
  const cases = [
    [() => ka.mergeStates(), 'states'],
    [() => ka.mergeStates(s, t), 'states[1]'],
    [() => ka.mergeStates(s, { ...s, acc: [1] }), 'states[1]'],
    [() => ka.finalizeState(null), 'state'],
    [() => ka.finalizeState(s, { emtpy: 'zero' }), 'options.emtpy'],
    [() => ka.attentionState([0], [0], [1], { dim: 1, empty: 'zero' }), 'options.empty'],
    [() => ka.attentionState([0], [0], undefined, { dim: 1 }), 'values'],
  ];
  for (const [call, argument] of cases) {
    assert.throws(call, (e) => e instanceof KernelAttentionError && e.argument === argument, argument);
  }
  assert.equal(ka.finalizeState(s)[0], 1);
});
