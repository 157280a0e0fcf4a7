// attentionPooling()'s options: the kernel and its initial parameter (softmax's scale or the log-bandwidths), the
// projections and their seeded start, and Adam's settings, each checked with an error naming it.
import { describe, fail, KernelAttentionError } from './errors.js';
import { smoothCompact } from './attention-gradients.js';
import { bandwidths, boolean, checkOptionNames, oneOf, positiveInteger } from './validate.js';

export const POOLING_OPTIONS = [
  'dim',
  'kernel',
  'bandwidth',
  'scale',
  'projections',
  'learningRate',
  'betas',
  'epsilon',
];
export const FORWARD_OPTIONS = ['mask', 'causal', 'groups', 'empty'];
// Wq and Wk hold 2·dim·rank float64s (and their gradients and moments four times more): 2²⁴ entries each at most.
const MAX_PROJECTION = 2 ** 24;

/** mulberry32: the projections' seeded uniform stream in [0, 1). */
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function positiveNumber(value, name) {
  if (typeof value !== 'number' || !(value > 0) || !Number.isFinite(value))
    fail('BadArgument', name, 'a positive finite number', value);
  return value;
}

function readBetas(value) {
  const name = 'options.betas';
  if (!Array.isArray(value) && !(ArrayBuffer.isView(value) && !(value instanceof DataView))) {
    fail('BadArgument', name, 'an array of two numbers [β1, β2], each in [0, 1)', value);
  }
  if (value.length !== 2) fail('BadShape', name, 'two numbers [β1, β2]', value);
  const betas = [value[0], value[1]]; // each read once
  betas.forEach((b, n) => {
    if (typeof b !== 'number' || !(b >= 0 && b < 1)) {
      throw new KernelAttentionError(
        'BadArgument',
        `\`${name}[${n}]\` must be a number in [0, 1); got ${describe(b)}`,
        name,
      );
    }
  });
  return betas;
}

function readProjections(projections, dim) {
  checkOptionNames(projections, ['rank', 'seed', 'shared'], 'options.projections');
  if (projections === undefined) return null;
  const { rank, seed = 0, shared = false } = projections;
  positiveInteger(rank, 'options.projections.rank');
  if (dim * rank > MAX_PROJECTION) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`options.projections.rank\` = ${rank} makes Wq and Wk dim·rank = ${dim * rank} entries each; at most ${MAX_PROJECTION}`,
      'options.projections.rank',
    );
  }
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    fail('BadArgument', 'options.projections.seed', 'an integer from 0 to 2³² − 1', seed);
  boolean(shared, 'options.projections.shared');
  // Uniform in ±1/√dim (a linear layer's usual start), Wq then Wk from one stream (or W alone).
  const random = mulberry32(seed);
  const bound = 1 / Math.sqrt(dim);
  const draw = () => Float64Array.from({ length: dim * rank }, () => bound * (2 * random() - 1));
  return shared ? { rank, shared, W: draw() } : { rank, shared, Wq: draw(), Wk: draw() };
}

/**
 * attentionPooling()'s options read and checked: { dim, kernel, softmax (a scale is trained, not bandwidths), m (the
 * dimension the kernel sees: the projections' rank, or dim), sharedBandwidth, theta (the initial scale, or
 * log-bandwidths), projection (null, or the initial Wq and Wk, or W), rate, beta1, beta2, eps }.
 */
export function readPooling(engine, options) {
  if (options === undefined) {
    throw new KernelAttentionError(
      'BadArgument',
      '`options` is required: at least `{ dim }`, the number of columns of queries and keys',
      'options',
    );
  }
  checkOptionNames(options, POOLING_OPTIONS);
  const {
    dim,
    kernel = 'gaussian',
    bandwidth,
    scale,
    projections,
    learningRate = 1e-3,
    betas = [0.9, 0.999],
    epsilon = 1e-8,
  } = options;
  positiveInteger(dim, 'options.dim');
  oneOf(
    kernel,
    engine.kernels.map((k) => k.name),
    'options.kernel',
  );
  const traits = engine.kernel(kernel);
  if (!traits.gradient) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`options.kernel\` '${kernel}' cannot be trained (its output is piecewise constant in the bandwidth); use ${smoothCompact(engine)}`,
      'options.kernel',
    );
  }
  const projection = readProjections(projections, dim);
  const m = projection ? projection.rank : dim; // the dimension the kernel sees
  const softmax = !traits.distance; // trains a scale, not bandwidths

  // The kernel's parameter, read as float32 as attention() reads it: softmax's scale, or the log-bandwidths (one
  // shared when `bandwidth` is a number, else one per dimension of the space the kernel sees).
  let sharedBandwidth = false;
  let theta;
  if (softmax) {
    if (bandwidth !== undefined) {
      throw new KernelAttentionError(
        'BadArgument',
        "`options.bandwidth` applies to distance kernels, not 'softmax' (use `scale`)",
        'options.bandwidth',
      );
    }
    const s = scale === undefined ? 1 / Math.sqrt(m) : scale;
    if (typeof s !== 'number' || !Number.isFinite(Math.fround(s))) {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.scale\` must be a finite number within float32 range; got ${describe(scale)}`,
        'options.scale',
      );
    }
    theta = Float64Array.of(Math.fround(s));
  } else {
    if (scale !== undefined) {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.scale\` applies to 'softmax' only; kernel '${kernel}' uses \`bandwidth\``,
        'options.scale',
      );
    }
    sharedBandwidth = bandwidth === undefined || typeof bandwidth === 'number';
    theta = Float64Array.from(
      bandwidths(bandwidth === undefined ? 1 : bandwidth, sharedBandwidth ? 1 : m, 'options.bandwidth'),
      Math.log,
    );
  }
  const rate = positiveNumber(learningRate, 'options.learningRate');
  const [beta1, beta2] = readBetas(betas);
  const eps = positiveNumber(epsilon, 'options.epsilon');

  return { dim, kernel, softmax, m, sharedBandwidth, theta, projection, rate, beta1, beta2, eps };
}
