// The public API against the float64 oracle in reference.mjs: every kernel × mask kind × heads × sizes, the input
// forms, ownership of inputs and results, and the hard limits (underflow, huge scores, ties) the engine promises.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { maxAbs, maxAbsDiff, mulberry32, randomFloat32, referenceAttention, referenceWeights } from './reference.mjs';
import { initOptions } from './build.mjs';

const ka = await init(initOptions);

const KERNELS = ['softmax', 'gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'];
const COMPACT = ['epanechnikov', 'tricube', 'uniform'];
const MASK_KINDS = ['none', 'causal', 'key padding', 'general', 'loo', 'groups'];
const HEADS = [1, 2, 4];
const DIMS_PER_HEAD = [1, 3, 16]; // M = heads · this, so M ∈ {1, 3, 16} with one head
const SIZES = [
  [1, 1],
  [1, 5],
  [3, 4],
  [4, 3],
  [5, 17],
  [16, 16],
  [17, 65],
  [65, 17],
  [65, 65],
];
const SQUARE_SIZES = [
  [1, 1],
  [3, 3],
  [4, 4],
  [5, 5],
  [16, 16],
  [17, 17],
  [65, 65],
];

const pick = (rand, list) => list[Math.floor(rand() * list.length)];
const bits = (rand, n, p) => Uint8Array.from({ length: n }, () => (rand() < p ? 1 : 0));
const ints = (rand, n, count) => Int32Array.from({ length: n }, () => Math.floor(rand() * count));

/** A random call: float32-exact inputs, options for the mask kind, random bandwidth/scale and empty policy. */
function randomCall(rand, { kernel, maskKind, heads, dimsPerHead, I, J }) {
  const dim = heads * dimsPerHead;
  const D = heads * (1 + Math.floor(rand() * 3));
  const options = { dim, kernel, heads, empty: pick(rand, ['nan', 'zero', 'nearest']) };
  if (kernel === 'softmax') {
    const scale = pick(rand, [undefined, 0.3, -1.25]);
    if (scale !== undefined) options.scale = scale;
  } else {
    // Wider bandwidths keep compact kernels from emptying most rows in 16 dimensions; the default (1) empties many.
    const bandwidth = pick(rand, [undefined, 0.75, 1.5, 'per-dimension']);
    if (bandwidth === 'per-dimension') options.bandwidth = randomFloat32(rand, dim, 0.5, 2);
    else if (bandwidth !== undefined) options.bandwidth = bandwidth;
  }
  if (maskKind === 'causal') options.causal = true;
  if (maskKind === 'key padding') options.mask = bits(rand, J, 0.3);
  if (maskKind === 'general') options.mask = bits(rand, I * J, 0.4);
  if (maskKind === 'loo') options.mask = 'loo';
  if (maskKind === 'groups') options.groups = { queries: ints(rand, I, 4), keys: ints(rand, J, 3) }; // group 3: no keys
  return {
    queries: randomFloat32(rand, I * dim),
    keys: randomFloat32(rand, J * dim),
    values: randomFloat32(rand, J * D, -2, 2),
    options,
  };
}

function label(c) {
  const { mask, groups, bandwidth, ...rest } = c.options;
  const I = c.queries.length / c.options.dim;
  const J = c.keys.length / c.options.dim;
  return (
    `I=${I} J=${J} ${JSON.stringify(rest)}${mask === undefined ? '' : ` mask=${typeof mask === 'string' ? mask : `[${mask.length}]`}`}` +
    `${groups ? ' groups' : ''}${bandwidth === undefined ? '' : ` bandwidth=${typeof bandwidth === 'number' ? bandwidth : '[per-dim]'}`}`
  );
}

/**
 * got must be a Float32Array (a Float64Array with `Type`) of the reference's length within tol · max(1, max|scale|);
 * NaN only where expected.
 */
function assertClose(got, want, scale, what, Type = Float32Array) {
  assert.ok(got instanceof Type, `${what}: result is not a ${Type.name}`);
  assert.equal(got.length, want.length, `${what}: length`);
  const tol = 1e-5 * Math.max(1, maxAbs(scale));
  const err = maxAbsDiff(got, want);
  if (err <= tol) return;
  let at = 0;
  while (at < got.length && maxAbsDiff([got[at]], [want[at]]) <= tol) at++;
  assert.fail(`${what}: max |got − want| = ${err} > ${tol}; first at index ${at}: got ${got[at]}, want ${want[at]}`);
}

function checkAttention(c) {
  const got = ka.attention(c.queries, c.keys, c.values, c.options);
  assertClose(got, referenceAttention(c.queries, c.keys, c.values, c.options), c.values, label(c));
  return got;
}

function checkWeights(c) {
  const got = ka.weights(c.queries, c.keys, c.options);
  assertClose(got, referenceWeights(c.queries, c.keys, c.options), [1], label(c));
  return got;
}

// ---------------------------------------------------------------------------------------------------------------
// The grid.

for (const kernel of KERNELS) {
  for (const maskKind of MASK_KINDS) {
    test(`attention matches the reference for ${kernel} with mask '${maskKind}' over heads 1/2/4 and all sizes`, () => {
      const rand = mulberry32(1000 * KERNELS.indexOf(kernel) + MASK_KINDS.indexOf(maskKind) + 1);
      for (const heads of HEADS) {
        for (const dimsPerHead of DIMS_PER_HEAD) {
          for (const [I, J] of maskKind === 'loo' ? SQUARE_SIZES : SIZES) {
            checkAttention(randomCall(rand, { kernel, maskKind, heads, dimsPerHead, I, J }));
          }
        }
      }
    });
  }
}

for (const kernel of KERNELS) {
  test(`weights match the reference for ${kernel} with every mask kind and heads 1/2/4`, () => {
    const rand = mulberry32(77 + KERNELS.indexOf(kernel));
    for (const maskKind of MASK_KINDS) {
      for (const heads of HEADS) {
        for (const dimsPerHead of [1, 3]) {
          for (const [I, J] of [
            [1, 1],
            [3, 3],
            [5, 4],
            [17, 16],
          ]) {
            if (maskKind === 'loo' && I !== J) continue;
            const w = checkWeights(randomCall(rand, { kernel, maskKind, heads, dimsPerHead, I, J }));
            assert.equal(w.length, heads * I * J);
          }
        }
      }
    }
  });
}

test('all masks together (causal, key padding, general, groups) match the reference', () => {
  const rand = mulberry32(5);
  for (const kernel of KERNELS) {
    for (const empty of ['nan', 'zero', 'nearest']) {
      const c = randomCall(rand, { kernel, maskKind: 'general', heads: 2, dimsPerHead: 3, I: 17, J: 17 });
      c.options.empty = empty;
      c.options.causal = true;
      c.options.groups = { queries: ints(rand, 17, 3), keys: ints(rand, 17, 3) };
      checkAttention(c);
      checkWeights({ ...c, options: { ...c.options, mask: bits(rand, 17, 0.3) } });
    }
  }
});

test('each head attends on its own slice: a multi-head call equals separate single-head calls', () => {
  const rand = mulberry32(6);
  for (const kernel of KERNELS) {
    const c = randomCall(rand, { kernel, maskKind: 'none', heads: 2, dimsPerHead: 3, I: 5, J: 7 });
    const D = c.values.length / 7;
    const whole = ka.attention(c.queries, c.keys, c.values, c.options);
    const slice = (a, cols, h) => a.filter((_, n) => Math.floor((n % cols) / (cols / 2)) === h);
    for (const h of [0, 1]) {
      const options = { ...c.options, dim: 3, heads: 1 };
      if (c.options.bandwidth instanceof Float32Array) options.bandwidth = slice(c.options.bandwidth, 6, h);
      const part = ka.attention(slice(c.queries, 6, h), slice(c.keys, 6, h), slice(c.values, D, h), options);
      assert.deepEqual(slice(whole, D, h), part, `${kernel} head ${h}`);
    }
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Input forms and ownership.

test('Float32Array, Float64Array and plain-array inputs give the same numbers; the output type follows the values', () => {
  const rand = mulberry32(7);
  for (const kernel of KERNELS) {
    const c = randomCall(rand, { kernel, maskKind: 'groups', heads: 1, dimsPerHead: 3, I: 9, J: 11 });
    if (kernel !== 'softmax') c.options.bandwidth = randomFloat32(rand, 3, 0.5, 2);
    const forms = [(a) => a, (a) => Float64Array.from(a), (a) => Array.from(a)];
    const results = forms.map((form) => {
      const options = {
        ...c.options,
        groups: { queries: form(c.options.groups.queries), keys: form(c.options.groups.keys) },
      };
      if (kernel !== 'softmax') options.bandwidth = form(c.options.bandwidth);
      return [
        ka.attention(form(c.queries), form(c.keys), form(c.values), options),
        ka.weights(form(c.queries), form(c.keys), options),
      ];
    });
    // Values on [−2, 2] need no shift: the float64 outputs are the float32 ones, widened.
    assert.ok(results[0][0] instanceof Float32Array, `${kernel}: Float32Array values give a Float32Array`);
    for (const [form, [out, w]] of [
      ['Float64Array', results[1]],
      ['plain arrays', results[2]],
    ]) {
      assert.ok(out instanceof Float64Array, `${kernel}: ${form} of values give a Float64Array`);
      assert.deepEqual(Array.from(out), Array.from(results[0][0]), `${kernel}: ${form} vs Float32Array`);
      assert.deepEqual(w, results[0][1], `${kernel}: ${form} weights vs Float32Array`);
    }
  }
});

test('values far from the origin (1.7e9) given in double come back in double, to float32 precision on their spread', () => {
  const rand = mulberry32(17);
  const J = 40;
  const keys = randomFloat32(rand, J);
  const queries = Float32Array.from([-0.9, -0.3, 0.1, 0.55, 0.95, 40]); // the last query has no key within reach
  const values = Float64Array.from(randomFloat32(rand, J, -2, 2), (v) => 1.7e9 + v);
  for (const kernel of ['softmax', 'gaussian', 'epanechnikov']) {
    for (const empty of ['zero', 'nan', 'nearest']) {
      const options = { dim: 1, kernel, empty, ...(kernel === 'softmax' ? { scale: 3 } : { bandwidth: 0.4 }) };
      const q = kernel === 'epanechnikov' ? queries : queries.subarray(0, 5);
      const want = referenceAttention(q, keys, values, options);
      for (const method of ['exact', 'auto']) {
        const got = ka.attention(q, keys, values, { ...options, method });
        assert.ok(got instanceof Float64Array, `${kernel} ${empty} ${method}: a Float64Array`);
        for (let i = 0; i < q.length; i++) {
          const what = `${kernel} empty '${empty}' ${method}, query ${q[i]}: got ${got[i]}, want ${want[i]}`;
          if (Number.isNaN(want[i])) assert.ok(Number.isNaN(got[i]), what);
          else assert.ok(Math.abs(got[i] - want[i]) <= 4e-5, what); // 1e-5 of the values' spread (4)
        }
      }
    }
  }
  // A Float32Array of the same values holds them to its own steps (128 at 1.7e9), and so does its output.
  const out = ka.attention(queries.subarray(0, 5), keys, Float32Array.from(values), { dim: 1, kernel: 'gaussian' });
  assert.ok(out instanceof Float32Array);
  for (const v of out) assert.equal(v % 128, 0);
});

test('inputs, masks, groups and bandwidths are unchanged after a call, including a call that throws', () => {
  const rand = mulberry32(8);
  const queries = randomFloat32(rand, 12);
  const keys = Float64Array.from(randomFloat32(rand, 12));
  const values = Array.from(randomFloat32(rand, 8));
  const mask = bits(rand, 4, 0.5);
  const general = Uint8Array.from([0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0]); // query 1 sees nothing
  const groups = { queries: Int32Array.from([0, 1, 0, 1]), keys: [0, 0, 1, 1] };
  const bandwidth = Float64Array.from([0.5, 1.5, 2]);
  const all = { queries, keys, values, mask, general, groups, bandwidth };
  const before = structuredClone(all);
  ka.attention(queries, keys, values, { dim: 3, kernel: 'gaussian', mask, groups, bandwidth });
  ka.weights(queries, keys, { dim: 3, kernel: 'tricube', mask, groups, bandwidth });
  assert.throws(
    () => ka.attention(queries, keys, values, { dim: 3, kernel: 'gaussian', mask: general, bandwidth, empty: 'error' }),
    { code: 'EmptyRow' },
  );
  assert.throws(
    () => ka.weights(queries, keys, { dim: 3, kernel: 'gaussian', mask: general, bandwidth, empty: 'error' }),
    { code: 'EmptyRow' },
  );
  assert.throws(() => ka.attention(queries, keys, values, { dim: 3, heads: 3, mask, groups }), { code: 'BadArgument' });
  assert.deepEqual(all, before);
});

test('typed-array views with a byteOffset into a larger buffer are read at their offset', () => {
  const rand = mulberry32(9);
  const view = (Type, data, offset) => {
    const buffer = new ArrayBuffer(Type.BYTES_PER_ELEMENT * (data.length + offset + 5));
    new Type(buffer).fill(Type === Uint8Array ? 1 : Type === Int32Array ? -7 : NaN); // poison around the view
    const v = new Type(buffer, offset * Type.BYTES_PER_ELEMENT, data.length);
    v.set(data);
    return v;
  };
  const c = randomCall(rand, { kernel: 'gaussian', maskKind: 'key padding', heads: 1, dimsPerHead: 2, I: 6, J: 9 });
  c.options.bandwidth = Float32Array.from([0.7, 1.3]);
  c.options.groups = { queries: ints(rand, 6, 2), keys: ints(rand, 9, 2) };
  c.options.empty = 'zero';
  const want = checkAttention(c);
  const wantWeights = checkWeights(c);
  for (const Float of [Float32Array, Float64Array]) {
    const options = {
      ...c.options,
      mask: view(Uint8Array, c.options.mask, 3),
      groups: {
        queries: view(Int32Array, c.options.groups.queries, 1),
        keys: view(Int32Array, c.options.groups.keys, 2),
      },
      bandwidth: view(Float, c.options.bandwidth, 1),
    };
    const q = view(Float, c.queries, 3);
    const k = view(Float, c.keys, 1);
    const got = ka.attention(q, k, view(Float, c.values, 5), options);
    assert.ok(got instanceof Float, Float.name);
    assert.deepEqual(Array.from(got), Array.from(want), Float.name);
    assert.deepEqual(ka.weights(q, k, options), wantWeights, Float.name);
  }
});

test('the result is a fresh Float32Array that owns its buffer and survives later calls and memory growth', () => {
  const rand = mulberry32(10);
  const c = randomCall(rand, { kernel: 'softmax', maskKind: 'none', heads: 1, dimsPerHead: 4, I: 8, J: 8 });
  c.options.empty = 'nan';
  const first = checkAttention(c);
  assert.equal(first.byteOffset, 0);
  assert.equal(first.buffer.byteLength, first.byteLength, 'the result must not be a view of wasm memory');
  const saved = first.slice();
  const w = ka.weights(c.queries, c.keys, c.options);
  assert.equal(w.buffer.byteLength, w.byteLength);

  first.fill(12345); // mutating a result must not affect a second call
  const second = checkAttention(c);
  assert.notEqual(second.buffer, first.buffer);
  assert.deepEqual(second, saved);

  // 2500×2500 weights need 25 MB, more than the initial 16 MiB of wasm memory: memory grows.
  const big = randomFloat32(rand, 2500);
  const large = ka.weights(big, big, { dim: 1, kernel: 'gaussian', bandwidth: 0.05 });
  assert.equal(large.length, 2500 * 2500);
  for (const i of [0, 1234, 2499]) {
    const row = large.subarray(i * 2500, (i + 1) * 2500);
    assertClose(
      row,
      referenceWeights(big.subarray(i, i + 1), big, { dim: 1, kernel: 'gaussian', bandwidth: 0.05 }),
      [1],
      `large row ${i}`,
    );
  }
  assert.deepEqual(second, saved, 'an earlier result is still valid after memory grew');
  assert.deepEqual(checkAttention(c), saved, 'calls after memory growth still work');
});

test('ka.simd names the instruction set, init() twice gives the same frozen object', async () => {
  assert.equal(typeof ka.simd, 'string');
  assert.ok(ka.simd.length > 0);
  assert.equal(await init(initOptions), ka);
  assert.equal(await init({ ...initOptions }), ka);
  assert.ok(Object.isFrozen(ka));
});

test("no queries (I = 0) give an empty array of the values' type", () => {
  for (const queries of [new Float32Array(0), [], new Float64Array(0)]) {
    for (const [values, Type] of [
      [Float32Array.from([3, 4, 5, 6]), Float32Array],
      [[3, 4, 5, 6], Float64Array],
    ]) {
      const out = ka.attention(queries, [1, 2], values, { dim: 1 });
      assert.ok(out instanceof Type);
      assert.equal(out.length, 0);
    }
    const w = ka.weights(queries, [1, 2], { dim: 1, kernel: 'gaussian', heads: 1 });
    assert.ok(w instanceof Float32Array);
    assert.equal(w.length, 0);
  }
});

// ---------------------------------------------------------------------------------------------------------------
// Hard cases: each must give its mathematical limit, never NaN.

const noNaN = (out, what) => assert.ok(!out.some(Number.isNaN), `${what}: NaN in ${Array.from(out)}`);
const near = (got, want, what, tol = 1e-5) => {
  noNaN(got, what);
  const err = maxAbsDiff(got, want);
  assert.ok(err <= tol * Math.max(1, maxAbs(want)), `${what}: got ${Array.from(got)}, want ${Array.from(want)}`);
};

test("a Gaussian bandwidth of 1e-4 on keys spaced 1e-2 gives the nearest key's value", () => {
  const keys = Float32Array.from({ length: 101 }, (_, j) => j / 100);
  const values = Float32Array.from({ length: 101 }, (_, j) => Math.sin(j) * 10);
  const queries = Float32Array.from([0.0123, 0.5, 0.5049, 0.9951, 0.33]);
  const nearest = Array.from(queries, (q) => values[Math.round(q * 100)]);
  near(ka.attention(queries, keys, values, { dim: 1, kernel: 'gaussian', bandwidth: 1e-4 }), nearest, 'attention');
  const w = ka.weights(queries, keys, { dim: 1, kernel: 'gaussian', bandwidth: 1e-4 });
  const want = new Float64Array(queries.length * 101);
  for (let i = 0; i < queries.length; i++) want[i * 101 + Math.round(queries[i] * 100)] = 1;
  near(w, want, 'weights');
});

test("softmax scores near ±1e4 give the arg-max key's value", () => {
  const keys = Float32Array.from([100, 99, 98, -100]);
  const values = Float32Array.from([1, 2, 3, 4]);
  // q·k ∈ {1e4, 9900, 9800, −1e4} for q = 100; all near −1e4 for q = −100 (arg-max is key 3).
  const out = ka.attention([100, -100, -99, 101], keys, values, { dim: 1, scale: 1 });
  near(out, [1, 4, 4, 1], 'softmax ±1e4');
  const w = ka.weights([100, -100], keys, { dim: 1, scale: 1 });
  near(w, [1, 0, 0, 0, 0, 0, 0, 1], 'weights ±1e4');
  // All scores far below zero (every exp(score) underflows): scores −1e4, −1.01e4, −1.02e4, −1.03e4.
  const low = ka.attention([1], [-1e4, -1.01e4, -1.02e4, -1.03e4], values, { dim: 1, scale: 1 });
  near(low, [1], 'all scores ≈ −1e4');
});

test('duplicate keys give the mean of their values', () => {
  // Tiny bandwidth: the query sits on the duplicated key, the other keys are far in u.
  const out = ka.attention([1.0001, 1], [0, 1, 1, 2], [10, 1, 3, 20], { dim: 1, kernel: 'gaussian', bandwidth: 1e-3 });
  near(out, [2, 2], 'gaussian duplicates');
  // Every key identical: every kernel weighs them equally, whatever the query (within reach for compact kernels).
  for (const kernel of KERNELS) {
    const options = kernel === 'softmax' ? { dim: 2 } : { dim: 2, kernel, bandwidth: 2 };
    const got = ka.attention([0.5, 0.25, 0.1, -0.2], [0.5, 0.5, 0.5, 0.5, 0.5, 0.5], [1, 10, 2, 20, 6, 60], options);
    near(got, [3, 30, 3, 30], kernel);
  }
});

test('one key gives its value for every query and every kernel', () => {
  const rand = mulberry32(11);
  const queries = Float32Array.from([...randomFloat32(rand, 20, -3, 3), 1e6, -1e6, 3e38, -3e38]);
  for (const kernel of KERNELS) {
    const compact = COMPACT.includes(kernel);
    const options = { dim: 2, kernel, empty: 'nearest' };
    const out = ka.attention(queries, [0.25, -0.5], [7, -3, 0.5], options);
    near(out, Array.from({ length: 12 }, () => [7, -3, 0.5]).flat(), `${kernel} (empty: 'nearest')`);
    if (!compact) {
      // every query is in reach: the default policy is never needed
      const plain = ka.attention(queries, [0.25, -0.5], [7, -3, 0.5], { ...options, empty: 'nan' });
      near(plain, Array.from({ length: 12 }, () => [7, -3, 0.5]).flat(), kernel);
    }
  }
});

test('queries far outside the data (±1e6) with the Gaussian give the value of the nearest end key', () => {
  const keys = Float32Array.from({ length: 50 }, (_, j) => j / 49);
  const values = Float32Array.from({ length: 50 }, (_, j) => j * j);
  for (const bandwidth of [1, 0.1, 1e-3]) {
    const out = ka.attention([1e6, -1e6, 5e3, -5e3], keys, values, { dim: 1, kernel: 'gaussian', bandwidth });
    near(out, [49 * 49, 0, 49 * 49, 0], `bandwidth ${bandwidth}`);
  }
  const w = ka.weights([1e6, -1e6], keys, { dim: 1, kernel: 'gaussian' });
  const want = new Float64Array(100);
  want[49] = 1;
  want[50] = 1;
  near(w, want, 'weights');
});

test('an exact tie at a tiny bandwidth gives the mean of the two values', () => {
  for (const kernel of ['gaussian', 'laplacian', 'epanechnikov', 'tricube', 'uniform']) {
    const empty = COMPACT.includes(kernel) ? 'nearest' : 'nan'; // out of reach of both: the tie rule of 'nearest'
    const out = ka.attention([0.5, 0.5, 0.5, 0.5], [0.25, 0.75], [2, 10], { dim: 1, kernel, bandwidth: 1e-4, empty });
    near(out, [6, 6, 6, 6], kernel);
    // In two dimensions, the query at the centre of four keys: mean of all four.
    const two = ka.attention([0, 0], [1, 0, -1, 0, 0, 1, 0, -1], [1, 2, 3, 6], {
      dim: 2,
      kernel,
      bandwidth: 1e-4,
      empty,
    });
    near(two, [3], `${kernel} 2-D`);
  }
});

test('values near the float32 limit average without overflowing', () => {
  // The mean of values within float32 range is within float32 range: 3e38, not Infinity; 0, not Infinity − Infinity.
  near(ka.attention([0], [0, 0, 0, 0, 0], [3e38, 3e38, 3e38, 3e38, 3e38], { dim: 1 }), [3e38], 'five equal keys');
  const alternating = Array.from({ length: 8 }, (_, j) => (j % 2 ? -3e38 : 3e38));
  near(
    ka.attention([0], new Array(8).fill(0), alternating, { dim: 1, kernel: 'gaussian' }),
    [0],
    'alternating signs',
    1e-5 * 3e38,
  );
});

test("no call returns NaN except through empty: 'nan'; 'zero' and 'nearest' fill empty rows", () => {
  const rand = mulberry32(12);
  const I = 6;
  const J = 6;
  const cases = [
    { mask: Uint8Array.from([1, 1, 1, 1, 1, 1]) }, // every key padded
    { mask: Uint8Array.from({ length: I * J }, (_, n) => (n < J ? 1 : 0)) }, // query 0 sees nothing
    { groups: { queries: [0, 1, 2, 2, 0, 5], keys: [0, 0, 1, 1, 2, 2] } }, // groups 5: no key
    { causal: true, mask: Uint8Array.from([1, 0, 0, 0, 0, 0]) }, // query 0 sees only key 0, padded
    { kernel: 'uniform', bandwidth: 1e-3 }, // nothing in reach
  ];
  for (const extra of cases) {
    for (const kernel of extra.kernel ? [extra.kernel] : KERNELS) {
      const half = randomFloat32(rand, J); // keys 3, 4, 5 repeat keys 0, 1, 2: 'nearest' meets exact ties
      const c = {
        queries: randomFloat32(rand, I * 2),
        keys: Float32Array.of(...half, ...half),
        values: randomFloat32(rand, J * 2),
      };
      const options = { dim: 2, ...extra, kernel };
      const nan = ka.attention(c.queries, c.keys, c.values, options);
      assert.ok(nan.some(Number.isNaN), `${kernel} ${JSON.stringify(extra)}: the case has an empty row`);
      for (const empty of ['zero', 'nearest']) {
        const o = { ...options, empty };
        const what = `${kernel} ${JSON.stringify(extra)} empty: '${empty}'`;
        const out = ka.attention(c.queries, c.keys, c.values, o);
        noNaN(out, what);
        assertClose(out, referenceAttention(c.queries, c.keys, c.values, o), c.values, what);
        const w = ka.weights(c.queries, c.keys, o);
        noNaN(w, `weights ${what}`);
        assertClose(w, referenceWeights(c.queries, c.keys, o), [1], `weights ${what}`);
      }
      const zero = ka.attention(c.queries, c.keys, c.values, { ...options, empty: 'zero' });
      for (let n = 0; n < nan.length; n++) {
        // 'zero' writes zeros exactly where 'nan' writes NaN
        if (Number.isNaN(nan[n])) assert.equal(zero[n], 0);
        else assert.equal(zero[n], nan[n]);
      }
    }
  }
});

test('errors from the API are KernelAttentionError instances', () => {
  assert.throws(
    () => ka.attention([1], [1], [1], { dim: 0 }),
    (e) => e instanceof KernelAttentionError && e instanceof Error,
  );
});
