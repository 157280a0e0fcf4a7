// attentionPooling(): trainable attention pooling (Dive into Deep Learning's parametric Nadaraya–Watson, and its
// softmax and projected variants) in a few lines over attention() and attentionGradients(). The parameters, their
// gradients and Adam's moments are float64 arrays in JS; nothing is held in WebAssembly memory between calls.
//
// Parameters: the log-bandwidth (one shared, or one per dimension) of a distance kernel, or softmax's scale; with
// `projections: { rank }` also Wq and Wk (dim × rank, row-major), so the kernel sees q·Wq and k·Wk, or with
// `shared: true` one W for both (a learned metric for a distance kernel: |(q − k)·W|). Their gradients are
// attentionGradients()' dLogBandwidth (summed when shared) or dScale, and Wq's is queriesᵀ·dq', Wk's keysᵀ·dk' (W's
// their sum).
import { KernelAttentionError } from './errors.js';
import { FORWARD_OPTIONS, readPooling } from './pooling-options.js';
import { checkOptionNames, numericArray, rowsOf } from './validate.js';

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

/**
 * One Adam step (Kingma & Ba 2015, bias-corrected), the t-th, on every parameter slot of `params` (value, grad, and
 * the moments m, v): each value is replaced by a new array (a forward's record keeps the values it ran with), and the
 * gradients are zeroed.
 */
function adamStep(params, t, { rate, beta1, beta2, eps }) {
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

/** attentionPooling() over the API's attention() and attentionGradients(), for the kernels `engine` knows. */
export function makeAttentionPooling(engine, attention, attentionGradients) {
  return function attentionPooling(options) {
    const { dim, kernel, softmax, m, sharedBandwidth, theta, projection, ...adam } = readPooling(engine, options);
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

    /** One Adam step on every parameter; then the gradients are zeroed. */
    function step() {
      live();
      t += 1;
      adamStep(params, t, adam);
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
