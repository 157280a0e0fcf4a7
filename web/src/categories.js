// Mixed data (docs/regression.md, "Mixed data"): the `types` option of a regression, its discrete columns split from
// the continuous ones (integer codes, or labels coded in sorted order), their levels and kernels, the bandwidth
// array's λ entries, and the FitOptions fields that carry them to the core (cpp/core/stats/mixed.h).
import { describe, fail, KernelAttentionError } from './errors.js';
import { readSample } from './sample.js';
import { oneOf, ownLength, positiveInteger } from './validate.js';

export const COLUMN_TYPES = ['continuous', 'unordered', 'ordered'];
/** The ordered kernels: Wang–van Ryzin (statsmodels' KernelReg) and Li–Racine's λ^|a − b| (R np's 'liracine'). */
export const ORDERED_KERNELS = ['wang-van-ryzin', 'li-racine'];
// Codes are int32 in the core; a column of more levels than this is not a category.
const MAX_LEVELS = 2 ** 24;

/**
 * `options.types` (one entry per column of x; undefined: all continuous) and `options.orderedKernel`: null when every
 * column is continuous, else { types, continuous (column indices), discrete (column indices), kernels (per discrete
 * column: 'aitchison-aitken' for unordered, the ordered kernel for ordered) }.
 */
export function readTypes(types, orderedKernel, dim) {
  if (orderedKernel !== undefined) oneOf(orderedKernel, ORDERED_KERNELS, 'options.orderedKernel');
  if (types === undefined) return null;
  if (!Array.isArray(types)) fail('BadArgument', 'options.types', `an array of ${dim} column types`, types);
  if (types.length !== dim) fail('BadShape', 'options.types', `one type per column of x (${dim})`, types);
  types.forEach((t, d) => {
    if (!COLUMN_TYPES.includes(t)) entryError('options.types', d, `one of ${COLUMN_TYPES.join(', ')}`, t);
  });
  const discrete = [];
  const continuous = [];
  types.forEach((t, d) => (t === 'continuous' ? continuous : discrete).push(d));
  if (!discrete.length) return null;
  const ordered = orderedKernel ?? 'wang-van-ryzin';
  const kernels = discrete.map((d) => (types[d] === 'ordered' ? ordered : 'aitchison-aitken'));
  return { types: Object.freeze([...types]), continuous, discrete, kernels, orderedKernel: ordered };
}

/**
 * A regression's sample read with its column types (options.dim, options.types, options.orderedKernel): readSample's
 * result ({ n, width, x, y, weights }) with x the continuous columns, `dim` their count (1 for the stand-in column of
 * zeros when every column is discrete), `mixed` (null when every column is continuous) and `codes` (n × count).
 */
export function readColumns(x, y, options, weights) {
  const { dim, types, orderedKernel } = options;
  positiveInteger(dim, 'options.dim');
  const t = readTypes(types, orderedKernel, dim);
  if (!t) return { ...readSample(x, y, dim, weights), dim, mixed: null, codes: null };
  const split = splitSample(t, x, dim);
  return { ...readSample(split.x, y, split.mixed.cols, weights), dim: split.mixed.cols, ...split };
}

/**
 * What a bandwidth choice cannot do with discrete columns, each an error naming its option: the rules of thumb (no
 * rule gives λ), the CV-gradient search (its gradient is in h only), blocked CV (`exclude`: its band is along the first
 * column).
 */
export function refuseMixed({ rule, exclude = 0 }, ruleName = 'options.rule') {
  if (rule !== undefined && rule !== 'cv' && rule !== 'aicc') {
    throw new KernelAttentionError(
      'BadArgument',
      `\`${ruleName}\` '${rule}' cannot choose λ for discrete columns (\`options.types\`): use 'cv' or 'aicc', ` +
        'or give the bandwidths',
      ruleName,
    );
  }
  if (exclude > 0) {
    throw new KernelAttentionError(
      'BadArgument',
      '`options.exclude` (blocked CV) is not supported with discrete columns (`options.types`)',
      'options.exclude',
    );
  }
}

/** The largest λ of a discrete kernel with c levels: (c − 1)/c for Aitchison–Aitken, 1 for the ordered kernels. */
export const lambdaMax = (kernel, levels) =>
  levels <= 1 ? 0 : kernel === 'aitchison-aitken' ? (levels - 1) / levels : 1;

/**
 * The sample x (n × dim, row-major) split by `t` (readTypes'): the continuous columns as a Float64Array n × cols
 * (cols = their count, or 1: a column of zeros stands in when every column is discrete; it changes no weight), and
 * the discrete columns as codes (Int32Array n × count). A discrete column holds integer codes 0 … c − 1 (c = the
 * largest + 1) or labels (strings, in a plain array), coded in the order of JavaScript's default sort of strings;
 * one column holds one kind. Returns the mixed description every later call uses.
 */
export function splitSample(t, x, dim) {
  const n = rowsOf(x, dim, 'x');
  const labels = t.discrete.map((d) => columnLabels(x, n, dim, d));
  const split = splitRows({ ...t, labels, levels: null, dim }, x, n, 'x');
  const levels = Int32Array.from(t.discrete, (d, k) => {
    if (labels[k]) return labels[k].length;
    let top = 0;
    for (let i = 0; i < n; i++) top = Math.max(top, split.codes[i * t.discrete.length + k]);
    return top + 1;
  });
  const mixed = { ...t, dim, cols: Math.max(t.continuous.length, 1), count: t.discrete.length, labels, levels };
  mixed.lambdaMax = Float64Array.from(t.kernels, (k, j) => lambdaMax(k, levels[j]));
  return { mixed, n, ...split };
}

/**
 * Queries xq (I × dim, user layout) split as the sample was: { x (I × cols), codes (I × count) }. A discrete entry
 * is a code of the sample's levels, or (for a labelled column) one of its labels.
 */
export function splitQueries(mixed, xq, name = 'xq') {
  const I = rowsOf(xq, mixed.dim, name);
  return { I, ...splitRows(mixed, xq, I, name) };
}

/** A BadArgument for entry k of `name`: the message names the entry, the error's `argument` the array. */
function entryError(name, k, expected, received) {
  throw new KernelAttentionError(
    'BadArgument',
    `\`${name}[${k}]\` must be ${expected}; got ${describe(received)}`,
    name,
  );
}

/** x's rows: its length over dim, which must divide it. */
function rowsOf(x, dim, name) {
  const typed = ArrayBuffer.isView(x) && !(x instanceof DataView);
  if (!Array.isArray(x) && !typed) fail('BadArgument', name, 'an array of numbers (and labels in discrete columns)', x);
  const length = typed ? ownLength(x, name) : x.length;
  if (length % dim !== 0) {
    throw new KernelAttentionError(
      'BadShape',
      `\`${name}\` must have a multiple of options.dim = ${dim} entries; got length ${length}`,
      name,
    );
  }
  return length / dim;
}

/** Column d's labels, sorted (null when it holds numbers: codes). */
function columnLabels(x, n, dim, d) {
  if (n === 0 || typeof x[d] !== 'string') return null;
  const seen = new Set();
  for (let i = 0; i < n; i++) {
    const v = x[i * dim + d];
    if (typeof v !== 'string') {
      entryError('x', i * dim + d, `a label (string) like the rest of column ${d}`, v);
    }
    seen.add(v);
  }
  return [...seen].sort();
}

/** Rows of x split into continuous values and codes, each entry checked; `mixed.levels` null: the sample's own. */
function splitRows(mixed, x, rows, name) {
  const { dim, continuous, discrete, labels, levels } = mixed;
  const cols = Math.max(continuous.length, 1);
  const values = new Float64Array(rows * cols);
  const codes = new Int32Array(rows * discrete.length);
  const index = labels.map((l) => l && new Map(l.map((label, code) => [label, code])));
  for (let i = 0; i < rows; i++) {
    continuous.forEach((d, k) => {
      const v = x[i * dim + d];
      if (typeof v !== 'number' || !Number.isFinite(Math.fround(v))) {
        throw new KernelAttentionError(
          typeof v === 'number' ? 'NonFinite' : 'BadArgument',
          `\`${name}[${i * dim + d}]\` (continuous column ${d}) must be a finite number within float32 range; got ${describe(v)}`,
          name,
        );
      }
      values[i * cols + k] = v;
    });
    discrete.forEach((d, k) => {
      const v = x[i * dim + d];
      const code = typeof v === 'string' && index[k] ? index[k].get(v) : v;
      const most = levels ? levels[k] : MAX_LEVELS;
      if (!Number.isInteger(code) || code < 0 || code >= most) {
        const expected = index[k]
          ? `one of column ${d}'s labels (${labels[k].slice(0, 5).join(', ')}${labels[k].length > 5 ? ', …' : ''}) or a code below ${most}`
          : `an integer code from 0 to ${most - 1} (column ${d} is ${mixed.types[d]})`;
        entryError(name, i * dim + d, expected, v);
      }
      codes[i * discrete.length + k] = code;
    });
  }
  return { x: values, codes };
}

/**
 * A bandwidth array for mixed data (one entry per column: h > 0 for a continuous column, λ within [0, λmax] for a
 * discrete one; a single number when there is one column): { h (cols, 1 for the stand-in column), lambda (count) }.
 */
export function readMixedBandwidth(mixed, value, name) {
  const { dim } = mixed;
  const list = typeof value === 'number' && dim === 1 ? [value] : value;
  if (!Array.isArray(list) && !(ArrayBuffer.isView(list) && !(list instanceof DataView)))
    fail('BadArgument', name, `an array of ${dim} numbers (h for continuous columns, λ for discrete ones)`, value);
  if (list.length !== dim) fail('BadShape', name, `${dim} entries, one per column`, value);
  const h = new Float64Array(mixed.cols).fill(1);
  mixed.continuous.forEach((d, k) => {
    const v = list[d];
    if (
      typeof v !== 'number' ||
      !(v > 0) ||
      !Number.isFinite(v) ||
      !(Math.fround(v) > 0) ||
      !Number.isFinite(Math.fround(v))
    )
      throw new KernelAttentionError(
        'BadBandwidth',
        `\`${name}[${d}]\` (continuous column ${d}) must be a positive finite number within float32 range; got ${describe(v)}`,
        name,
      );
    h[k] = v;
  });
  const lambda = Float64Array.from(mixed.discrete, (d, k) => {
    const v = list[d];
    const top = mixed.lambdaMax[k];
    if (typeof v !== 'number' || !(v >= 0 && v <= top)) {
      throw new KernelAttentionError(
        'BadBandwidth',
        `\`${name}[${d}]\` (λ of ${mixed.types[d]} column ${d}, ${mixed.levels[k]} levels, ${mixed.kernels[k]}) must be ` +
          `a number from 0 to ${top}; got ${describe(v)}`,
        name,
      );
    }
    return v;
  });
  return { h, lambda };
}

/** The bandwidth array in the user's column order: h for the continuous columns, λ for the discrete ones. */
export function joinBandwidth(mixed, h, lambda) {
  const out = new Float64Array(mixed.dim);
  mixed.continuous.forEach((d, k) => (out[d] = h[k]));
  mixed.discrete.forEach((d, k) => (out[d] = lambda[k]));
  return out;
}

/**
 * The FitOptions fields of the discrete columns (heap.js's `heap`): `codes` the sample's levels (a heap offset, or an
 * Int32Array to copy), `queryCodes` the queries' (an Int32Array, or 0: the sample's), λ (count doubles; absent for a
 * search). `null` mixed: no fields (the core's defaults: no discrete column).
 */
export function discreteOptions(engine, heap, mixed, { codes, queryCodes = 0, lambda = null }) {
  if (!mixed) return {};
  return {
    standIn: mixed.continuous.length === 0,
    discreteColumns: mixed.count,
    categories: typeof codes === 'number' ? codes : heap.i32(codes),
    queryCategories: queryCodes ? heap.i32(queryCodes) : 0,
    levels: heap.i32(mixed.levels),
    discreteKernels: heap.i32(Int32Array.from(mixed.kernels, (k) => engine.discreteKernel(k))),
    lambda: heap.f64(lambda ?? new Float64Array(mixed.count)),
  };
}

/** The rows of x (n × dim) as numbers in the user's layout, discrete entries as their codes (a model's own sample). */
export function codedRows(mixed, values, codes, n) {
  const out = new Float64Array(n * mixed.dim);
  for (let i = 0; i < n; i++) {
    mixed.continuous.forEach((d, k) => (out[i * mixed.dim + d] = values[i * mixed.cols + k]));
    mixed.discrete.forEach((d, k) => (out[i * mixed.dim + d] = codes[i * mixed.count + k]));
  }
  return out;
}
