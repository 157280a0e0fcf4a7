// Every bad input, from one table, for attention() and weights(): a KernelAttentionError with the expected code and
// argument, a message naming the argument and the received value, and a module that keeps working afterwards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';

const ka = await init();

// A valid call: I = 3 queries and J = 2 keys in dim 2, values of width D = 2.
const QUERIES = [0, 1, 1, 0, 0.5, 0.5];
const KEYS = [0, 0, 1, 1];
const VALUES = [1, 2, 3, 4];
const OPTIONS = { dim: 2 };
const EXPECTED = {
  attention: ka.attention(QUERIES, KEYS, VALUES, OPTIONS),
  weights: ka.weights(QUERIES, KEYS, OPTIONS),
};

/** A Float32Array whose buffer has been transferred away (detached). */
function detached() {
  const view = new Float32Array(6);
  structuredClone(view.buffer, { transfer: [view.buffer] });
  return view;
}

const gaussian = (extra) => ({ dim: 2, kernel: 'gaussian', ...extra });
const withHole = [0, 1, 1, 0, 0.5, 0.5];
delete withHole[2];

/**
 * Each row: what it changes in the valid call (queries, keys, values, options), the expected code and argument,
 * and `says`: what the message must contain besides the argument (the received value, or the hint).
 * `says2`: a second part the message must contain. `only: 'attention'` for rows about values.
 */
const ROWS = [
  // options
  { name: 'missing options', options: undefined, code: 'BadArgument', argument: 'options', says: 'required' },
  { name: 'options a number', options: 5, code: 'BadArgument', argument: 'options', says: '5' },
  { name: 'options a string', options: 'dim', code: 'BadArgument', argument: 'options', says: '"dim"' },
  { name: 'options null', options: null, code: 'BadArgument', argument: 'options', says: 'null' },
  { name: 'options an array', options: [2], code: 'BadArgument', argument: 'options', says: 'array' },
  {
    name: 'unknown option (typo bandwith)',
    options: gaussian({ bandwith: 0.5 }),
    code: 'BadArgument',
    argument: 'options.bandwith',
    says: 'bandwidth',
  },
  {
    name: 'unknown option (Dim)',
    options: { dim: 2, Dim: 2 },
    code: 'BadArgument',
    argument: 'options.Dim',
    says: 'dim',
  },
  // dim
  { name: 'dim missing', options: {}, code: 'BadArgument', argument: 'options.dim', says: 'undefined' },
  { name: 'dim 0', options: { dim: 0 }, code: 'BadArgument', argument: 'options.dim', says: 'got 0' },
  { name: 'dim −1', options: { dim: -1 }, code: 'BadArgument', argument: 'options.dim', says: 'got -1' },
  { name: 'dim 1.5', options: { dim: 1.5 }, code: 'BadArgument', argument: 'options.dim', says: 'got 1.5' },
  { name: "dim '2'", options: { dim: '2' }, code: 'BadArgument', argument: 'options.dim', says: 'got "2"' },
  { name: 'dim NaN', options: { dim: NaN }, code: 'BadArgument', argument: 'options.dim', says: 'got NaN' },
  // queries, keys, values: not arrays
  ...['queries', 'keys', 'values'].flatMap((argument) =>
    [
      [null, 'null'],
      [undefined, argument === 'values' ? 'required' : 'undefined'],
      ['abc', '"abc"'],
      [{ a: 1 }, 'object'],
    ].map(([bad, says]) => ({
      name: `${argument} ${describe(bad)}`,
      [argument]: bad,
      code: 'BadArgument',
      argument,
      says,
      only: argument === 'values' ? 'attention' : undefined,
    })),
  ),
  // shapes
  {
    name: 'queries length not a multiple of dim',
    queries: [0, 1, 1, 0, 0.5],
    code: 'BadShape',
    argument: 'queries',
    says: '5',
  },
  { name: 'keys length not a multiple of dim', keys: [0, 0, 1], code: 'BadShape', argument: 'keys', says: '3' },
  {
    name: 'values length not a multiple of J',
    values: [1, 2, 3],
    code: 'BadShape',
    argument: 'values',
    says: '3',
    only: 'attention',
  },
  { name: 'empty values', values: [], code: 'BadShape', argument: 'values', says: '0', only: 'attention' },
  { name: 'empty keys', keys: [], code: 'BadShape', argument: 'keys', says: 'empty' },
  {
    name: 'empty keys as a Float32Array',
    keys: new Float32Array(0),
    code: 'BadShape',
    argument: 'keys',
    says: 'empty',
  },
  // non-finite and out-of-range entries, in plain arrays and Float64Arrays (Float32Arrays cannot hold 1e39)
  ...['queries', 'keys', 'values'].flatMap((argument) =>
    [NaN, Infinity, -Infinity, 1e39, -1e39].flatMap((bad) => {
      const base = { queries: QUERIES, keys: KEYS, values: VALUES }[argument];
      const array = base.map((x, n) => (n === 1 ? bad : x));
      return [array, Float64Array.from(array)].map((input) => ({
        name: `${String(bad)} in ${argument} (${input.constructor.name})`,
        [argument]: input,
        code: 'NonFinite',
        argument,
        says: `${argument}[1]`,
        says2: String(bad),
        only: argument === 'values' ? 'attention' : undefined,
      }));
    }),
  ),
  {
    name: 'an empty BigInt64Array',
    queries: new BigInt64Array(0),
    code: 'BadArgument',
    argument: 'queries',
    says: 'BigInt64Array',
  },
  {
    name: 'a typed array whose buffer was transferred',
    queries: detached(),
    code: 'BadArgument',
    argument: 'queries',
    says: 'detached',
  },
  {
    name: 'keys whose buffer was transferred',
    keys: detached(),
    code: 'BadArgument',
    argument: 'keys',
    says: 'detached',
  },
  {
    name: 'NaN in a Float32Array',
    queries: Float32Array.from([0, 1, NaN, 0, 0.5, 0.5]),
    code: 'NonFinite',
    argument: 'queries',
    says: 'queries[2]',
    says2: 'NaN',
  },
  {
    name: 'a hole inside a plain array',
    queries: withHole,
    code: 'BadArgument',
    argument: 'queries',
    says: 'queries[2]',
    says2: 'hole',
  },
  {
    name: 'a string inside a plain array',
    keys: [0, '0', 1, 1],
    code: 'BadArgument',
    argument: 'keys',
    says: 'keys[1]',
    says2: '"0"',
  },
  {
    name: 'undefined inside a plain array',
    values: [1, 2, undefined, 4],
    code: 'BadArgument',
    argument: 'values',
    says: 'values[2]',
    only: 'attention',
  },
  // kernel
  {
    name: 'unknown kernel',
    options: { dim: 2, kernel: 'gauss' },
    code: 'BadArgument',
    argument: 'options.kernel',
    says: '"gauss"',
  },
  {
    name: 'kernel in capitals',
    options: { dim: 2, kernel: 'Gaussian' },
    code: 'BadArgument',
    argument: 'options.kernel',
    says: '"Gaussian"',
  },
  // bandwidth
  {
    name: 'bandwidth 0',
    options: gaussian({ bandwidth: 0 }),
    code: 'BadBandwidth',
    argument: 'options.bandwidth',
    says: 'got 0',
  },
  {
    name: 'bandwidth −1',
    options: gaussian({ bandwidth: -1 }),
    code: 'BadBandwidth',
    argument: 'options.bandwidth',
    says: 'got -1',
  },
  {
    name: 'bandwidth NaN',
    options: gaussian({ bandwidth: NaN }),
    code: 'BadBandwidth',
    argument: 'options.bandwidth',
    says: 'got NaN',
  },
  {
    name: 'bandwidth Infinity',
    options: gaussian({ bandwidth: Infinity }),
    code: 'BadBandwidth',
    argument: 'options.bandwidth',
    says: 'got Infinity',
  },
  {
    name: 'bandwidth 1e-50 (0 in float32)',
    options: gaussian({ bandwidth: 1e-50 }),
    code: 'BadBandwidth',
    argument: 'options.bandwidth',
    says: 'got 1e-50',
  },
  {
    name: 'bandwidth 1e39 (beyond float32)',
    options: gaussian({ bandwidth: 1e39 }),
    code: 'BadBandwidth',
    argument: 'options.bandwidth',
    says: 'got 1e+39',
  },
  {
    name: 'per-dimension bandwidth of the wrong length',
    options: gaussian({ bandwidth: [1, 1, 1] }),
    code: 'BadShape',
    argument: 'options.bandwidth',
    says: 'length 3',
  },
  {
    name: 'per-dimension bandwidth with a 0',
    options: gaussian({ bandwidth: Float64Array.from([1, 0]) }),
    code: 'BadBandwidth',
    argument: 'options.bandwidth',
    says: 'options.bandwidth[1]',
    says2: 'got 0',
  },
  {
    name: 'per-dimension bandwidth with a string',
    options: gaussian({ bandwidth: [1, '1'] }),
    code: 'BadBandwidth',
    argument: 'options.bandwidth',
    says: 'options.bandwidth[1]',
    says2: '"1"',
  },
  {
    name: 'bandwidth a string',
    options: gaussian({ bandwidth: 'wide' }),
    code: 'BadArgument',
    argument: 'options.bandwidth',
    says: '"wide"',
  },
  {
    name: 'bandwidth null',
    options: gaussian({ bandwidth: null }),
    code: 'BadArgument',
    argument: 'options.bandwidth',
    says: 'null',
  },
  // kernel/parameter mismatches and scale
  {
    name: 'scale with a distance kernel',
    options: gaussian({ scale: 1 }),
    code: 'BadArgument',
    argument: 'options.scale',
    says: 'gaussian',
  },
  {
    name: 'bandwidth with softmax',
    options: { dim: 2, bandwidth: 1 },
    code: 'BadArgument',
    argument: 'options.bandwidth',
    says: 'softmax',
  },
  { name: 'scale NaN', options: { dim: 2, scale: NaN }, code: 'BadArgument', argument: 'options.scale', says: 'NaN' },
  {
    name: 'scale Infinity',
    options: { dim: 2, scale: Infinity },
    code: 'BadArgument',
    argument: 'options.scale',
    says: 'Infinity',
  },
  {
    name: 'scale 1e39 (beyond float32)',
    options: { dim: 2, scale: 1e39 },
    code: 'BadArgument',
    argument: 'options.scale',
    says: '1e+39',
  },
  {
    name: 'scale a string',
    options: { dim: 2, scale: 'big' },
    code: 'BadArgument',
    argument: 'options.scale',
    says: 'big',
  },
  {
    name: 'scale a numeric string',
    options: { dim: 2, scale: '0.5' },
    code: 'BadArgument',
    argument: 'options.scale',
    says: '"0.5"',
  },
  // mask
  {
    name: 'mask of the wrong length',
    options: { dim: 2, mask: new Uint8Array(5) },
    code: 'BadShape',
    argument: 'options.mask',
    says: 'length 5',
  },
  {
    name: 'mask a plain array',
    options: { dim: 2, mask: [0, 1] },
    code: 'BadArgument',
    argument: 'options.mask',
    says: 'Array',
  },
  {
    name: 'mask an Int8Array',
    options: { dim: 2, mask: new Int8Array(2) },
    code: 'BadArgument',
    argument: 'options.mask',
    says: 'Int8Array',
  },
  {
    name: "mask 'LOO'",
    options: { dim: 2, mask: 'LOO' },
    code: 'BadArgument',
    argument: 'options.mask',
    says: '"LOO"',
  },
  {
    name: "mask 'causal'",
    options: { dim: 2, mask: 'causal' },
    code: 'BadArgument',
    argument: 'options.mask',
    says: '"causal"',
  },
  { name: 'mask a number', options: { dim: 2, mask: 1 }, code: 'BadArgument', argument: 'options.mask', says: 'got 1' },
  { name: 'mask null', options: { dim: 2, mask: null }, code: 'BadArgument', argument: 'options.mask', says: 'null' },
  {
    name: "mask 'loo' with I ≠ J",
    options: { dim: 2, mask: 'loo' },
    code: 'BadShape',
    argument: 'options.mask',
    says: 'I = 3, J = 2',
  },
  // causal
  { name: 'causal 1', options: { dim: 2, causal: 1 }, code: 'BadArgument', argument: 'options.causal', says: 'got 1' },
  {
    name: "causal 'true'",
    options: { dim: 2, causal: 'true' },
    code: 'BadArgument',
    argument: 'options.causal',
    says: '"true"',
  },
  {
    name: 'causal null',
    options: { dim: 2, causal: null },
    code: 'BadArgument',
    argument: 'options.causal',
    says: 'null',
  },
  // groups
  {
    name: 'groups.queries of the wrong length',
    options: { dim: 2, groups: { queries: [0, 0], keys: [0, 0] } },
    code: 'BadShape',
    argument: 'options.groups.queries',
    says: 'length 2',
  },
  {
    name: 'groups.keys of the wrong length',
    options: { dim: 2, groups: { queries: [0, 0, 0], keys: Int32Array.from([0, 0, 0]) } },
    code: 'BadShape',
    argument: 'options.groups.keys',
    says: 'length 3',
  },
  {
    name: 'groups.keys missing',
    options: { dim: 2, groups: { queries: [0, 0, 0] } },
    code: 'BadArgument',
    argument: 'options.groups.keys',
    says: 'undefined',
  },
  {
    name: 'a non-integer group id',
    options: { dim: 2, groups: { queries: [0, 1.5, 0], keys: [0, 0] } },
    code: 'BadArgument',
    argument: 'options.groups.queries',
    says: 'options.groups.queries[1]',
    says2: '1.5',
  },
  {
    name: 'a string group id',
    options: { dim: 2, groups: { queries: ['0', 0, 0], keys: [0, 0] } },
    code: 'BadArgument',
    argument: 'options.groups.queries',
    says: '"0"',
  },
  {
    name: 'a NaN group id',
    options: { dim: 2, groups: { queries: [0, 1, 0], keys: Float64Array.from([0, NaN]) } },
    code: 'BadArgument',
    argument: 'options.groups.keys',
    says: 'options.groups.keys[1]',
    says2: 'NaN',
  },
  {
    name: 'a group id beyond int32',
    options: { dim: 2, groups: { queries: [0, 2 ** 31, 0], keys: [0, 0] } },
    code: 'BadArgument',
    argument: 'options.groups.queries',
    says: '2147483648',
  },
  {
    name: 'an unknown key inside groups',
    options: { dim: 2, groups: { queries: [0, 0, 0], keys: [0, 0], query: [0] } },
    code: 'BadArgument',
    argument: 'options.groups.query',
    says: 'queries',
  },
  {
    name: 'groups a number',
    options: { dim: 2, groups: 7 },
    code: 'BadArgument',
    argument: 'options.groups',
    says: '7',
  },
  {
    name: 'groups an array',
    options: { dim: 2, groups: [0, 0, 0] },
    code: 'BadArgument',
    argument: 'options.groups',
    says: 'array',
  },
  // heads
  { name: 'heads 0', options: { dim: 2, heads: 0 }, code: 'BadArgument', argument: 'options.heads', says: 'got 0' },
  {
    name: 'heads 1.5',
    options: { dim: 2, heads: 1.5 },
    code: 'BadArgument',
    argument: 'options.heads',
    says: 'got 1.5',
  },
  { name: "heads '2'", options: { dim: 2, heads: '2' }, code: 'BadArgument', argument: 'options.heads', says: '"2"' },
  {
    name: 'heads not dividing dim',
    options: { dim: 2, heads: 3 },
    code: 'BadArgument',
    argument: 'options.heads',
    says: '3',
    says2: 'options.dim',
  },
  {
    name: 'heads not dividing D',
    values: [1, 2, 3, 4, 5, 6],
    options: { dim: 2, heads: 2 },
    code: 'BadArgument',
    argument: 'options.heads',
    says: 'D = 3',
    only: 'attention',
  },
  // empty policy
  {
    name: 'unknown empty policy',
    options: { dim: 2, empty: 'skip' },
    code: 'BadArgument',
    argument: 'options.empty',
    says: '"skip"',
  },
  {
    name: 'empty policy NaN (a number)',
    options: { dim: 2, empty: NaN },
    code: 'BadArgument',
    argument: 'options.empty',
    says: 'NaN',
  },
  // the one error after allocation: a row with no admissible key under empty: 'error'
  {
    name: "empty: 'error' with query 2 masked out",
    options: { dim: 2, mask: Uint8Array.from([0, 0, 0, 0, 1, 1]), empty: 'error' },
    code: 'EmptyRow',
    argument: 'options.empty',
    says: 'query 2',
  },
  {
    name: "empty: 'error' with every key padded",
    options: { dim: 2, mask: Uint8Array.from([1, 1]), empty: 'error' },
    code: 'EmptyRow',
    argument: 'options.empty',
    says: 'query 0',
  },
  {
    name: "empty: 'error' with query 1 out of reach in head 1",
    options: { dim: 2, heads: 2, kernel: 'uniform', bandwidth: [10, 0.1], empty: 'error' },
    queries: [0, 0, 0, 0.5, 0, 0.95],
    keys: [0, 0, 0, 0.9],
    code: 'EmptyRow',
    argument: 'options.empty',
    says: 'query 1',
    says2: 'head 1',
  },
];

function describe(value) {
  return value === null
    ? 'null'
    : value === undefined
      ? 'undefined'
      : typeof value === 'string'
        ? `'${value}'`
        : 'an object';
}

function callFor(row, fn) {
  const q = 'queries' in row ? row.queries : QUERIES;
  const k = 'keys' in row ? row.keys : KEYS;
  const v = 'values' in row ? row.values : VALUES;
  const o = 'options' in row ? row.options : OPTIONS;
  return fn === 'attention' ? () => ka.attention(q, k, v, o) : () => ka.weights(q, k, o);
}

for (const fn of ['attention', 'weights']) {
  for (const row of ROWS) {
    if (row.only && row.only !== fn) continue;
    test(`${fn}: ${row.name} throws ${row.code} for ${row.argument}, and the next valid call works`, () => {
      assert.throws(callFor(row, fn), (error) => {
        assert.ok(error instanceof KernelAttentionError, `not a KernelAttentionError: ${error}`);
        assert.ok(error instanceof Error);
        assert.equal(error.name, 'KernelAttentionError');
        assert.equal(error.code, row.code, error.message);
        assert.equal(error.argument, row.argument, error.message);
        assert.ok(error.message.includes(row.argument), `message does not name ${row.argument}: ${error.message}`);
        for (const part of [row.says, row.says2]) {
          if (part !== undefined)
            assert.ok(error.message.includes(part), `message does not say ${part}: ${error.message}`);
        }
        return true;
      });
      const again =
        fn === 'attention' ? ka.attention(QUERIES, KEYS, VALUES, OPTIONS) : ka.weights(QUERIES, KEYS, OPTIONS);
      assert.deepEqual(again, EXPECTED[fn]);
    });
  }
}

test('a valid version of every EmptyRow case succeeds with the default policy', () => {
  for (const row of ROWS.filter((r) => r.code === 'EmptyRow')) {
    const { empty, ...options } = row.options;
    const out = ka.attention(row.queries ?? QUERIES, row.keys ?? KEYS, VALUES, options);
    assert.ok(out.some(Number.isNaN), row.name);
  }
});

test('init({ nope: 1 }) rejects with BadArgument, and init() still works', async () => {
  await assert.rejects(init({ nope: 1 }), (error) => {
    assert.ok(error instanceof KernelAttentionError);
    assert.equal(error.code, 'BadArgument');
    assert.equal(error.argument, 'options.nope');
    assert.ok(error.message.includes('nope'));
    return true;
  });
  await assert.rejects(init(5), { code: 'BadArgument', argument: 'options' });
  assert.equal(await init(), ka);
});

// ---------------------------------------------------------------------------------------------------------------
// kernelRegression, model.predict / predictInterval, and selectBandwidth / cvScore with estimator and weights.

// A valid regression sample: n = 5 points in dim 1, one column of y; a dim-2 sample for shape errors.
const RX = [0, 0.2, 0.5, 0.7, 1];
const RY = [1, 2, 1, 3, 2];
const RX2 = [0, 0, 0.2, 1, 0.5, 0.4, 0.7, 0.9, 1, 0.1];
const RX3 = [0, 0, 0, 0.2, 1, 0.3, 0.5, 0.4, 0.8, 0.7, 0.9, 0.1, 1, 0.1, 0.6];
const MODEL = ka.kernelRegression(RX, RY, { dim: 1, bandwidth: 0.3 });
const MODEL2 = ka.kernelRegression(RX2, RY, { dim: 2, bandwidth: [0.4, 0.5], estimator: 'nadaraya-watson' });
const RQ = [0.1, 0.6];
const R_EXPECTED = MODEL.predictInterval(RQ);

const fit = (options) => () => ka.kernelRegression(RX, RY, options);
const select = (options) => () => ka.selectBandwidth(RX, RY, options);
const cv = (options) => () => ka.cvScore(RX, RY, options);

/** Bad observation weights, for every function that takes them (`call` builds the call from the weights). */
const badWeights = (fn, call) => [
  {
    name: `${fn}: a negative weight`,
    run: call([1, 1, -1, 1, 1]),
    code: 'BadArgument',
    argument: 'options.weights',
    says: 'options.weights[2]',
    says2: '-1',
  },
  {
    name: `${fn}: a NaN weight`,
    run: call([1, NaN, 1, 1, 1]),
    code: 'NonFinite',
    argument: 'options.weights',
    says: 'options.weights[1]',
    says2: 'NaN',
  },
  {
    name: `${fn}: an infinite weight`,
    run: call(Float64Array.from([1, 1, 1, Infinity, 1])),
    code: 'NonFinite',
    argument: 'options.weights',
    says: 'Infinity',
  },
  {
    name: `${fn}: weights of the wrong length`,
    run: call([1, 1, 1]),
    code: 'BadShape',
    argument: 'options.weights',
    says: 'length 3',
  },
  {
    name: `${fn}: all weights zero`,
    run: call(new Float32Array(5)),
    code: 'BadArgument',
    argument: 'options.weights',
    says: 'zero',
  },
  {
    name: `${fn}: weights a string`,
    run: call('equal'),
    code: 'BadArgument',
    argument: 'options.weights',
    says: '"equal"',
  },
  { name: `${fn}: weights a number`, run: call(1), code: 'BadArgument', argument: 'options.weights', says: 'got 1' },
  { name: `${fn}: weights null`, run: call(null), code: 'BadArgument', argument: 'options.weights', says: 'null' },
];

const REGRESSION_ROWS = [
  // kernelRegression: options, sample, choices
  {
    name: 'kernelRegression: missing options',
    run: () => ka.kernelRegression(RX, RY),
    code: 'BadArgument',
    argument: 'options',
    says: 'required',
  },
  { name: 'kernelRegression: options a number', run: fit(1), code: 'BadArgument', argument: 'options', says: 'got 1' },
  {
    name: 'kernelRegression: unknown option (bandwith)',
    run: fit({ dim: 1, bandwith: 0.3 }),
    code: 'BadArgument',
    argument: 'options.bandwith',
    says: 'bandwidth',
  },
  {
    name: "kernelRegression: method 'cv' (a bandwidth rule goes in bandwidth)",
    run: fit({ dim: 1, method: 'cv' }),
    code: 'BadArgument',
    argument: 'options.method',
    says: 'method',
  },
  {
    name: "kernelRegression: method 'fft'",
    run: fit({ dim: 1, method: 'fft' }),
    code: 'BadArgument',
    argument: 'options.method',
    says: '"fft"',
  },
  {
    name: "kernelRegression: method 'grid' in 3-D",
    run: () => ka.kernelRegression(RX3, RY, { dim: 3, method: 'grid' }),
    code: 'BadArgument',
    argument: 'options.method',
    says: '3 dimensions: the grid serves 1 or 2',
  },
  {
    name: "kernelRegression: method 'grid' with cauchy",
    run: fit({ dim: 1, kernel: 'cauchy', method: 'grid' }),
    code: 'BadArgument',
    argument: 'options.method',
    says: 'cauchy',
  },
  {
    name: 'kernelRegression: tolerance 0',
    run: fit({ dim: 1, tolerance: 0 }),
    code: 'BadArgument',
    argument: 'options.tolerance',
    says: 'got 0',
  },
  {
    name: 'kernelRegression: tolerance 1',
    run: fit({ dim: 1, tolerance: 1 }),
    code: 'BadArgument',
    argument: 'options.tolerance',
    says: 'got 1',
  },
  {
    name: "kernelRegression: tolerance '1e-3'",
    run: fit({ dim: 1, tolerance: '1e-3' }),
    code: 'BadArgument',
    argument: 'options.tolerance',
    says: '1e-3',
  },
  {
    name: 'kernelRegression: tolerance NaN',
    run: fit({ dim: 1, tolerance: NaN }),
    code: 'BadArgument',
    argument: 'options.tolerance',
    says: 'NaN',
  },
  {
    name: "selectBandwidth: method 'fast'",
    run: select({ dim: 1, method: 'fast' }),
    code: 'BadArgument',
    argument: 'options.method',
    says: '"fast"',
  },
  {
    name: 'selectBandwidth: tolerance -1',
    run: select({ dim: 1, tolerance: -1 }),
    code: 'BadArgument',
    argument: 'options.tolerance',
    says: '-1',
  },
  {
    name: "cvScore: method 'grid' in 3-D",
    run: () => ka.cvScore(RX3, RY, { dim: 3, bandwidth: 0.3, method: 'grid' }),
    code: 'BadArgument',
    argument: 'options.method',
    says: '3 dimensions: the grid serves 1 or 2',
  },
  {
    name: 'kernelRegression: dim missing',
    run: fit({ bandwidth: 0.3 }),
    code: 'BadArgument',
    argument: 'options.dim',
    says: 'undefined',
  },
  {
    name: "kernelRegression: dim '1'",
    run: fit({ dim: '1' }),
    code: 'BadArgument',
    argument: 'options.dim',
    says: '"1"',
  },
  {
    name: 'kernelRegression: x null',
    run: () => ka.kernelRegression(null, RY, { dim: 1 }),
    code: 'BadArgument',
    argument: 'x',
    says: 'null',
  },
  {
    name: 'kernelRegression: x a string',
    run: () => ka.kernelRegression('0,1', RY, { dim: 1 }),
    code: 'BadArgument',
    argument: 'x',
    says: '"0,1"',
  },
  {
    name: 'kernelRegression: y undefined',
    run: () => ka.kernelRegression(RX, undefined, { dim: 1 }),
    code: 'BadArgument',
    argument: 'y',
    says: 'undefined',
  },
  {
    name: 'kernelRegression: x length not a multiple of dim',
    run: () => ka.kernelRegression(RX, RY, { dim: 2 }),
    code: 'BadShape',
    argument: 'x',
    says: '5',
  },
  {
    name: 'kernelRegression: one row of x',
    run: () => ka.kernelRegression([0], [1], { dim: 1 }),
    code: 'BadShape',
    argument: 'x',
    says: 'got 1',
  },
  {
    name: 'kernelRegression: y not n·D long',
    run: () => ka.kernelRegression(RX, [1, 2, 3], { dim: 1 }),
    code: 'BadShape',
    argument: 'y',
    says: 'length 3',
  },
  {
    name: 'kernelRegression: NaN in x',
    run: () => ka.kernelRegression([0, NaN, 0.5, 0.7, 1], RY, { dim: 1 }),
    code: 'NonFinite',
    argument: 'x',
    says: 'x[1]',
    says2: 'NaN',
  },
  {
    name: 'kernelRegression: Infinity in y',
    run: () => ka.kernelRegression(RX, Float64Array.from([1, 2, Infinity, 3, 2]), { dim: 1 }),
    code: 'NonFinite',
    argument: 'y',
    says: 'y[2]',
  },
  {
    name: 'kernelRegression: unknown estimator',
    run: fit({ dim: 1, estimator: 'local-cubic' }),
    code: 'BadArgument',
    argument: 'options.estimator',
    says: '"local-cubic"',
  },
  {
    name: "kernelRegression: estimator 'lc' (statsmodels' name)",
    run: fit({ dim: 1, estimator: 'lc' }),
    code: 'BadArgument',
    argument: 'options.estimator',
    says: '"lc"',
  },
  {
    name: 'kernelRegression: estimator a number',
    run: fit({ dim: 1, estimator: 1 }),
    code: 'BadArgument',
    argument: 'options.estimator',
    says: 'got 1',
  },
  {
    name: 'kernelRegression: softmax kernel',
    run: fit({ dim: 1, kernel: 'softmax' }),
    code: 'BadArgument',
    argument: 'options.kernel',
    says: '"softmax"',
  },
  {
    name: 'kernelRegression: unknown bandwidth rule',
    run: fit({ dim: 1, bandwidth: 'cv_ls' }),
    code: 'BadArgument',
    argument: 'options.bandwidth',
    says: '"cv_ls"',
  },
  {
    name: 'kernelRegression: bandwidth 0',
    run: fit({ dim: 1, bandwidth: 0 }),
    code: 'BadBandwidth',
    argument: 'options.bandwidth',
    says: 'got 0',
  },
  {
    name: 'kernelRegression: bandwidth −1',
    run: fit({ dim: 1, bandwidth: -1 }),
    code: 'BadBandwidth',
    argument: 'options.bandwidth',
    says: 'got -1',
  },
  {
    name: 'kernelRegression: bandwidth NaN',
    run: fit({ dim: 1, bandwidth: NaN }),
    code: 'BadBandwidth',
    argument: 'options.bandwidth',
    says: 'NaN',
  },
  {
    name: 'kernelRegression: two bandwidths for dim 1',
    run: fit({ dim: 1, bandwidth: [0.3, 0.3] }),
    code: 'BadShape',
    argument: 'options.bandwidth',
    says: 'length 2',
  },
  {
    name: 'kernelRegression: bandwidth null',
    run: fit({ dim: 1, bandwidth: null }),
    code: 'BadArgument',
    argument: 'options.bandwidth',
    says: 'null',
  },
  {
    name: 'kernelRegression: unknown empty policy',
    run: fit({ dim: 1, bandwidth: 0.3, empty: 'skip' }),
    code: 'BadArgument',
    argument: 'options.empty',
    says: '"skip"',
  },
  {
    name: "kernelRegression: perDimension 'yes'",
    run: fit({ dim: 1, perDimension: 'yes' }),
    code: 'BadArgument',
    argument: 'options.perDimension',
    says: '"yes"',
  },
  ...badWeights('kernelRegression', (weights) => fit({ dim: 1, bandwidth: 0.3, weights })),
  ...badWeights('kernelRegression (cv)', (weights) => fit({ dim: 1, weights })),
  // model.predict and model.predictInterval
  { name: 'predict: xq missing', run: () => MODEL.predict(), code: 'BadArgument', argument: 'xq', says: 'undefined' },
  { name: 'predict: xq a number', run: () => MODEL.predict(0.5), code: 'BadArgument', argument: 'xq', says: 'got 0.5' },
  { name: 'predict: xq a string', run: () => MODEL.predict('0.5'), code: 'BadArgument', argument: 'xq', says: '"0.5"' },
  {
    name: 'predict: NaN in xq',
    run: () => MODEL.predict([0.5, NaN]),
    code: 'NonFinite',
    argument: 'xq',
    says: 'xq[1]',
    says2: 'NaN',
  },
  {
    name: 'predict: 1e39 in xq',
    run: () => MODEL.predict(Float64Array.from([1e39])),
    code: 'NonFinite',
    argument: 'xq',
    says: 'xq[0]',
  },
  {
    name: 'predict: xq not a multiple of dim',
    run: () => MODEL2.predict([0.5, 0.5, 0.5]),
    code: 'BadShape',
    argument: 'xq',
    says: 'length 3',
  },
  {
    name: 'predictInterval: xq null',
    run: () => MODEL.predictInterval(null),
    code: 'BadArgument',
    argument: 'xq',
    says: 'null',
  },
  {
    name: 'predictInterval: xq not a multiple of dim',
    run: () => MODEL2.predictInterval([0.5]),
    code: 'BadShape',
    argument: 'xq',
    says: 'length 1',
  },
  ...[
    [0, 'got 0'],
    [1, 'got 1'],
    [NaN, 'NaN'],
    ['0.9', '"0.9"'],
    [-0.5, '-0.5'],
    [1.5, '1.5'],
    [95, '95'],
    [Infinity, 'Infinity'],
    [null, 'null'],
  ].map(([level, says]) => ({
    name: `predictInterval: level ${typeof level === 'string' ? `'${level}'` : level}`,
    run: () => MODEL.predictInterval(RQ, { level }),
    code: 'BadArgument',
    argument: 'intervalOptions.level',
    says,
  })),
  {
    name: 'predictInterval: unknown option (lvl)',
    run: () => MODEL.predictInterval(RQ, { lvl: 0.9 }),
    code: 'BadArgument',
    argument: 'intervalOptions.lvl',
    says: 'level',
  },
  {
    name: 'predictInterval: options a number',
    run: () => MODEL.predictInterval(RQ, 0.9),
    code: 'BadArgument',
    argument: 'intervalOptions',
    says: '0.9',
  },
  {
    name: 'predictInterval: options null',
    run: () => MODEL.predictInterval(RQ, null),
    code: 'BadArgument',
    argument: 'intervalOptions',
    says: 'null',
  },
  // selectBandwidth and cvScore: the new options
  {
    name: 'selectBandwidth: unknown estimator',
    run: select({ dim: 1, estimator: 'loess' }),
    code: 'BadArgument',
    argument: 'options.estimator',
    says: '"loess"',
  },
  {
    name: "selectBandwidth: rule 'aic'",
    run: select({ dim: 1, rule: 'aic' }),
    code: 'BadArgument',
    argument: 'options.rule',
    says: '"aic"',
  },
  {
    name: "selectBandwidth: rule 'AICc'",
    run: select({ dim: 1, rule: 'AICc' }),
    code: 'BadArgument',
    argument: 'options.rule',
    says: '"AICc"',
  },
  {
    name: 'selectBandwidth: unknown option (bandwidth)',
    run: select({ dim: 1, bandwidth: 0.3 }),
    code: 'BadArgument',
    argument: 'options.bandwidth',
    says: 'bandwidth',
  },
  {
    name: 'selectBandwidth: unknown option (weight)',
    run: select({ dim: 1, weight: [1, 1, 1, 1, 1] }),
    code: 'BadArgument',
    argument: 'options.weight',
    says: 'weights',
  },
  ...badWeights('selectBandwidth', (weights) => select({ dim: 1, rule: 'aicc', estimator: 'local-linear', weights })),
  {
    name: 'cvScore: unknown estimator',
    run: cv({ dim: 1, bandwidth: 0.3, estimator: 'LocalLinear' }),
    code: 'BadArgument',
    argument: 'options.estimator',
    says: '"LocalLinear"',
  },
  {
    name: "cvScore: method 'cv' (a rule, not a computation)",
    run: cv({ dim: 1, bandwidth: 0.3, method: 'cv' }),
    code: 'BadArgument',
    argument: 'options.method',
    says: 'method',
  },
  {
    name: 'cvScore: bandwidth a rule name',
    run: cv({ dim: 1, bandwidth: 'scott' }),
    code: 'BadArgument',
    argument: 'options.bandwidth',
    says: '"scott"',
  },
  ...badWeights('cvScore', (weights) => cv({ dim: 1, bandwidth: 0.3, estimator: 'local-linear', weights })),
];

for (const row of REGRESSION_ROWS) {
  test(`${row.name} throws ${row.code} for ${row.argument}, and the next valid call works`, () => {
    assert.throws(row.run, (error) => {
      assert.ok(error instanceof KernelAttentionError, `not a KernelAttentionError: ${error}`);
      assert.equal(error.code, row.code, error.message);
      assert.equal(error.argument, row.argument, error.message);
      assert.ok(error.message.includes(row.argument), `message does not name ${row.argument}: ${error.message}`);
      for (const part of [row.says, row.says2]) {
        if (part !== undefined)
          assert.ok(error.message.includes(part), `message does not say ${part}: ${error.message}`);
      }
      return true;
    });
    assert.deepEqual(MODEL.predictInterval(RQ), R_EXPECTED);
    assert.deepEqual(ka.kernelRegression(RX, RY, { dim: 1, bandwidth: 0.3 }).predict(RQ), R_EXPECTED.mean);
  });
}

test('a disposed model throws Disposed for argument model, before anything else is checked', () => {
  const model = ka.kernelRegression(RX, RY, { dim: 1, bandwidth: 0.3 });
  model.dispose();
  for (const run of [
    () => model.predict(RQ),
    () => model.predict('bad'),
    () => model.predictInterval(RQ, { level: 0.9 }),
  ]) {
    assert.throws(
      run,
      (e) =>
        e instanceof KernelAttentionError &&
        e.code === 'Disposed' &&
        e.argument === 'model' &&
        e.message.includes('dispose'),
    );
  }
});
