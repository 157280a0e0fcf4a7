// The bad-input matrix (issue 8, item 3), generated from one table. Every public function of init()'s API and of a
// model is described once: a valid call (arguments built fresh), its numeric-array arguments, its state arguments,
// and each option with its kind. From that the standard bad values are generated per argument and per option; each
// must throw a KernelAttentionError with a documented code naming the argument, leave every input byte for byte
// unchanged, and leave the module giving the same bytes for a valid call as before. Accepted forms (views at a byte
// offset into a NaN-filled buffer, SharedArrayBuffer-backed arrays, Float64Arrays, Proxies whose length changes after
// the check) must give the bytes of the plain valid call. Sizes whose byte count passes 2³² must be refused before
// anything is allocated. Two checks keep the table complete: every function of the API and of a model has an entry,
// and each entry's options are exactly the names the function accepts (read from its unknown-option error).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { initOptions } from './build.mjs';

const ka = await init(initOptions);

const CODES = [
  'BadArgument',
  'BadShape',
  'NonFinite',
  'BadBandwidth',
  'EmptyRow',
  'OutOfMemory',
  'Unsupported',
  'Disposed',
];
const KERNELS = ['softmax', 'gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'];
const DISTANCE_KERNELS = KERNELS.slice(1);
const EMPTY = ['nan', 'zero', 'nearest', 'error'];
const ESTIMATORS = ['nadaraya-watson', 'local-linear'];
const RULES = ['cv', 'aicc', 'scott', 'silverman'];

// The valid data: I = 3 queries and J = 2 keys in dim 2 with values of width D = 2; a regression sample of n = 5
// points in dim 2 (dim 2, so that one entry short or long is a shape error of that very array) and 2 query points.
const Q = [0, 1, 1, 0, 0.5, 0.5];
const K = [0, 0, 1, 1];
// Values near the origin: attention shifts no column of them (frame.js), so their Float32Array forms, taken as stored,
// give the same numbers as the plain valid call (as a Float32Array rather than a Float64Array: compared as float64).
const V = [1, -2, 3, 4];
const X = [0, 0, 0.2, 1, 0.5, 0.4, 0.7, 0.9, 1, 0.1];
const Y = [1, 2, 1, 3, 2];
const XQ = [0.1, 0.2, 0.6, 0.5];
// loess's valid call: 8 points in 1-D (enough for degree 2 at span 0.75), exact in float32.
const LOESS_X = [0, 0.25, 0.5, 0.75, 1, 0.125, 0.375, 0.625];
const LOESS_Y = [1, 2, 1, 3, 2, 1.5, 2.5, 0.5];
const LOESS_W = [1, 2, 1, 2, 1, 2, 1, 2];
const LOESS_Q = [0.1, 0.5, 0.9];
const DOUT = [0.5, -1, 0.25, 2, -0.75, 1]; // dL/dOut of attentionGradients(): I·D = 3·2
const REGRESSION = { dim: 2, bandwidth: [0.4, 0.5] };
const MODEL = ka.kernelRegression(X, Y, REGRESSION);
const STATE_A = ka.attentionState(Q, K.slice(0, 2), V.slice(0, 2), { dim: 2 });
const STATE_B = ka.attentionState(Q, K.slice(2), V.slice(2), { dim: 2 });
const STATE = ka.mergeStates(STATE_A, STATE_B);

// ---------------------------------------------------------------------------------------------------------------
// Building blocks for generated values (each call makes a fresh one).

const at = (array, index, value) => Object.assign([...array], { [index]: value });
const withHole = (array, index = 1) => {
  const copy = [...array];
  delete copy[index];
  return copy;
};
const rows = (array, cols) =>
  Array.from({ length: array.length / cols }, (_, r) => array.slice(r * cols, (r + 1) * cols));
/** A view of `values` at a byte offset into a larger buffer whose other entries are `pad` (read them and it shows). */
function offsetView(values, Type = Float32Array, pad = NaN) {
  const buffer = new Type(values.length + 5).fill(pad);
  buffer.set(values, 3);
  return buffer.subarray(3, 3 + values.length);
}
function shared(values, Type = Float32Array) {
  const view = new Type(new SharedArrayBuffer(values.length * Type.BYTES_PER_ELEMENT));
  view.set(values);
  return view;
}
function detached(Type, length) {
  const view = new Type(length);
  structuredClone(view.buffer, { transfer: [view.buffer] });
  return view;
}
const cloneState = (s) => ({ ...s, max: s.max.slice(), sum: s.sum.slice(), acc: s.acc.slice() });
/** A typed array (of `Type`, holding `values`) whose `length` getter claims `claimed` entries. */
function lying(Type, values, claimed) {
  const Liar = class extends Type {
    get length() {
      return claimed;
    }
  };
  return new Liar(values);
}
/**
 * A Proxy of the plain array `values` that, during the call (`armed`; the test's own reads do not count), gives its
 * real length once and then claims 4096 entries (zeros): a check of one length and a copy of another would overflow.
 */
let armed = false;
function growing(values) {
  let reads = 0;
  const length = (target) => (armed && reads++ ? 4096 : target.length);
  return new Proxy([...values], {
    get: (target, key) =>
      key === 'length'
        ? length(target)
        : (target[key] ?? (typeof key === 'string' && /^\d+$/.test(key) ? 0 : undefined)),
  });
}

/** Values of every wrong type, except the types in `except` ('string', 'boolean', 'number', 'object'…). */
function wrongTypes(except = []) {
  return [
    ['null', null, 'object'],
    ['a string', 'abc', 'string'],
    ['true', true, 'boolean'],
    ['the number 7', 7, 'number'],
    ['an empty object', {}, 'object'],
    ['a function', () => 2, 'function'],
    ['a symbol', Symbol('bad'), 'symbol'],
    ['a BigInt', 2n, 'bigint'],
  ]
    .filter(([, , type]) => !except.includes(type))
    .map(([label, value]) => ({ label, value, code: 'BadArgument' }));
}

// ---------------------------------------------------------------------------------------------------------------
// Generators: the standard bad (and accepted) values of each kind. A case is { label, value, code?, argument?,
// ok? } — `ok: true` must succeed with the bytes of the valid call, `ok: 'runs'` must only succeed; `argument` (a
// name or a list of acceptable names) overrides the argument or option the case is generated for.

/** A flat numeric array (the valid one is `base`, a plain array with `cols` columns). */
function numericArrayCases(base, { cols, empty = 'BadShape', shapeArgument } = {}) {
  return [
    { label: 'undefined', value: undefined, code: 'BadArgument' },
    ...wrongTypes(),
    { label: "a numeric string ('1')", value: '1', code: 'BadArgument' },
    { label: 'the numbers as one string', value: base.join(','), code: 'BadArgument' },
    { label: 'a nested array (one array per row)', value: rows(base, cols), code: 'BadArgument' },
    { label: 'every number as a string', value: base.map(String), code: 'BadArgument' },
    { label: "one entry '1'", value: at(base, 1, '1'), code: 'BadArgument' },
    { label: 'a hole', value: withHole(base), code: 'BadArgument' },
    { label: 'only holes', value: new Array(base.length), code: 'BadArgument' },
    ...[undefined, null, true, 1n, [1]].map((x) => ({
      label: `an entry ${typeof x === 'bigint' ? '1n' : (JSON.stringify(x) ?? 'undefined')}`,
      value: at(base, 1, x),
      code: 'BadArgument',
    })),
    { label: 'one entry short', value: base.slice(0, -1), code: 'BadShape', argument: shapeArgument },
    { label: 'one entry long', value: [...base, 0.5], code: 'BadShape', argument: shapeArgument },
    empty === 'ok' ? { label: 'empty (no rows)', value: [], ok: 'runs' } : { label: 'empty', value: [], code: empty },
    empty === 'ok'
      ? { label: 'an empty Float32Array', value: new Float32Array(0), ok: 'runs' }
      : { label: 'an empty Float32Array', value: new Float32Array(0), code: empty },
    ...[NaN, Infinity, -Infinity].flatMap((x) =>
      [Array, Float64Array, Float32Array].map((Type) => ({
        label: `${x} in a ${Type.name}`,
        value: Type.from(at(base, 1, x)),
        code: 'NonFinite',
      })),
    ),
    ...[1e39, -1e39].flatMap((x) =>
      [Array, Float64Array].map((Type) => ({
        label: `${x} (beyond float32) in a ${Type.name}`,
        value: Type.from(at(base, 1, x)),
        code: 'NonFinite',
      })),
    ),
    { label: 'a detached Float32Array', value: detached(Float32Array, base.length), code: 'BadArgument' },
    { label: 'a DataView', value: new DataView(Float32Array.from(base).buffer), code: 'BadArgument' },
    { label: 'an ArrayBuffer', value: Float32Array.from(base).buffer, code: 'BadArgument' },
    { label: 'a BigInt64Array', value: BigInt64Array.from(base, () => 1n), code: 'BadArgument' },
    { label: 'a sparse array of length 2³² − 1', value: new Array(2 ** 32 - 1) },
    {
      label: 'a Float32Array subclass claiming one entry fewer',
      value: lying(Float32Array, base, base.length - cols),
      code: 'BadArgument',
    },
    {
      label: 'a Float32Array subclass claiming 2³² entries',
      value: lying(Float32Array, base, 2 ** 32),
      code: 'BadArgument',
    },
    { label: 'a Proxy whose length grows after the first read', value: growing(base), ok: true },
    { label: 'a Float32Array', value: Float32Array.from(base), ok: true },
    { label: 'a Float64Array', value: Float64Array.from(base), ok: true },
    { label: 'a Float32Array view at a byte offset into a NaN-filled buffer', value: offsetView(base), ok: true },
    {
      label: 'a Float64Array view at a byte offset into a NaN-filled buffer',
      value: offsetView(base, Float64Array),
      ok: true,
    },
    { label: 'a Float32Array on a SharedArrayBuffer', value: shared(base), ok: true },
    { label: 'a Float64Array on a SharedArrayBuffer', value: shared(base, Float64Array), ok: true },
  ];
}

/** Observation weights: a numeric array of n entries, none negative, not all zero. */
function weightCases(base) {
  return [
    ...numericArrayCases(base, { cols: 1 })
      .filter((c) => c.label !== 'undefined')
      .map((c) => (c.ok ? { ...c, same: () => [...base] } : c)),
    { label: 'a negative weight', value: at(base, 2, -1), code: 'BadArgument' },
    { label: 'all weights zero', value: base.map(() => 0), code: 'BadArgument' },
    { label: 'all weights −0', value: Float64Array.from(base, () => -0), code: 'BadArgument' },
  ];
}

function positiveIntegerCases() {
  return [
    ...wrongTypes(['number']),
    ...[0, -0, -1, -2, 1.5, NaN, Infinity, -Infinity].map((value) => ({
      label: describe(value),
      value,
      code: 'BadArgument',
    })),
    { label: "'2'", value: '2', code: 'BadArgument' },
    { label: '[2]', value: [2], code: 'BadArgument' },
    { label: 'new Number(2)', value: new Number(2), code: 'BadArgument' },
  ];
}

/** A number strictly between lo and hi. */
function rangeCases(lo, hi) {
  return [
    ...wrongTypes(['number']),
    ...[lo, hi, lo - 1, hi + 1, NaN, Infinity, -Infinity, ...(lo === 0 ? [-0] : [])].map((value) => ({
      label: describe(value),
      value,
      code: 'BadArgument',
    })),
    { label: `'${(lo + hi) / 2}'`, value: String((lo + hi) / 2), code: 'BadArgument' },
    { label: `[${(lo + hi) / 2}]`, value: [(lo + hi) / 2], code: 'BadArgument' },
  ];
}

/** A number other than `bad` (and of no other type). */
function numberCases(bad) {
  return [
    ...wrongTypes(['number']),
    ...bad.map((value) => ({ label: describe(value), value, code: 'BadArgument' })),
    { label: "'0.5'", value: '0.5', code: 'BadArgument' },
    { label: '[0.5]', value: [0.5], code: 'BadArgument' },
  ];
}

/** Blocked CV's radius: a finite number >= 0. */
const excludeCases = () => numberCases([-1, NaN, Infinity, -Infinity]);

/** predictInterval's variance: 'global' or 'local' (the valid call keeps the global band: no second search). */
const VARIANCE = { cases: () => enumCases(['global', 'local']), valid: () => 'global', values: ['global'] };

/** kernelRegression's robust: true, false or { iterations } (a positive integer). */
const robustCases = () => [
  ...[null, 'abc', 7, 0, 1, 'true', [true], () => 2, Symbol('bad'), 2n].map((value) => ({
    label: describe(value),
    value,
    code: 'BadArgument',
  })),
  { label: '{ iterations: 0 }', value: { iterations: 0 }, code: 'BadArgument', argument: 'options.robust.iterations' },
  {
    label: '{ iterations: 1.5 }',
    value: { iterations: 1.5 },
    code: 'BadArgument',
    argument: 'options.robust.iterations',
  },
  { label: '{ iter: 2 }', value: { iter: 2 }, code: 'BadArgument', argument: 'options.robust.iter' },
  { label: '{ iterations: 2 }', value: { iterations: 2 }, ok: 'runs' },
  { label: 'false', value: false, ok: 'runs' },
];

/** Any finite number within float32 range. */
function finiteNumberCases() {
  return [
    ...wrongTypes(['number']),
    ...[NaN, Infinity, -Infinity, 1e39, -1e39].map((value) => ({ label: describe(value), value, code: 'BadArgument' })),
    { label: "'0.5'", value: '0.5', code: 'BadArgument' },
    { label: '[0.5]', value: [0.5], code: 'BadArgument' },
  ];
}

function booleanCases() {
  return [
    ...wrongTypes(['boolean']),
    ...[1, 0, NaN, 'true', 'false', [true]].map((value) => ({ label: describe(value), value, code: 'BadArgument' })),
    { label: 'new Boolean(true)', value: new Boolean(true), code: 'BadArgument' },
  ];
}

/** One of `values`; `refused` are values of the type that this function refuses (another function's choices). */
function enumCases(values, refused = []) {
  return [
    ...wrongTypes(['string']),
    ...['nope', values[0].toUpperCase(), '', ` ${values[0]}`, `${values[0]} `, 0, NaN, [values[0]], ...refused].map(
      (value) => ({ label: describe(value), value, code: 'BadArgument' }),
    ),
    { label: `new String('${values[0]}')`, value: new String(values[0]), code: 'BadArgument' },
  ];
}

/** A bandwidth: one positive number, or `dim` of them; `rules` when a rule name is also accepted. */
function bandwidthCases(dim, { rules = [] } = {}) {
  const list = Array.from({ length: dim }, (_, d) => 0.4 + d / 10);
  return [
    ...[0, -0, -1, NaN, Infinity, -Infinity, 1e-50, 1e39].map((value) => ({
      label: describe(value),
      value,
      code: 'BadBandwidth',
    })),
    ...wrongTypes(['number', ...(rules.length ? [] : ['string'])]),
    ...(rules.length ? ['CV', 'cv_ls', '1', ''] : ['scott', '1']).map((value) => ({
      label: describe(value),
      value,
      code: 'BadArgument',
    })),
    ...[0, NaN, -1, Infinity, '1', undefined].map((x) => ({
      label: `[…, ${describe(x)}]`,
      value: at(list, dim - 1, x),
      code: 'BadBandwidth',
    })),
    { label: 'a hole', value: withHole(list, dim - 1), code: 'BadBandwidth' },
    { label: 'nested arrays', value: list.map((h) => [h]), code: 'BadBandwidth' },
    { label: 'one entry short', value: list.slice(0, -1), code: 'BadShape' },
    { label: 'one entry long', value: [...list, 0.5], code: 'BadShape' },
    { label: 'empty', value: [], code: 'BadShape' },
    { label: 'a detached Float32Array', value: detached(Float32Array, dim), code: 'BadShape' },
    { label: 'a DataView', value: new DataView(new ArrayBuffer(8)), code: 'BadArgument' },
    { label: 'an ArrayBuffer', value: new ArrayBuffer(8), code: 'BadArgument' },
    { label: 'a Float32Array', value: Float32Array.from(list), ok: true },
    {
      label: 'a Float64Array view at a byte offset into a NaN-filled buffer',
      value: offsetView(list, Float64Array),
      ok: true,
    },
    { label: 'a Float32Array view at a byte offset into a NaN-filled buffer', value: offsetView(list), ok: true },
    { label: 'a Float32Array on a SharedArrayBuffer', value: shared(list), ok: true },
  ].map((c) => (c.ok ? { ...c, same: () => [...list] } : c));
}

/** A mask for I queries and J keys: 'loo' (needs I = J), a Uint8Array of length J or I·J. */
function maskCases(I, J) {
  return [
    ...wrongTypes(),
    ...['LOO', 'causal', ''].map((value) => ({ label: describe(value), value, code: 'BadArgument' })),
    ...(I !== J ? [{ label: "'loo' with I ≠ J", value: 'loo', code: 'BadShape' }] : []),
    { label: 'a plain array of J', value: new Array(J).fill(0), code: 'BadArgument' },
    ...[Int8Array, Uint8ClampedArray, Uint16Array, Float32Array].map((Type) => ({
      label: `a ${Type.name} of J`,
      value: new Type(J),
      code: 'BadArgument',
    })),
    { label: 'a DataView', value: new DataView(new ArrayBuffer(J)), code: 'BadArgument' },
    ...[J - 1, J + 1, 0, I * J - 1, I * J + 1].map((n) => ({
      label: `a Uint8Array of ${n}`,
      value: new Uint8Array(n),
      code: 'BadShape',
    })),
    { label: 'a detached Uint8Array', value: detached(Uint8Array, J), code: 'BadShape' },
    {
      label: 'a Uint8Array of 4096 claiming length J',
      value: lying(Uint8Array, new Uint8Array(4096), J),
      code: 'BadArgument',
    },
    { label: 'a Proxy of a Uint8Array of J', value: new Proxy(new Uint8Array(J), {}), code: 'BadArgument' },
    { label: 'key padding at a byte offset into a buffer of 1s', value: offsetView([0, 1], Uint8Array, 1), ok: true },
    { label: 'key padding on a SharedArrayBuffer', value: shared([0, 1], Uint8Array), ok: true },
  ].map((c) => (c.ok ? { ...c, same: () => Uint8Array.of(0, 1) } : c));
}

/** Group ids { queries (I), keys (J) }, each an Int32Array or array of 32-bit integers. */
function groupsCases(I, J) {
  const base = { queries: [0, 0, 1], keys: [0, 1] };
  const sub = (which, value, code, label) => ({
    label: `${which} ${label ?? describe(value)}`,
    value: { ...base, [which]: value },
    code,
    argument: `options.groups.${which}`,
  });
  return [
    ...wrongTypes().map((c) => (c.label === 'an empty object' ? { ...c, argument: 'options.groups.queries' } : c)),
    { label: 'an array', value: [0, 0, 1], code: 'BadArgument' },
    { label: 'an Int32Array', value: new Int32Array(I), code: 'BadArgument' },
    {
      label: 'an unknown key (query)',
      value: { ...base, query: [0] },
      code: 'BadArgument',
      argument: 'options.groups.query',
    },
    ...['queries', 'keys'].flatMap((which) => {
      const ids = base[which];
      return [
        {
          label: `${which} missing`,
          value: { ...base, [which]: undefined },
          code: 'BadArgument',
          argument: `options.groups.${which}`,
        },
        ...[null, 'abc', 7, {}, Symbol('g'), 1n].map((v) => sub(which, v, 'BadArgument')),
        ...[1.5, '0', NaN, Infinity, 2 ** 31, -(2 ** 31) - 1, null, 1n].map((x) =>
          sub(which, at(ids, 1, x), 'BadArgument', `with an id ${describe(x)}`),
        ),
        sub(which, withHole(ids), 'BadArgument', 'with a hole'),
        sub(which, BigInt64Array.from(ids, BigInt), 'BadArgument', 'a BigInt64Array'),
        sub(which, ids.slice(0, -1), 'BadShape', 'one short'),
        sub(which, [...ids, 0], 'BadShape', 'one long'),
        sub(which, [], 'BadShape', 'empty'),
        sub(which, detached(Int32Array, ids.length), 'BadShape', 'a detached Int32Array'),
        sub(which, new DataView(new ArrayBuffer(ids.length * 4)), 'BadShape', 'a DataView'),
      ];
    }),
    {
      label: 'Int32Arrays at a byte offset',
      value: { queries: offsetView(base.queries, Int32Array, 7), keys: offsetView(base.keys, Int32Array, 7) },
      ok: true,
    },
    {
      label: 'Int32Arrays on a SharedArrayBuffer',
      value: { queries: shared(base.queries, Int32Array), keys: shared(base.keys, Int32Array) },
      ok: true,
    },
    {
      label: 'Proxies whose length grows after the first read',
      value: { queries: growing(base.queries), keys: growing(base.keys) },
      ok: true,
    },
    {
      label: 'Float64Arrays of integers',
      value: { queries: Float64Array.from(base.queries), keys: Float64Array.from(base.keys) },
      ok: true,
    },
  ].map((c) => (c.ok ? { ...c, same: () => structuredClone(base) } : c));
}

/** A state from attentionState() (`base`, copied per case). */
function stateCases(base) {
  const s = () => cloneState(base);
  const n = base.max.length;
  return [
    { label: 'undefined', value: undefined, code: 'BadArgument' },
    ...wrongTypes(),
    { label: 'an array', value: [], code: 'BadArgument' },
    { label: 'a Float32Array', value: new Float32Array(3), code: 'BadArgument' },
    ...['queries', 'heads', 'width', 'max', 'sum', 'acc'].map((field) => ({
      label: `without ${field}`,
      value: { ...s(), [field]: undefined },
      code: 'BadArgument',
    })),
    ...['queries', 'heads', 'width'].flatMap((field) =>
      [-1, 1.5, NaN, Infinity, '1', null, 1n, base[field] + 1].map((x) => ({
        label: `${field} ${describe(x)}`,
        value: { ...s(), [field]: x },
        code: 'BadArgument',
      })),
    ),
    { label: 'heads 0', value: { ...s(), heads: 0 }, code: 'BadArgument' },
    ...['max', 'sum', 'acc'].flatMap((field) => [
      {
        label: `${field} a Float64Array`,
        value: { ...s(), [field]: Float64Array.from(base[field]) },
        code: 'BadArgument',
      },
      { label: `${field} a plain array`, value: { ...s(), [field]: Array.from(base[field]) }, code: 'BadArgument' },
      { label: `${field} one short`, value: { ...s(), [field]: base[field].slice(0, -1) }, code: 'BadArgument' },
      {
        label: `${field} one long`,
        value: { ...s(), [field]: Float32Array.from([...base[field], 1]) },
        code: 'BadArgument',
      },
      {
        label: `${field} detached`,
        value: { ...s(), [field]: detached(Float32Array, base[field].length) },
        code: 'BadArgument',
      },
      {
        label: `${field} at a byte offset into a NaN-filled buffer`,
        value: { ...s(), [field]: offsetView(base[field]) },
        ok: true,
      },
      { label: `${field} on a SharedArrayBuffer`, value: { ...s(), [field]: shared(base[field]) }, ok: true },
    ]),
    {
      label: 'NaN in max',
      value: { ...s(), max: Float32Array.from(at(Array.from(base.max), n - 1, NaN)) },
      code: 'NonFinite',
    },
    ...[NaN, Infinity, -1].map((x) => ({
      label: `${describe(x)} in sum`,
      value: { ...s(), sum: Float32Array.from(at(Array.from(base.sum), n - 1, x)) },
      code: x === -1 ? 'BadArgument' : 'NonFinite',
    })),
    { label: 'a structured clone (as after postMessage)', value: structuredClone(base), ok: true },
    // acc may legitimately hold ±Infinity or NaN when Σ w·v overflows float32 (attention() then gives the same): accepted.
    {
      label: 'NaN in acc (float32 overflow of Σ w·v): accepted',
      value: { ...s(), acc: Float32Array.from(base.acc, (x, i) => (i ? x : NaN)) },
      ok: 'runs',
    },
  ];
}

function describe(value) {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'symbol') return 'a symbol';
  if (Object.is(value, -0)) return '-0';
  if (Array.isArray(value)) return `[${value.map(describe).join(', ')}]`;
  if (value === undefined) return 'undefined';
  return String(value);
}

// ---------------------------------------------------------------------------------------------------------------
// The table: every public function. `valid()` builds a fresh valid call's arguments; `call(args)` runs it;
// `result(value)` turns its result into what is compared (models are read and disposed). `arrays`: numeric-array
// arguments ({ cols, empty }); `states`: state arguments; `optionsName`: the options argument (absent: none),
// `optionsRequired`; `options`: name → { cases(), valid(), values? (every accepted choice), context? (other
// options it needs), required? }. `extra()`: cases specific to the function ({ label, args, code, argument }).

const attentionOptions = ({ empty = true, I = 3, J = 2 } = {}) => ({
  dim: { required: true, cases: positiveIntegerCases, valid: () => 2, sizeOf: ['queries', 'keys'] },
  kernel: { cases: () => enumCases(KERNELS), valid: () => 'gaussian', values: KERNELS },
  scale: { cases: finiteNumberCases, valid: () => -0 },
  bandwidth: { cases: () => bandwidthCases(2), valid: () => [0.4, 0.5], context: { kernel: 'gaussian' } },
  mask: { cases: () => maskCases(I, J), valid: () => Uint8Array.of(0, 1) },
  causal: { cases: booleanCases, valid: () => true, values: [true, false] },
  groups: { cases: () => groupsCases(I, J), valid: () => ({ queries: [0, 0, 1], keys: [0, 1] }) },
  heads: {
    cases: () => [...positiveIntegerCases(), { label: '3 (does not divide dim)', value: 3, code: 'BadArgument' }],
    valid: () => 2,
  },
  ...(empty ? { empty: { cases: () => enumCases(EMPTY), valid: () => 'zero', values: EMPTY } } : {}),
});

/** An integer from 1 to `most` (features, landmarks, topK). */
function countCases(most) {
  return [
    ...positiveIntegerCases(),
    { label: `${most + 1} (beyond the core's limit)`, value: most + 1, code: 'BadArgument' },
  ];
}

/** An integer seed from 0 to 2³² − 1. */
function seedCases() {
  return [
    ...wrongTypes(['number']),
    ...[-1, 1.5, 2 ** 32, NaN, Infinity, -Infinity].map((value) => ({
      label: describe(value),
      value,
      code: 'BadArgument',
    })),
    { label: "'3'", value: '3', code: 'BadArgument' },
    { label: '-0 (is 0)', value: -0, ok: true, same: () => 0 },
  ];
}

const APPROXIMATIONS = ['random-features', 'nystrom'];
// 'auto' runs exact on the valid call (softmax); 'sparse' refuses softmax and 'top-k' needs topK (approximationCases).
const METHODS = ['exact', ...APPROXIMATIONS, 'auto'];
// The options of attention() and attentionWithInfo() beyond attentionOptions(); options that apply to one method are
// refused with another (named), and the approximations refuse masks and groups (only causal) and some kernels.
const methodOptions = () => ({
  method: { cases: () => enumCases(METHODS, ['grid', 'topk']), valid: () => 'nystrom', values: METHODS },
  tolerance: { cases: () => rangeCases(0, 1), valid: () => 0.05, context: { method: 'nystrom' } },
  seed: { cases: seedCases, valid: () => 3, context: { method: 'random-features' } },
  features: { cases: () => countCases(8192), valid: () => 16, context: { method: 'random-features' } },
  landmarks: { cases: () => countCases(1024), valid: () => 2, context: { method: 'nystrom' } },
  sampling: {
    cases: () => enumCases(['kmeans++', 'uniform']),
    valid: () => 'uniform',
    values: ['kmeans++', 'uniform'],
    context: { method: 'nystrom' },
  },
  topK: { required: true, cases: () => countCases(2 ** 31 - 1), valid: () => 2, context: { method: 'top-k' } }, // required by 'top-k'
});

const regressionOptions = () => ({
  dim: { required: true, cases: positiveIntegerCases, valid: () => 2, sizeOf: ['x'] },
  kernel: {
    cases: () => enumCases(DISTANCE_KERNELS, ['softmax']),
    valid: () => 'epanechnikov',
    values: DISTANCE_KERNELS,
  },
  estimator: { cases: () => enumCases(ESTIMATORS, ['lc', 'll']), valid: () => 'local-linear', values: ESTIMATORS },
  weights: { cases: () => weightCases([1, 2, 1, 1, 0.5]), valid: () => [1, 2, 1, 1, 0.5] },
  method: {
    cases: () => enumCases(['auto', 'exact', 'grid'], ['fast']),
    valid: () => 'exact',
    values: ['auto', 'exact', 'grid'],
  },
  tolerance: { cases: () => rangeCases(0, 1), valid: () => 0.01 },
  // Mixed data (web/src/categories.js): X's second column holds non-integers, so it cannot be discrete.
  types: {
    cases: () => [
      ...wrongTypes(),
      { label: 'one type for two columns', value: ['continuous'], code: 'BadShape' },
      { label: "an unknown type ('nominal')", value: ['continuous', 'nominal'], code: 'BadArgument' },
      {
        label: 'a discrete column of non-integers',
        value: ['continuous', 'ordered'],
        code: 'BadArgument',
        argument: 'x',
      },
      { label: 'every column continuous', value: ['continuous', 'continuous'], ok: true },
    ],
    valid: () => ['continuous', 'continuous'],
  },
  orderedKernel: {
    cases: () => enumCases(['wang-van-ryzin', 'li-racine'], ['liracine', 'wangryzin']),
    valid: () => 'li-racine',
    values: ['wang-van-ryzin', 'li-racine'],
  },
});
// selectBandwidth's and cvScore's `method` before 0.2.0 (deprecated, still read).
const deprecatedApproximation = () => ({
  approximation: {
    cases: () => enumCases(['auto', 'exact', 'grid'], ['fast']),
    valid: () => 'exact',
    values: ['auto', 'exact', 'grid'],
  },
});

/** Combinations an approximation refuses: other masks, groups, kernels it cannot approximate, the wrong method's count. */
// The async siblings' `signal` (an AbortSignal, duck-typed) and `onProgress` (a function).
const controlOptions = () => ({
  signal: {
    cases: () => [
      ...wrongTypes(['object']),
      ...[
        ['null', null],
        ['an empty object', {}],
        ['{ aborted: false } (no addEventListener)', { aborted: false }],
      ].map(([label, value]) => ({ label, value, code: 'BadArgument' })),
    ],
    valid: () => new AbortController().signal,
  },
  onProgress: { cases: () => wrongTypes(['function']), valid: () => () => {} },
});

// attentionPooling()'s own options: a positive number (learningRate, epsilon), Adam's betas, the projections.
function positiveNumberCases() {
  return [
    ...wrongTypes(['number']),
    ...[0, -0, -1, NaN, Infinity, -Infinity].map((value) => ({ label: describe(value), value, code: 'BadArgument' })),
    { label: "'0.1'", value: '0.1', code: 'BadArgument' },
    { label: '[0.1]', value: [0.1], code: 'BadArgument' },
    { label: 'new Number(0.1)', value: new Number(0.1), code: 'BadArgument' },
  ];
}

function betasCases() {
  return [
    ...wrongTypes(['object']),
    { label: 'null', value: null, code: 'BadArgument' },
    { label: 'an empty object', value: {}, code: 'BadArgument' },
    ...[[0.9], [0.5, 0.9, 0.99], []].map((value) => ({ label: describe(value), value, code: 'BadShape' })),
    ...[
      [1, 0.9],
      [0.5, 1],
      [-0.1, 0.9],
      [NaN, 0.9],
      [0.5, Infinity],
      ['0.5', 0.9],
      [0.5, undefined],
      [[0.5], 0.9],
    ].map((value) => ({ label: describe(value), value, code: 'BadArgument' })),
    { label: 'a hole', value: withHole([0.5, 0.9], 0), code: 'BadArgument' },
    { label: 'a DataView', value: new DataView(new ArrayBuffer(16)), code: 'BadArgument' },
    { label: 'a BigInt64Array', value: BigInt64Array.of(1n, 2n), code: 'BadArgument' },
    { label: 'a Float64Array', value: Float64Array.of(0.5, 0.9), ok: true },
    {
      label: 'a Float64Array view at a byte offset into a NaN-filled buffer',
      value: offsetView([0.5, 0.9], Float64Array),
      ok: true,
    },
    { label: 'a Float32Array (0.9 rounded to float32)', value: Float32Array.of(0.5, 0.9), ok: 'runs' },
  ];
}

function projectionCases() {
  const rank = (c) => ({
    ...c,
    label: `rank ${c.label}`,
    value: { rank: c.value },
    argument: 'options.projections.rank',
  });
  const seed = (c) => ({
    ...c,
    label: `seed ${c.label}`,
    value: { rank: 2, seed: c.value },
    argument: 'options.projections.seed',
  });
  return [
    ...wrongTypes(['object']),
    { label: 'null', value: null, code: 'BadArgument' },
    { label: 'an array', value: [2], code: 'BadArgument' },
    { label: '{} (no rank)', value: {}, code: 'BadArgument', argument: 'options.projections.rank' },
    {
      label: 'an unknown key (ranks)',
      value: { ranks: 2 },
      code: 'BadArgument',
      argument: 'options.projections.ranks',
    },
    ...positiveIntegerCases().map(rank),
    rank({ label: '2²⁴ (Wq and Wk of dim·rank = 2²⁵ entries)', value: 2 ** 24, code: 'BadArgument' }),
    ...seedCases().map((c) => (c.ok ? { ...seed(c), same: () => ({ rank: 2, seed: 0 }) } : seed(c))),
    ...booleanCases().map((c) => ({
      ...c,
      label: `shared ${c.label}`,
      value: { rank: 2, shared: c.value },
      argument: 'options.projections.shared',
    })),
    { label: 'shared (one W, a learned metric)', value: { rank: 2, shared: true }, ok: 'runs' },
  ];
}

/**
 * forward() and backward() of a pooling made fresh per case: the standard refusals of each array and of forward()'s
 * options (only refusals: an accepted case's result would be read as a pooling; pooling.test.mjs has the rest).
 */
function poolingCallCases() {
  const pooled = (run) => (a) => {
    const pooling = ka.attentionPooling({ dim: 2, projections: { rank: 2 } });
    try {
      return run(pooling, a);
    } finally {
      pooling.dispose();
    }
  };
  const forward = pooled((p, a) => p.forward(a.queries, a.keys, a.values, a.options));
  const backward = pooled((p, a) => {
    p.forward(Q, K, V);
    return p.backward(a.dOut);
  });
  const valid = () => ({ queries: [...Q], keys: [...K], values: [...V], options: undefined });
  const refusals = (base, spec) => numericArrayCases(base, spec).filter((c) => !c.ok);
  return [
    ...['queries', 'keys', 'values'].flatMap((arg) =>
      refusals(valid()[arg], { cols: 2, empty: arg === 'queries' ? 'ok' : 'BadShape' }).map((c) => ({
        label: `forward ${arg}: ${c.label}`,
        args: { ...valid(), [arg]: c.value },
        call: forward,
        code: c.code,
        argument: arg,
      })),
    ),
    ...refusals([...DOUT], { cols: 2 }).map((c) => ({
      label: `backward dOut: ${c.label}`,
      args: { dOut: c.value },
      call: backward,
      code: c.code,
      argument: 'dOut',
    })),
    ...[
      ['a factory option (bandwidth)', { bandwidth: 1 }, 'options.bandwidth'],
      ['null', null, 'options'],
      ["'loo'", 'loo', 'options'],
      ['mask LOO', { mask: 'LOO' }, 'options.mask'],
      ['causal 1', { causal: 1 }, 'options.causal'],
      ["empty 'skip'", { empty: 'skip' }, 'options.empty'],
    ].map(([label, options, argument]) => ({
      label: `forward options: ${label}`,
      args: { ...valid(), options },
      call: forward,
      code: 'BadArgument',
      argument,
    })),
    {
      label: 'backward before any forward',
      args: { dOut: [...DOUT] },
      call: pooled((p, a) => p.backward(a.dOut)),
      code: 'BadArgument',
      argument: 'pooling',
    },
  ];
}

function approximationCases(call) {
  const args = (options) => ({ queries: [...Q], keys: [...K], values: [...V], options: { dim: 2, ...options } });
  return [
    ...APPROXIMATIONS.flatMap((method) => [
      {
        label: `${method} with a key-padding mask`,
        args: args({ method, mask: Uint8Array.of(0, 1) }),
        code: 'BadArgument',
        argument: 'options.mask',
      },
      {
        label: `${method} with groups`,
        args: args({ method, groups: { queries: [0, 0, 1], keys: [0, 1] } }),
        code: 'BadArgument',
        argument: 'options.groups',
      },
      {
        label: `${method} with kernel 'uniform'`,
        args: args({ method, kernel: 'uniform' }),
        code: 'BadArgument',
        argument: 'options.method',
      },
    ]),
    {
      label: "random-features with kernel 'laplacian'",
      args: args({ method: 'random-features', kernel: 'laplacian', bandwidth: 0.5 }),
      ok: 'runs',
    },
    {
      label: "random-features with kernel 'epanechnikov'",
      args: args({ method: 'random-features', kernel: 'epanechnikov' }),
      code: 'BadArgument',
      argument: 'options.method',
    },
    {
      label: "features with method 'nystrom'",
      args: args({ method: 'nystrom', features: 8 }),
      code: 'BadArgument',
      argument: 'options.features',
    },
    {
      label: "landmarks with method 'random-features'",
      args: args({ method: 'random-features', landmarks: 2 }),
      code: 'BadArgument',
      argument: 'options.landmarks',
    },
    {
      label: "sampling with method 'exact'",
      args: args({ sampling: 'uniform' }),
      code: 'BadArgument',
      argument: 'options.sampling',
    },
    // 'sparse' (its kernels are the distance kernels, so the valid call's softmax is refused): what it serves and refuses.
    ...DISTANCE_KERNELS.map((kernel) => ({
      label: `sparse with kernel '${kernel}'`,
      args: args({ method: 'sparse', kernel, bandwidth: 0.5, tolerance: 0.01 }),
      ok: 'runs',
    })),
    {
      label: 'sparse with causal and a key-padding mask',
      args: args({ method: 'sparse', kernel: 'gaussian', bandwidth: 0.5, causal: true, mask: Uint8Array.of(0, 1) }),
      ok: 'runs',
    },
    {
      label: "sparse with kernel 'softmax'",
      args: args({ method: 'sparse' }),
      code: 'BadArgument',
      argument: 'options.method',
    },
    {
      label: 'sparse with dim 4',
      args: {
        queries: [1, 2, 3, 4],
        keys: [1, 2, 3, 4],
        values: [1],
        options: { dim: 4, method: 'sparse', kernel: 'gaussian', bandwidth: 1 },
      },
      code: 'BadArgument',
      argument: 'options.dim',
    },
    {
      label: 'sparse with a general mask',
      args: args({ method: 'sparse', kernel: 'gaussian', bandwidth: 0.5, mask: new Uint8Array(6) }),
      code: 'BadArgument',
      argument: 'options.mask',
    },
    {
      label: 'sparse with groups',
      args: args({
        method: 'sparse',
        kernel: 'gaussian',
        bandwidth: 0.5,
        groups: { queries: [0, 0, 1], keys: [0, 1] },
      }),
      code: 'BadArgument',
      argument: 'options.groups',
    },
    {
      label: 'sparse with tolerance 1',
      args: args({ method: 'sparse', kernel: 'gaussian', bandwidth: 0.5, tolerance: 1 }),
      code: 'BadArgument',
      argument: 'options.tolerance',
    },
    // 'top-k': every kernel, mask and groups; topK required there and refused elsewhere.
    ...['softmax', ...DISTANCE_KERNELS].map((kernel) => ({
      label: `top-k with kernel '${kernel}'`,
      args: args({ method: 'top-k', topK: 1, kernel, ...(kernel === 'softmax' ? {} : { bandwidth: 0.5 }) }),
      ok: 'runs',
    })),
    {
      label: 'top-k with a general mask and groups',
      args: args({ method: 'top-k', topK: 1, mask: new Uint8Array(6), groups: { queries: [0, 0, 1], keys: [0, 1] } }),
      ok: 'runs',
    },
    {
      label: "method 'top-k' without topK",
      args: args({ method: 'top-k' }),
      code: 'BadArgument',
      argument: 'options.topK',
    },
    {
      label: "topK with method 'nystrom'",
      args: args({ method: 'nystrom', topK: 2 }),
      code: 'BadArgument',
      argument: 'options.topK',
    },
  ].map((c) => ({ ...c, call }));
}

const TABLE = {
  attention: {
    valid: () => ({ queries: [...Q], keys: [...K], values: [...V], options: { dim: 2 } }),
    call: (a) => ka.attention(a.queries, a.keys, a.values, a.options),
    // The output's type follows the values' (Float32Array values give a Float32Array): compared as float64 numbers.
    result: (output) => Float64Array.from(output),
    arrays: { queries: { cols: 2, empty: 'ok' }, keys: { cols: 2 }, values: { cols: 2 } },
    optionsName: 'options',
    optionsRequired: true,
    options: { ...attentionOptions(), ...methodOptions() },
    extra: () => approximationCases((a) => ka.attention(a.queries, a.keys, a.values, a.options)),
  },
  attentionWithInfo: {
    valid: () => ({ queries: [...Q], keys: [...K], values: [...V], options: { dim: 2 } }),
    call: (a) => ka.attentionWithInfo(a.queries, a.keys, a.values, a.options),
    // The output's type follows the values' (Float32Array values give a Float32Array): compared as float64 numbers.
    result: (info) => ({ ...info, output: Float64Array.from(info.output) }),
    arrays: { queries: { cols: 2, empty: 'ok' }, keys: { cols: 2 }, values: { cols: 2 } },
    optionsName: 'options',
    optionsRequired: true,
    options: { ...attentionOptions(), ...methodOptions() },
    extra: () => approximationCases((a) => ka.attentionWithInfo(a.queries, a.keys, a.values, a.options)),
  },
  // queries are not in `arrays`: with no queries the output has no rows, and it is dOut (6 entries) that no longer
  // fits; their other cases are the standard ones (extra).
  attentionGradients: {
    valid: () => ({ queries: [...Q], keys: [...K], values: [...V], dOut: [...DOUT], options: { dim: 2 } }),
    call: (a) => ka.attentionGradients(a.queries, a.keys, a.values, a.dOut, a.options),
    arrays: { keys: { cols: 2 }, values: { cols: 2 }, dOut: { cols: 2 } },
    optionsName: 'options',
    optionsRequired: true,
    options: {
      ...attentionOptions(),
      kernel: {
        cases: () => enumCases(KERNELS.slice(0, -1), ['uniform']),
        valid: () => 'gaussian',
        values: KERNELS.slice(0, -1),
      },
    },
    extra: () => [
      ...numericArrayCases([...Q], { cols: 2, empty: 'BadShape' }).map((c) => ({
        ...c,
        label: `queries: ${c.label}`,
        args: { queries: c.value, keys: [...K], values: [...V], dOut: [...DOUT], options: { dim: 2 } },
        argument: ['empty', 'an empty Float32Array'].includes(c.label) ? 'dOut' : 'queries',
      })),
      {
        label: 'no queries and an empty dOut',
        args: { queries: [], keys: [...K], values: [...V], dOut: [], options: { dim: 2 } },
        ok: 'runs',
      },
      {
        label: 'dOut missing',
        args: { queries: [...Q], keys: [...K], values: [...V], dOut: undefined, options: { dim: 2 } },
        code: 'BadArgument',
        argument: 'dOut',
      },
    ],
  },
  // The factory's options; `result` trains one step on the valid data and reads everything back (forward() and
  // backward() get their refusals in `extra`).
  attentionPooling: {
    valid: () => ({ options: { dim: 2 } }),
    call: (a) => ka.attentionPooling(a.options),
    result: (pooling) => {
      const output = pooling.forward(Q, K, V);
      const inputs = pooling.backward(DOUT);
      const gradients = pooling.gradients;
      pooling.step();
      const read = { output, inputs, gradients, parameters: pooling.parameters };
      pooling.dispose();
      return read;
    },
    optionsName: 'options',
    optionsRequired: true,
    options: {
      dim: { required: true, cases: positiveIntegerCases, valid: () => 2 },
      kernel: {
        cases: () => enumCases(KERNELS.slice(0, -1), ['uniform']),
        valid: () => 'softmax',
        values: KERNELS.slice(0, -1),
      },
      scale: { cases: finiteNumberCases, valid: () => -0, context: { kernel: 'softmax' } },
      bandwidth: { cases: () => bandwidthCases(2), valid: () => [0.4, 0.5] },
      projections: { cases: projectionCases, valid: () => ({ rank: 3, seed: 1 }) },
      learningRate: { cases: positiveNumberCases, valid: () => 0.1 },
      betas: { cases: betasCases, valid: () => [0.5, 0.9] },
      epsilon: { cases: positiveNumberCases, valid: () => 1e-3 },
    },
    extra: poolingCallCases,
  },
  weights: {
    valid: () => ({ queries: [...Q], keys: [...K], options: { dim: 2 } }),
    call: (a) => ka.weights(a.queries, a.keys, a.options),
    arrays: { queries: { cols: 2, empty: 'ok' }, keys: { cols: 2 } },
    optionsName: 'options',
    optionsRequired: true,
    options: attentionOptions(),
    extra: () => [
      {
        label: 'I = J = 65,536: I·J = 2³² floats, beyond the wasm memory',
        args: { queries: new Float32Array(65536), keys: new Float32Array(65536), options: { dim: 1 } },
        code: 'OutOfMemory',
        argument: 'queries',
      },
    ],
  },
  attentionState: {
    valid: () => ({ queries: [...Q], keys: [...K], values: [...V], options: { dim: 2 } }),
    call: (a) => ka.attentionState(a.queries, a.keys, a.values, a.options),
    arrays: { queries: { cols: 2, empty: 'ok' }, keys: { cols: 2 }, values: { cols: 2 } },
    optionsName: 'options',
    optionsRequired: true,
    options: attentionOptions({ empty: false }),
    extra: () => [
      {
        label: 'I = D = 65,536 (one key): acc of I·D = 2³² floats, whose byte count wraps past 2³²',
        args: {
          queries: new Float32Array(65536),
          keys: new Float32Array(1),
          values: new Float32Array(65536),
          options: { dim: 1 },
        },
        code: 'OutOfMemory',
        argument: 'queries',
      },
    ],
  },
  mergeStates: {
    valid: () => ({ 'states[0]': cloneState(STATE_A), 'states[1]': cloneState(STATE_B) }),
    call: (a) => ka.mergeStates(a['states[0]'], a['states[1]']),
    states: { 'states[0]': STATE_A, 'states[1]': STATE_B },
    extra: () => [
      { label: 'no states', args: {}, call: () => ka.mergeStates(), code: 'BadArgument', argument: 'states' },
      {
        label: 'states of different queries',
        args: { a: cloneState(STATE_A), b: ka.attentionState(Q.slice(2), K, V, { dim: 2 }) },
        call: (a) => ka.mergeStates(a.a, a.b),
        code: 'BadShape',
        argument: 'states[1]',
      },
      {
        label: 'states of different heads',
        args: { a: cloneState(STATE_A), b: ka.attentionState(Q, K, V, { dim: 2, heads: 2 }) },
        call: (a) => ka.mergeStates(a.a, a.b),
        code: 'BadShape',
        argument: 'states[1]',
      },
      {
        label: 'a bad third state',
        args: { a: cloneState(STATE_A), b: cloneState(STATE_B) },
        call: (a) => ka.mergeStates(a.a, a.b, null),
        code: 'BadArgument',
        argument: 'states[2]',
      },
      { label: 'one state (a copy)', args: { a: cloneState(STATE_A) }, call: (a) => ka.mergeStates(a.a), ok: 'runs' },
    ],
  },
  finalizeState: {
    valid: () => ({ state: cloneState(STATE), options: undefined }),
    call: (a) => ka.finalizeState(a.state, a.options),
    states: { state: STATE },
    optionsName: 'options',
    optionsRequired: false,
    options: {
      empty: {
        cases: () => enumCases(['nan', 'zero', 'error'], ['nearest']),
        valid: () => 'zero',
        values: ['nan', 'zero', 'error'],
      },
    },
  },
  kernelRegression: {
    valid: () => ({ x: [...X], y: [...Y], options: { ...REGRESSION, bandwidth: [...REGRESSION.bandwidth] } }),
    call: (a) => ka.kernelRegression(a.x, a.y, a.options),
    result: (model) => {
      const { predict, predictInterval, dispose, ...fields } = model;
      const read = { ...fields, interval: predictInterval(XQ) };
      dispose();
      return read;
    },
    arrays: { x: { cols: 2 }, y: { cols: 1 } },
    optionsName: 'options',
    optionsRequired: true,
    options: (({ method, ...shared }) => ({
      ...shared,
      bandwidth: {
        cases: () => bandwidthCases(2, { rules: RULES }),
        valid: () => 'scott',
        values: RULES,
        context: { estimator: 'nadaraya-watson' }, // AICc on 5 points in 2-D needs the fewer degrees of freedom of NW
      },
      empty: { cases: () => enumCases(EMPTY), valid: () => 'zero', values: EMPTY },
      perDimension: { cases: booleanCases, valid: () => true, values: [true, false], context: { bandwidth: 'cv' } },
      method: { cases: () => enumCases(['auto', 'exact', 'grid'], RULES), valid: () => 'exact', values: method.values },
      exclude: { cases: excludeCases, valid: () => 0.1, context: { bandwidth: 'cv' } },
      robust: { cases: robustCases, valid: () => true },
    }))(regressionOptions()),
    extra: () => {
      const sparse = (options) => ({
        x: [...X],
        y: [...Y],
        options: { ...REGRESSION, bandwidth: [...REGRESSION.bandwidth], method: 'sparse', ...options },
      });
      const call = (a) => ka.kernelRegression(a.x, a.y, a.options); // the entry's result() predicts and disposes
      return [
        {
          label: "method 'sparse' with Nadaraya–Watson",
          args: sparse({ estimator: 'nadaraya-watson' }),
          call,
          ok: 'runs',
        },
        {
          label: "method 'sparse' with local-linear (the default)",
          args: sparse({}),
          call,
          code: 'BadArgument',
          argument: 'options.method',
        },
        {
          label: "method 'sparse' with weights",
          args: sparse({ estimator: 'nadaraya-watson', weights: [1, 1, 1, 1, 1] }),
          call,
          code: 'BadArgument',
          argument: 'options.weights',
        },
        {
          label: "method 'sparse' with tolerance 0",
          args: sparse({ estimator: 'nadaraya-watson', tolerance: 0 }),
          call,
          code: 'BadArgument',
          argument: 'options.tolerance',
        },
      ];
    },
  },
  selectBandwidth: {
    valid: () => ({ x: [...X], y: [...Y], options: { dim: 2, rule: 'scott' } }),
    call: (a) => ka.selectBandwidth(a.x, a.y, a.options),
    arrays: { x: { cols: 2 }, y: { cols: 1 } },
    optionsName: 'options',
    optionsRequired: true,
    options: {
      ...regressionOptions(),
      ...deprecatedApproximation(),
      rule: {
        cases: () => enumCases(RULES, ['AICc', 'aic', 'fixed', 'gradient']),
        valid: () => 'cv',
        values: [...RULES, 'cv-gradient'],
        context: { estimator: 'nadaraya-watson' }, // AICc on 5 points in 2-D needs the fewer degrees of freedom of NW
      },
      perDimension: { cases: booleanCases, valid: () => true, values: [true, false], context: { rule: 'cv' } },
      metric: {
        cases: () => enumCases(['diagonal', 'full'], ['ard', 'low-rank']),
        valid: () => 'full',
        values: ['diagonal', 'full'],
        context: { rule: 'cv-gradient', estimator: 'nadaraya-watson', kernel: 'gaussian' },
      },
      maxIterations: {
        cases: positiveIntegerCases,
        valid: () => 3,
        context: { rule: 'cv-gradient', estimator: 'nadaraya-watson', kernel: 'gaussian' },
      },
      exclude: { cases: excludeCases, valid: () => 0.1, context: { rule: 'cv' } },
    },
    // What rule 'cv-gradient' refuses, and its options with other rules: each names the option.
    extra: () => {
      const gradient = (options) => ({ x: [...X], y: [...Y], options: { dim: 2, rule: 'cv-gradient', ...options } });
      return [
        { label: "rule 'cv-gradient'", args: gradient({}), ok: 'runs' },
        {
          label: "rule 'cv-gradient' with local-linear",
          args: gradient({ estimator: 'local-linear' }),
          code: 'BadArgument',
          argument: 'options.estimator',
        },
        {
          label: "rule 'cv-gradient' with kernel 'uniform'",
          args: gradient({ kernel: 'uniform' }),
          code: 'BadArgument',
          argument: 'options.kernel',
        },
        {
          label: "rule 'cv-gradient' with weights",
          args: gradient({ weights: [1, 1, 1, 1, 1] }),
          code: 'BadArgument',
          argument: 'options.weights',
        },
        {
          label: "rule 'cv-gradient' with method 'grid'",
          args: gradient({ method: 'grid' }),
          code: 'BadArgument',
          argument: 'options.method',
        },
        {
          label: "metric 'full' with rule 'cv'",
          args: gradient({ rule: 'cv', metric: 'full' }),
          code: 'BadArgument',
          argument: 'options.metric',
        },
        {
          label: "maxIterations with rule 'scott'",
          args: gradient({ rule: 'scott', maxIterations: 5 }),
          code: 'BadArgument',
          argument: 'options.maxIterations',
        },
      ];
    },
  },
  cvScore: {
    valid: () => ({ x: [...X], y: [...Y], options: { ...REGRESSION, bandwidth: [...REGRESSION.bandwidth] } }),
    call: (a) => ka.cvScore(a.x, a.y, a.options),
    arrays: { x: { cols: 2 }, y: { cols: 1 } },
    optionsName: 'options',
    optionsRequired: true,
    options: {
      ...regressionOptions(),
      ...deprecatedApproximation(),
      bandwidth: { required: true, cases: () => bandwidthCases(2), valid: () => 0.3 },
      exclude: { cases: excludeCases, valid: () => 0.1 },
    },
  },
  // lowess(): x and y of one length (a mismatch may be reported on either); values exact in float32, so that a
  // Float32Array of them is the same call.
  lowess: {
    valid: () => ({ x: [0, 0.375, 0.125, 0.75, 0.5], y: [...Y], options: {} }),
    call: (a) => ka.lowess(a.x, a.y, a.options),
    arrays: { x: { cols: 1, shapeArgument: ['x', 'y'] }, y: { cols: 1 } },
    optionsName: 'options',
    options: {
      frac: { cases: () => numberCases([0, -0, -1, 1.5, NaN, Infinity, -Infinity]), valid: () => 1, values: [0.5, 1] },
      iterations: { cases: () => numberCases([-1, 1.5, NaN, Infinity, -Infinity]), valid: () => 0, values: [0, 2] },
      delta: { cases: () => numberCases([-1, NaN, Infinity, -Infinity]), valid: () => 0.25, values: [0, 0.25] },
    },
  },
  // loess(): x (n × dim) and y of n points, R's options (the valid call: 1-D, 8 points, values exact in float32);
  // the result is the model's fields and its band at LOESS_Q.
  loess: {
    valid: () => ({ x: [...LOESS_X], y: [...LOESS_Y], options: {} }),
    call: (a) => ka.loess(a.x, a.y, a.options),
    result: (model) => {
      const { predict, predictInterval, dispose, ...fields } = model;
      const read = { ...fields, interval: predictInterval(LOESS_Q), predicted: predict(LOESS_Q) };
      dispose();
      return read;
    },
    arrays: { x: { cols: 1, shapeArgument: ['x', 'y'] }, y: { cols: 1 } },
    optionsName: 'options',
    options: {
      dim: { cases: () => numberCases([0, -1, 1.5, 5, NaN, Infinity]), valid: () => 1, values: [1] },
      span: { cases: () => numberCases([0, -0, -1, NaN, Infinity, -Infinity]), valid: () => 0.9, values: [0.75, 1.5] },
      degree: { cases: () => numberCases([3, -1, 1.5, NaN]), valid: () => 1, values: [0, 1, 2] },
      family: { cases: () => enumCases(['gaussian', 'symmetric']), valid: () => 'symmetric', values: ['gaussian'] },
      surface: { cases: () => enumCases(['interpolate', 'direct']), valid: () => 'direct', values: ['interpolate'] },
      normalize: { cases: booleanCases, valid: () => false, values: [true, false] },
      iterations: { cases: () => numberCases([0, -1, 1.5, 1001, NaN, Infinity]), valid: () => 2, values: [1, 4] },
      cell: { cases: () => numberCases([0, -0, -1, NaN, Infinity]), valid: () => 0.5, values: [0.2, 1] },
      weights: { cases: () => weightCases([...LOESS_W]), valid: () => [...LOESS_W] },
      // 'none' gives no band, which `result` reads: it has its own case in `extra`
      statistics: { cases: () => enumCases(['approximate', 'exact', 'none']), valid: () => 'exact', values: ['exact'] },
      traceHat: { cases: () => enumCases(['exact', 'approximate']), valid: () => 'approximate', values: ['exact'] },
    },
    extra: () => {
      const args = (options, x = [...LOESS_X]) => ({ x, y: [...LOESS_Y], options });
      return [
        {
          label: 'span 0.3 (2 points per fit)',
          args: args({ span: 0.3 }),
          code: 'BadArgument',
          argument: 'options.span',
        },
        {
          label: 'six points at one x (zero-width neighbourhoods)',
          args: args({ span: 0.5 }, [0, 0, 0, 0, 0, 0, 0.5, 1]),
          code: 'BadArgument',
          argument: 'options.span',
        },
        {
          label: "a band of statistics 'none'",
          args: args({ statistics: 'none' }),
          code: 'BadArgument',
          argument: 'options.statistics',
          call: (a) => ka.loess(a.x, a.y, a.options).predictInterval(LOESS_Q),
        },
        {
          label: 'predictions of a disposed model',
          args: args({}),
          code: 'Disposed',
          argument: 'model',
          call: (a) => {
            const model = ka.loess(a.x, a.y, a.options);
            model.dispose();
            return model.predict(LOESS_Q);
          },
        },
      ];
    },
  },
  // plan('attention', …) reads attention()'s arguments (values aside); its 'regression' form is in `extra`.
  plan: {
    valid: () => ({ task: 'attention', queries: [...Q], keys: [...K], options: { dim: 2 } }),
    call: (a) => ka.plan(a.task, a.queries, a.keys, a.options),
    arrays: { queries: { cols: 2, empty: 'ok' }, keys: { cols: 2 } },
    optionsName: 'options',
    optionsRequired: true,
    options: { ...attentionOptions(), ...methodOptions() },
    extra: () => {
      const regression = (options) => ({ task: 'regression', options });
      const call = (a) => ka.plan(a.task, a.options);
      return [
        { label: "task 'smoothing'", args: { task: 'smoothing', options: {} }, code: 'BadArgument', argument: 'task' },
        { label: 'task undefined', args: { options: {} }, code: 'BadArgument', argument: 'task' },
        { label: 'regression without options', args: regression(undefined), code: 'BadArgument', argument: 'options' },
        { label: 'regression runs', args: regression({ n: 100, dim: 2 }), ok: 'runs' },
        { label: 'regression n 0', args: regression({ n: 0, dim: 1 }), code: 'BadArgument', argument: 'options.n' },
        { label: 'regression n 1.5', args: regression({ n: 1.5, dim: 1 }), code: 'BadArgument', argument: 'options.n' },
        { label: 'regression dim missing', args: regression({ n: 10 }), code: 'BadArgument', argument: 'options.dim' },
        {
          label: 'regression kernel softmax',
          args: regression({ n: 10, dim: 1, kernel: 'softmax' }),
          code: 'BadArgument',
          argument: 'options.kernel',
        },
        {
          label: "regression method 'grid' in 3-D",
          args: regression({ n: 10, dim: 3, method: 'grid' }),
          code: 'BadArgument',
          argument: 'options.method',
        },
        {
          label: "regression method 'cv'",
          args: regression({ n: 10, dim: 1, method: 'cv' }),
          code: 'BadArgument',
          argument: 'options.method',
        },
        {
          label: 'regression tolerance 0',
          args: regression({ n: 10, dim: 1, tolerance: 0 }),
          code: 'BadArgument',
          argument: 'options.tolerance',
        },
        {
          label: 'regression unknown option',
          args: regression({ n: 10, dim: 1, bandwidth: 1 }),
          code: 'BadArgument',
          argument: 'options.bandwidth',
        },
      ].map((c) => ({ ...c, call }));
    },
  },
  // The model's functions (all on MODEL, which must keep giving the same bytes).
  predict: {
    model: true,
    valid: () => ({ xq: [...XQ] }),
    call: (a) => MODEL.predict(a.xq),
    arrays: { xq: { cols: 2, empty: 'ok' } },
  },
  gradient: {
    model: true,
    valid: () => ({ xq: [...XQ] }),
    call: (a) => MODEL.gradient(a.xq),
    arrays: { xq: { cols: 2, empty: 'ok' } },
  },
  predictInterval: {
    model: true,
    valid: () => ({ xq: [...XQ], intervalOptions: undefined }),
    call: (a) => MODEL.predictInterval(a.xq, a.intervalOptions),
    arrays: { xq: { cols: 2, empty: 'ok' } },
    optionsName: 'intervalOptions',
    optionsRequired: false,
    options: { level: { cases: () => rangeCases(0, 1), valid: () => 0.5 }, variance: VARIANCE },
  },
  // The async siblings: their sync function's arguments, `signal` and `onProgress` added to its options object;
  // they must refuse, accept and compute exactly as it does (the bytes are compared with their own valid call).
  attentionAsync: {
    valid: () => ({ queries: [...Q], keys: [...K], values: [...V], options: { dim: 2 } }),
    call: (a) => ka.attentionAsync(a.queries, a.keys, a.values, a.options),
    // The output's type follows the values' (Float32Array values give a Float32Array): compared as float64 numbers.
    result: (output) => Float64Array.from(output),
    arrays: { queries: { cols: 2, empty: 'ok' }, keys: { cols: 2 }, values: { cols: 2 } },
    optionsName: 'options',
    optionsRequired: true,
    options: { ...attentionOptions(), ...methodOptions(), ...controlOptions() },
    extra: () => approximationCases((a) => ka.attentionAsync(a.queries, a.keys, a.values, a.options)),
  },
  predictAsync: {
    model: true,
    valid: () => ({ xq: [...XQ], options: undefined }),
    call: (a) => MODEL.predictAsync(a.xq, a.options),
    arrays: { xq: { cols: 2, empty: 'ok' } },
    optionsName: 'options',
    optionsRequired: false,
    options: controlOptions(),
  },
  predictIntervalAsync: {
    model: true,
    valid: () => ({ xq: [...XQ], intervalOptions: undefined }),
    call: (a) => MODEL.predictIntervalAsync(a.xq, a.intervalOptions),
    arrays: { xq: { cols: 2, empty: 'ok' } },
    optionsName: 'intervalOptions',
    optionsRequired: false,
    options: { level: { cases: () => rangeCases(0, 1), valid: () => 0.5 }, variance: VARIANCE, ...controlOptions() },
  },
  withBandwidth: {
    model: true,
    title:
      'each bad bandwidth is refused naming h; a valid one fits as kernelRegression at it; a disposed model refuses',
    special: () => {
      const bad = [
        [0, 'BadBandwidth'],
        [-1, 'BadBandwidth'],
        [NaN, 'BadBandwidth'],
        [Infinity, 'BadBandwidth'],
        [1e39, 'BadBandwidth'],
        [[0.4, 0], 'BadBandwidth'],
        [[0.4, '0.5'], 'BadBandwidth'],
        [[0.4], 'BadShape'],
        [[0.4, 0.5, 0.6], 'BadShape'],
        ['0.5', 'BadArgument'],
        [null, 'BadArgument'],
        [undefined, 'BadArgument'],
        [{ span: 0.5 }, 'BadArgument'],
      ];
      for (const [h, code] of bad) {
        assert.throws(
          () => MODEL.withBandwidth(h),
          (e) => e instanceof KernelAttentionError && e.code === code && e.argument === 'h',
          `withBandwidth(${String(h)})`,
        );
      }
      for (const h of [0.3, [0.3, 0.6], Float64Array.of(0.3, 0.6)]) {
        const next = MODEL.withBandwidth(h);
        const fresh = ka.kernelRegression(X, Y, { ...REGRESSION, bandwidth: h });
        assert.deepEqual(next.predictInterval(XQ), fresh.predictInterval(XQ));
        assert.equal(next.selection.rule, 'fixed');
        next.dispose();
        fresh.dispose();
      }
      const gone = ka.kernelRegression(X, Y, REGRESSION);
      gone.dispose();
      assert.throws(
        () => gone.withBandwidth(0.3),
        (e) => e instanceof KernelAttentionError && e.code === 'Disposed' && e.argument === 'model',
      );
    },
  },
  dispose: {
    model: true,
    // dispose() takes nothing and is idempotent; a disposed model refuses everything with Disposed naming `model`.
    special: async () => {
      const model = ka.kernelRegression(X, Y, REGRESSION);
      model.dispose();
      model.dispose('ignored', 1);
      for (const run of [
        () => model.predict(XQ),
        () => model.predictInterval(XQ),
        () => model.predict(null),
        () => model.predictInterval(null, { level: 0.9 }),
      ]) {
        assert.throws(run, (e) => e instanceof KernelAttentionError && e.code === 'Disposed' && e.argument === 'model');
      }
      for (const run of [() => model.predictAsync(XQ), () => model.predictIntervalAsync(null, { level: 0.9 })]) {
        await assert.rejects(
          run,
          (e) => e instanceof KernelAttentionError && e.code === 'Disposed' && e.argument === 'model',
        );
      }
    },
  },
};

// kernelRegressionAsync and selectBandwidthAsync: the sync entries with async calls and the control options (their
// extra cases call the sync functions, so they stay with those).
for (const [name, call] of [
  ['kernelRegressionAsync', (a) => ka.kernelRegressionAsync(a.x, a.y, a.options)],
  ['selectBandwidthAsync', (a) => ka.selectBandwidthAsync(a.x, a.y, a.options)],
]) {
  const { extra, ...sync } = TABLE[name.replace('Async', '')];
  TABLE[name] = { ...sync, call, options: { ...sync.options, ...controlOptions() } };
}

// Cases with a known bug elsewhere run as todo subtests, keyed `function: argument: case label` (none at present);
// NOT_RUN lists calls that would corrupt or hang the module if their guard were missing (none at present: the
// guards are tested below).
const TODO = {};
const PROXY_TODO = {};
const todoFor = (name, argument, label) =>
  TODO[`${name}: ${argument}: ${label}`] ??
  (label === 'a Proxy whose length grows after the first read' ? PROXY_TODO[argument] : undefined);
const NOT_RUN = {};

// ---------------------------------------------------------------------------------------------------------------
// Running a case.

function isDetached(buffer) {
  if (typeof buffer.detached === 'boolean') return buffer.detached;
  if (buffer.byteLength > 0 || buffer instanceof SharedArrayBuffer) return false;
  try {
    new Uint8Array(buffer);
    return false;
  } catch {
    return true;
  }
}

/** Everything about an input that a call could change: every byte of a typed array's whole buffer, every entry. */
function snapshot(value) {
  if (value === null || typeof value !== 'object') return { primitive: value };
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof SharedArrayBuffer) {
    const buffer = ArrayBuffer.isView(value) ? value.buffer : value;
    if (isDetached(buffer)) return { detached: value.constructor.name };
    const view = ArrayBuffer.isView(value) ? { offset: value.byteOffset, length: value.byteLength } : {};
    return { type: value.constructor.name, ...view, bytes: Buffer.from(new Uint8Array(buffer)).toString('hex') };
  }
  return {
    type: Object.prototype.toString.call(value),
    frozen: Object.isFrozen(value),
    entries: Reflect.ownKeys(value).map((key) => [key, snapshot(value[key])]),
  };
}

/** The bytes of a result, for comparing a call with the valid one: typed arrays byte for byte, numbers as float64. */
function bytesOf(value, out = []) {
  if (ArrayBuffer.isView(value))
    out.push(value.constructor.name, Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex'));
  else if (typeof value === 'number') out.push(Buffer.from(Float64Array.of(value).buffer).toString('hex'));
  else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value).sort()) {
      out.push(key);
      bytesOf(value[key], out);
    }
  } else out.push(String(value));
  return out;
}

const resultBytes = (entry, value) => bytesOf(entry.result ? entry.result(value) : value).join(' ');
// Every call is awaited: the async siblings (attentionAsync, …) return promises; a plain value awaits as itself.
const BASELINE = {};
for (const [name, e] of Object.entries(TABLE)) if (!e.special) BASELINE[name] = resultBytes(e, await e.call(e.valid()));

/**
 * Runs one case: `args` (every input of the call, snapshot before and after), `run` (the call), and the expectation:
 * `ok: true` (the bytes of `reference()`), `ok: 'runs'`, or a KernelAttentionError with `code` (when given; else any
 * documented code) naming `argument` (a name or a list of acceptable names). Then the function's valid call must
 * give the bytes it gave before.
 */
async function check(name, entry, { args, run, ok, code, argument, reference }) {
  const before = snapshot(args);
  let result;
  let error;
  try {
    armed = true;
    result = await run(args);
  } catch (e) {
    error = e;
  } finally {
    armed = false;
  }
  if (ok) {
    assert.equal(error, undefined, `expected to succeed, threw ${error}`);
    if (ok === true)
      assert.ok(
        resultBytes(entry, result) === (await reference()),
        'an accepted form gives other bytes than the plain valid call',
      );
    else if (entry.result) entry.result(result);
  } else {
    assert.ok(error !== undefined, 'did not throw');
    assert.ok(
      error instanceof KernelAttentionError,
      `not a KernelAttentionError: ${error?.constructor?.name}: ${error?.message ?? String(error)}`,
    );
    assert.ok(CODES.includes(error.code), `undocumented code ${error.code}: ${error.message}`);
    if (code) assert.equal(error.code, code, error.message);
    const names = [argument].flat();
    assert.ok(
      names.includes(error.argument),
      `argument ${error.argument}, expected ${names.join(' or ')}: ${error.message}`,
    );
    assert.ok(error.message.includes(error.argument), `the message does not name ${error.argument}: ${error.message}`);
  }
  assert.deepStrictEqual(snapshot(args), before, 'an input changed');
  assert.ok(
    resultBytes(entry, await entry.call(entry.valid())) === BASELINE[name],
    'the valid call afterwards gives other bytes',
  );
}

/** Every generated case of a function: [argumentLabel, case, args, run, argument, reference]. */
function generate(name, entry) {
  const out = [];
  const push = (group, c, args, argument, reference, run = entry.call) =>
    out.push({ group, c, args, argument: c.argument ?? argument, reference, run });
  const validBytes = () => BASELINE[name];
  for (const [arg, spec] of Object.entries(entry.arrays ?? {})) {
    const base = entry.valid()[arg];
    for (const c of numericArrayCases(base, spec)) push(arg, c, { ...entry.valid(), [arg]: c.value }, arg, validBytes);
  }
  for (const [arg, base] of Object.entries(entry.states ?? {})) {
    for (const c of stateCases(base)) push(arg, c, { ...entry.valid(), [arg]: c.value }, arg, validBytes);
  }
  if (entry.optionsName) {
    const where = entry.optionsName;
    const baseOptions = () => entry.valid()[where] ?? {};
    const withOptions = (options) => ({ ...entry.valid(), [where]: options });
    // the options object itself
    const bad = [
      ...wrongTypes(['object']),
      { label: 'null', value: null },
      { label: 'an array', value: [baseOptions()] },
      { label: 'a Float32Array', value: new Float32Array(2) },
      { label: 'a number', value: 2 },
    ];
    for (const c of bad) push(where, { ...c, code: 'BadArgument' }, withOptions(c.value), where, validBytes);
    if (entry.optionsRequired)
      push(where, { label: 'undefined', code: 'BadArgument' }, withOptions(undefined), where, validBytes);
    else {
      push(where, { label: 'undefined (all defaults)', ok: true }, withOptions(undefined), where, validBytes);
      push(where, { label: '{} (all defaults)', ok: true }, withOptions({}), where, validBytes);
    }
    // unknown names: typos of each option, and names an object has anyway
    const known = Object.keys(entry.options);
    const typos = new Set(
      known.flatMap((n) => [n.slice(0, -1), `${n}${n.at(-1)}`, n.toUpperCase(), `${n[0].toUpperCase()}${n.slice(1)}`]),
    );
    for (const typo of [...typos, 'constructor', 'toString', '__proto__', 'valueOf'].filter(
      (t) => !known.includes(t),
    )) {
      const options = { ...baseOptions() };
      Object.defineProperty(options, typo, { value: 1, enumerable: true, writable: true, configurable: true });
      push(
        where,
        { label: `unknown option ${typo}`, code: 'BadArgument' },
        withOptions(options),
        `${where}.${typo}`,
        validBytes,
      );
    }
    // each option: its generated values, in the context it needs
    for (const [option, spec] of Object.entries(entry.options)) {
      const context = { ...baseOptions(), ...spec.context };
      const reference = async () =>
        resultBytes(entry, await entry.call(withOptions({ ...context, [option]: spec.valid() })));
      const argument = `${where}.${option}`;
      if (spec.required) {
        const { [option]: _, ...without } = context;
        push(option, { label: 'missing', code: 'BadArgument' }, withOptions(without), argument, reference);
      } else {
        const defaults = async () => {
          const { [option]: _, ...without } = context;
          return resultBytes(entry, await entry.call(withOptions(without)));
        };
        push(
          option,
          { label: 'undefined (the default)', ok: true },
          withOptions({ ...context, [option]: undefined }),
          argument,
          defaults,
        );
      }
      for (const c of spec.cases()) {
        const same =
          c.same === undefined
            ? reference
            : async () => resultBytes(entry, await entry.call(withOptions({ ...context, [option]: c.same() })));
        push(option, c, withOptions({ ...context, [option]: c.value }), argument, same);
      }
      // sizes the arrays' lengths do not fit can only be seen as a shape mismatch of an array they size
      if (spec.sizeOf) {
        for (const size of [3, 2 ** 31, 2 ** 32 + 2]) {
          push(
            option,
            { label: `${size}, which the arrays' lengths do not fit`, code: 'BadShape' },
            withOptions({ ...context, [option]: size }),
            spec.sizeOf,
          );
        }
      }
    }
  }
  for (const c of entry.extra?.() ?? []) {
    push('extra', c, c.args, c.argument, validBytes, c.call ?? entry.call);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The tests.

const apiFunctions = Object.keys(ka).filter((key) => typeof ka[key] === 'function');
const modelFunctions = Object.keys(MODEL).filter((key) => typeof MODEL[key] === 'function');

test('every function of the API object and of a model has an entry in the table, and every entry is one of them', () => {
  for (const key of apiFunctions)
    assert.ok(
      key in TABLE && !TABLE[key].model,
      `init()'s result has ${key}(), which the bad-input matrix does not cover`,
    );
  for (const key of modelFunctions)
    assert.ok(key in TABLE && TABLE[key].model, `a model has ${key}(), which the bad-input matrix does not cover`);
  for (const key of Object.keys(TABLE)) {
    assert.ok(
      TABLE[key].model ? modelFunctions.includes(key) : apiFunctions.includes(key),
      `the table has ${key}, which is not a public function`,
    );
  }
});

for (const [name, entry] of Object.entries(TABLE)) {
  if (!entry.optionsName) continue;
  test(`${name}: the table's options are exactly the options it accepts, and each accepts its valid values`, async () => {
    const where = entry.optionsName;
    const args = entry.valid();
    args[where] = { ...args[where], zzProbe: 1 };
    await assert.rejects(
      async () => entry.call(args),
      (error) => {
        assert.ok(error instanceof KernelAttentionError, String(error));
        assert.equal(error.argument, `${where}.zzProbe`);
        const known = /known options: (.*)$/.exec(error.message)?.[1].split(', ');
        assert.deepEqual(
          known?.slice().sort(),
          Object.keys(entry.options).sort(),
          `${name} accepts ${known}; the table lists ${Object.keys(entry.options)}`,
        );
        return true;
      },
    );
    for (const [option, spec] of Object.entries(entry.options)) {
      for (const value of spec.values ?? [spec.valid()]) {
        const probe = entry.valid();
        probe[where] = { ...probe[where], ...spec.context, [option]: value };
        try {
          const result = await entry.call(probe);
          if (entry.result) entry.result(result);
        } catch (error) {
          assert.fail(`${name} with ${where}.${option} = ${describe(value)} threw ${error.code}: ${error.message}`);
        }
      }
    }
  });
}

let total = 0;
for (const [name, entry] of Object.entries(TABLE)) {
  if (entry.special) {
    test(`${name}: ${entry.title ?? 'idempotent; a disposed model refuses every call with Disposed'}`, () =>
      entry.special());
    continue;
  }
  const cases = generate(name, entry);
  total += cases.length;
  const groups = Map.groupBy
    ? Map.groupBy(cases, (c) => c.group)
    : cases.reduce((map, c) => map.set(c.group, [...(map.get(c.group) ?? []), c]), new Map());
  // One subtest per argument or option (thousands of subtests would cost more than the cases); every failing case
  // of it is listed. A case with a known bug in another file runs as its own todo subtest.
  test(`${name}: ${cases.length} generated bad and accepted inputs`, async (t) => {
    for (const [group, list] of groups) {
      const todos = [];
      await t.test(`${group}: ${list.length} cases`, async () => {
        const failures = [];
        for (const { c, args, run, argument, reference } of list) {
          const expect = c.ok
            ? c.ok === true
              ? 'accepted, same bytes'
              : 'accepted'
            : `${c.code ?? 'an error'} for ${[argument].flat().join(' or ')}`;
          const label = `${group}: ${c.label} → ${expect}`;
          const todo = todoFor(name, argument, c.label);
          const go = () => check(name, entry, { args, run, ok: c.ok, code: c.code, argument, reference });
          if (todo) {
            todos.push([label, todo, go]);
            continue;
          }
          try {
            await go();
          } catch (error) {
            failures.push(`${label}: ${error.message.split('\n')[0]}`);
          }
        }
        assert.equal(failures.length, 0, `${failures.length} of ${list.length} cases failed:\n${failures.join('\n')}`);
      });
      for (const [label, todo, go] of todos) await t.test(label, { todo }, go);
    }
    for (const { label, todo } of NOT_RUN[name] ?? []) {
      await t.test(`${label} (not run)`, { todo }, () => assert.fail(todo));
    }
  });
}

test('a disposed model refuses predictInterval with a bad option as Disposed too (nothing else is checked first)', () => {
  const model = ka.kernelRegression(X, Y, REGRESSION);
  model.dispose();
  for (const options of [{ lvl: 0.9 }, { level: 2 }, 5]) {
    assert.throws(
      () => model.predictInterval(XQ, options),
      (e) => e instanceof KernelAttentionError && e.code === 'Disposed' && e.argument === 'model',
    );
  }
});

test('results beyond the 2 GiB memory are refused before anything is allocated (no wrapped 32-bit sizes)', () => {
  // I = D = 65,536: 2³² output floats. Unchunked (causal) and chunked paths alike refuse, naming the queries.
  const I = 65536;
  const queries = new Float32Array(I);
  const values = new Float32Array(I); // one key with D = 65,536 columns
  for (const causal of [false, true]) {
    assert.throws(
      () => ka.attention(queries, [0], values, { dim: 1, causal }),
      (e) => e instanceof KernelAttentionError && e.code === 'OutOfMemory' && e.argument === 'queries',
      `causal ${causal}`,
    );
  }
  // A model whose y has 65,536 columns, predicted at 65,536 points.
  const model = ka.kernelRegression([0, 1], new Float32Array(2 * I), { dim: 1, bandwidth: 0.5 });
  assert.throws(
    () => model.predict(queries),
    (e) => e instanceof KernelAttentionError && e.code === 'OutOfMemory' && e.argument === 'xq',
  );
  assert.equal(model.predict([0.5]).length, I); // and the module still works
  model.dispose();
});

test('the matrix generates over a thousand cases', (t) => {
  assert.ok(total > 1000, `only ${total} cases`);
  t.diagnostic(`bad-input matrix: ${total} generated cases over ${Object.keys(TABLE).length} functions`);
});
