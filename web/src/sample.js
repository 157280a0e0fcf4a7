// What every regression call reads the same way: its sample (x, y, observation weights), its kernels and bandwidth
// rules, blocked CV's radius, and the FitOptions the engine takes; and a model's own copy of its sample.
import { describe, KernelAttentionError } from './errors.js';
import { shifted32 } from './frame.js';
import { numericArray, positiveInteger, rowsOf } from './validate.js';

/** The kernels a regression takes: those with a bandwidth (the core's kernel traits). */
export const regressionKernels = (engine) => engine.kernels.filter((k) => k.distance).map((k) => k.name);

/**
 * The rules kernelRegression's `bandwidth` names: the core's criteria and rules of thumb (engine.selections), and
 * 'plugin', the direct plug-in (plugin.js).
 */
export const regressionRules = (engine) => [...engine.selections, 'plugin'];

/** selectBandwidth's rules: kernelRegression's, and 'cv-gradient', L-BFGS on the exact CV gradient (gradient-search.js). */
export const selectRules = (engine) => [...regressionRules(engine), 'cv-gradient'];

/**
 * Validates a regression sample (x: n × dim, y: n × D, optional weights: n); returns n, the value width D and the
 * checked arrays (numericArray's copies of plain arrays), which are what the caller must use from then on.
 */
export function readSample(x, y, dim, weights) {
  positiveInteger(dim, 'options.dim');
  const xs = numericArray(x, 'x');
  const ys = numericArray(y, 'y');
  const n = rowsOf(xs, dim, 'x', 'options.dim');
  if (n < 2) throw new KernelAttentionError('BadShape', `\`x\` must hold at least 2 rows; got ${n}`, 'x');
  if (ys.length === 0 || ys.length % n !== 0) {
    throw new KernelAttentionError(
      'BadShape',
      `\`y\` must have n·D entries for n = ${n} rows of x; got length ${ys.length}`,
      'y',
    );
  }
  let ws;
  if (weights !== undefined) {
    ws = numericArray(weights, 'options.weights');
    if (ws.length !== n) {
      throw new KernelAttentionError(
        'BadShape',
        `\`options.weights\` must have one entry per row of x (${n}); got length ${ws.length}`,
        'options.weights',
      );
    }
    let total = 0;
    for (let i = 0; i < n; i++) {
      if (!(ws[i] >= 0)) {
        throw new KernelAttentionError(
          'BadArgument',
          `\`options.weights[${i}]\` must be >= 0; got ${ws[i]}`,
          'options.weights',
        );
      }
      total += ws[i];
    }
    if (!(total > 0))
      throw new KernelAttentionError('BadArgument', '`options.weights` must not all be zero', 'options.weights');
  }
  return { n, width: ys.length / n, x: xs, y: ys, weights: ws };
}

/** The engine's FitOptions for a regression call; `weights` and `bandwidth` are heap offsets (0 when absent). */
export function fitOptions({
  kernel,
  estimator,
  weights = 0,
  bandwidth = 0,
  empty = 'nan',
  threads,
  tolerance = 0,
  exclude = 0,
  discrete = {},
}) {
  // `discrete`: the discrete columns' fields (categories.js discreteOptions), none by default. Without continuous
  // columns (`standIn`: a column of zeros in their place) local-linear and local-quadratic are Nadaraya–Watson, and run
  // as such: the stand-in's zero spread would make every such design singular.
  const { standIn = false, ...fields } = discrete;
  if (standIn) estimator = 'nadaraya-watson';
  return { kernel, estimator, bandwidth, weights, empty, threads, tolerance, exclude, ...fields };
}

/**
 * Blocked CV's radius (Chu & Marron 1991): `exclude` (undefined: 0, leave-one-out) must be a finite number >= 0 in
 * x's units, and applies to the CV criterion only (`method`: the criterion asked for, 'fixed' for a given bandwidth,
 * undefined for cvScore).
 */
export function readExclude(exclude, rule, name = 'options.exclude') {
  if (exclude === undefined) return 0;
  if (typeof exclude !== 'number' || !(exclude >= 0) || !Number.isFinite(exclude)) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`${name}\` must be a finite number >= 0 (in x's units); got ${describe(exclude)}`,
      name,
    );
  }
  if (exclude > 0 && rule !== undefined && rule !== 'cv') {
    const what = rule === 'fixed' ? 'a given bandwidth' : `the rule '${rule}'`;
    throw new KernelAttentionError(
      'BadArgument',
      `\`${name}\` (blocked CV) applies to the criterion 'cv' only, not to ${what}`,
      name,
    );
  }
  return exclude;
}

// The x columns ownCopy made: never written after they are made, so what is computed from one (warnings.js's median
// spacings) holds for as long as it lives.
const ownCopies = new WeakSet();
/** Whether `x` is the x of a sample copy made by ownCopy (read-only from then on). */
export const isOwnCopy = (x) => ownCopies.has(x);

/**
 * The model's own float32 copy of the sample in its frame (x and y minus `frame`'s shifts, frame.js; later changes to
 * the caller's arrays do not change it), in the order of the first coordinate when `sort` (the exact engine then
 * skips the key tiles far from each query; the grid needs no order). `codes` (a mixed regression's levels, n × count,
 * categories.js) are copied in the same order.
 */
export function ownCopy(x, y, weights, n, dim, width, sort, frame, codes = null) {
  const x32 = shifted32(x, dim, frame.x);
  if (!sort) {
    const data = { x: x32, y: shifted32(y, width, frame.y), weights: weights && Float32Array.from(weights) };
    ownCopies.add(data.x);
    return { ...data, codes: codes && Int32Array.from(codes) };
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => x32[a * dim] - x32[b * dim] || a - b);
  const count = codes ? codes.length / n : 0;
  const data = {
    x: new Float32Array(n * dim),
    y: new Float32Array(n * width),
    weights: weights && new Float32Array(n),
    codes: codes && new Int32Array(n * count),
  };
  ownCopies.add(data.x);
  order.forEach((from, to) => {
    data.x.set(x32.subarray(from * dim, (from + 1) * dim), to * dim);
    for (let c = 0; c < width; c++) data.y[to * width + c] = y[from * width + c] - (frame.y ? frame.y[c] : 0);
    if (weights) data.weights[to] = weights[from];
    if (codes) data.codes.set(codes.subarray(from * count, (from + 1) * count), to * count);
  });
  return data;
}
