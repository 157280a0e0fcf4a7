// attentionPooling(): trainable attention pooling (Dive into Deep Learning's parametric Nadaraya–Watson, and its
// softmax and projected variants) in a few lines over attention() and attentionGradients(). The parameters, their
// gradients and Adam's moments are float64 arrays in JS; nothing is held in WebAssembly memory between calls.
//
// Parameters: the log-bandwidth (one shared, or one per dimension) of a distance kernel, or softmax's scale; with
// `projections: { rank }` also Wq and Wk (dim × rank, row-major), so the kernel sees q·Wq and k·Wk, or with
// `shared: true` one W for both (a learned metric for a distance kernel: |(q − k)·W|). Their gradients are
// attentionGradients()' dLogBandwidth (summed when shared) or dScale, and Wq's is queriesᵀ·dq', Wk's keysᵀ·dk' (W's
// their sum).
import { describe, fail, KernelAttentionError } from './errors.js';
import { smoothCompact } from './gradients.js';
import { bandwidths, boolean, checkOptionNames, numericArray, oneOf, positiveInteger, rowsOf } from './validate.js';

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

/** x (rows × cols) · W (cols × rank), in float64. */
function project(x, rows, cols, W, rank) {
  const out = new Float64Array(rows * rank);
  for (let i = 0; i < rows; i++) {
    for (let d = 0; d < cols; d++) {
      const xd = x[i * cols + d];
      if (xd === 0) continue;
      for (let r = 0; r < rank; r++) out[i * rank + r] += xd * W[d * rank + r];
    }
  }
  return out;
}

/**
 * Given dy = dL/d(x·W) (rows × rank): adds xᵀ·dy to dW (cols × rank) and returns dL/dx = dy·Wᵀ (rows × cols).
 */
function projectBack(x, rows, cols, W, rank, dy, dW) {
  const dx = new Float32Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let d = 0; d < cols; d++) {
      let sum = 0;
      for (let r = 0; r < rank; r++) {
        const g = dy[i * rank + r];
        sum += g * W[d * rank + r];
        dW[d * rank + r] += x[i * cols + d] * g;
      }
      dx[i * cols + d] = sum;
    }
  }
  return dx;
}

/** attentionPooling() over the API's attention() and attentionGradients(), for the kernels `engine` knows. */
export function makeAttentionPooling(engine, attention, attentionGradients) {
  return function attentionPooling(options) {
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

    // Each parameter with its gradient and Adam's moments. step() replaces `value` with a new array, so a forward's
    // record keeps the values it ran with.
    const slot = (name, value) => ({
      name,
      value,
      grad: new Float64Array(value.length),
      m: new Float64Array(value.length),
      v: new Float64Array(value.length),
    });
    const params = [slot(softmax ? 'scale' : 'logBandwidth', theta)];
    if (projection?.shared) params.push(slot('W', projection.W));
    else if (projection) params.push(slot('Wq', projection.Wq), slot('Wk', projection.Wk));
    // the slots of the query and key projections (one slot when shared)
    const [pq, pk] = projection ? [params[1], params[projection.shared ? 1 : 2]] : [];
    let t = 0;
    let record = null;
    let disposed = false;

    const live = () => {
      if (disposed)
        throw new KernelAttentionError(
          'Disposed',
          'this `pooling` was disposed (make another with attentionPooling())',
          'pooling',
        );
    };

    /** The kernel options for the current parameters (the bandwidths as attention() takes them, one per dimension). */
    function kernelOptions() {
      if (softmax) return { scale: params[0].value[0] };
      const log = params[0].value;
      const h = Array.from({ length: m }, (_, d) => Math.exp(log[sharedBandwidth ? 0 : d]));
      h.forEach((x, d) => {
        if (!(Math.fround(x) > 0) || !Number.isFinite(Math.fround(x))) {
          throw new KernelAttentionError(
            'BadBandwidth',
            `\`parameters.logBandwidth[${sharedBandwidth ? 0 : d}]\` = ${log[sharedBandwidth ? 0 : d]} was learned, a bandwidth of ${x}, beyond float32 ` +
              'range (1.4e-45 to 3.4e38); lower `options.learningRate`',
            'parameters.logBandwidth',
          );
        }
      });
      return { bandwidth: h };
    }

    function forward(queries, keys, values, callOptions) {
      live();
      record = null; // a refused forward leaves nothing for backward() to differentiate
      checkOptionNames(callOptions, FORWARD_OPTIONS);
      const { mask, causal, groups, empty } = callOptions ?? {};
      const q = Float64Array.from(numericArray(queries, 'queries'));
      const k = Float64Array.from(numericArray(keys, 'keys'));
      const v = Float64Array.from(numericArray(values, 'values'));
      const I = rowsOf(q, dim, 'queries', 'options.dim');
      const J = rowsOf(k, dim, 'keys', 'options.dim');
      const [Wq, Wk] = projection ? [pq.value, pk.value] : [];
      const qp = projection ? project(q, I, dim, Wq, m) : q;
      const kp = projection ? project(k, J, dim, Wk, m) : k;
      const call = { dim: m, kernel, ...kernelOptions(), mask, causal, groups, empty };
      // Exact, as the backward pass differentiates it (attention()'s default 'auto' may run sparse on large 1-D data).
      const output = attention(qp, kp, v, { ...call, method: 'exact' });
      // What backward() needs, checked by attention() above; the masks and groups copied, so later edits do not count.
      call.mask = mask instanceof Uint8Array ? mask.slice() : mask;
      if (groups !== undefined)
        call.groups = { queries: Int32Array.from(groups.queries), keys: Int32Array.from(groups.keys) };
      record = { q, k, v, qp, kp, I, J, Wq, Wk, call };
      return output;
    }

    function backward(dOut) {
      live();
      if (record === null) {
        throw new KernelAttentionError(
          'BadArgument',
          '`pooling.backward(dOut)` differentiates the latest `pooling.forward()`: call forward() first',
          'pooling',
        );
      }
      const { q, k, v, qp, kp, I, J, Wq, Wk, call } = record;
      const g = attentionGradients(qp, kp, v, dOut, call);
      const dTheta = params[0].grad;
      if (softmax) dTheta[0] += g.dScale;
      else
        g.dLogBandwidth.forEach((x, d) => {
          dTheta[sharedBandwidth ? 0 : d] += x;
        });
      if (!projection) return { dq: g.dq, dk: g.dk, dv: g.dv };
      return {
        dq: projectBack(q, I, dim, Wq, m, g.dq, pq.grad),
        dk: projectBack(k, J, dim, Wk, m, g.dk, pk.grad),
        dv: g.dv,
      };
    }

    /** One Adam step (Kingma & Ba 2015, bias-corrected) on every parameter; then the gradients are zeroed. */
    function step() {
      live();
      t += 1;
      const c1 = 1 - beta1 ** t;
      const c2 = 1 - beta2 ** t;
      for (const p of params) {
        const next = new Float64Array(p.value.length);
        for (let n = 0; n < next.length; n++) {
          const g = p.grad[n];
          p.m[n] = beta1 * p.m[n] + (1 - beta1) * g;
          p.v[n] = beta2 * p.v[n] + (1 - beta2) * g * g;
          next[n] = p.value[n] - (rate * (p.m[n] / c1)) / (Math.sqrt(p.v[n] / c2) + eps);
        }
        p.value = next;
        p.grad.fill(0);
      }
    }

    function zeroGrad() {
      live();
      for (const p of params) p.grad.fill(0);
    }

    /** { name: copy } of the values or gradients; the scale (and its gradient) as a number. */
    function read(field) {
      live();
      const out = {};
      for (const p of params) out[p.name] = p.name === 'scale' ? p[field][0] : p[field].slice();
      return out;
    }

    const pooling = {
      dim,
      kernel,
      /** Copies of the parameters: logBandwidth and bandwidth (its exp), or scale; Wq and Wk (or W) with projections. */
      get parameters() {
        const out = read('value');
        if (!softmax) out.bandwidth = out.logBandwidth.map(Math.exp);
        return out;
      },
      /** Copies of the accumulated gradients, by parameter name (bandwidth: of its log). */
      get gradients() {
        return read('grad');
      },
      forward,
      backward,
      step,
      zeroGrad,
      dispose() {
        disposed = true;
        record = null;
      },
    };
    if (typeof Symbol.dispose === 'symbol') pooling[Symbol.dispose] = pooling.dispose;
    return Object.freeze(pooling);
  };
}
