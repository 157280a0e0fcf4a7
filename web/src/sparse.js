// kernelRegression(…, { method: 'sparse' }): what it accepts, and one call of the core's certified sparse pass for a
// model's predictions (attention's own use is in approximate.js).
import { KernelAttentionError } from './errors.js';

/**
 * Whether kernelRegression runs its predictions by the sparse method; refuses, before anything is allocated, what
 * that method does not serve: more dimensions than the core's (3), local-linear, observation weights.
 */
export function readSparseRegression(engine, { method, dim, estimator, weights }) {
  if (method !== 'sparse') return false;
  const { sparseMaxDims } = engine.limits;
  if (dim > sparseMaxDims) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`options.method\` 'sparse' needs at most ${sparseMaxDims} dimensions; got dim ${dim}`,
      'options.method',
    );
  }
  if (estimator !== 'nadaraya-watson') {
    throw new KernelAttentionError(
      'BadArgument',
      `\`options.method\` 'sparse' fits Nadaraya–Watson only; pass \`estimator: 'nadaraya-watson'\` (got '${estimator}')`,
      'options.method',
    );
  }
  if (weights !== undefined) {
    throw new KernelAttentionError(
      'BadArgument',
      "`options.weights` is not available with method 'sparse'; use method 'exact'",
      'options.weights',
    );
  }
  return true;
}

/**
 * One sparse Nadaraya–Watson pass on `heap`: `count` queries at heap offset `qp` over the model's n keys `xp` and
 * values `yp`; writes `mean` and, where their offsets are not 0, Σℓ², effective keys and log-denominators. Raises the
 * double at heap offset `error` (when not 0) to the call's error estimate (relative to the range of y). Returns the
 * core's result for checkResult().
 */
export function sparseFit(
  engine,
  heap,
  {
    xp,
    yp,
    qp,
    n,
    count,
    dim,
    width,
    kernel,
    bandwidth,
    empty,
    tolerance,
    threads,
    mean,
    sumSq = 0,
    eff = 0,
    logden = 0,
    error = 0,
  },
) {
  const options = {
    kernel,
    scale: 1,
    bandwidth,
    heads: 1,
    causal: false,
    leaveOneOut: false,
    keyPadding: 0,
    generalMask: 0,
    queryGroups: 0,
    keyGroups: 0,
    empty,
  };
  const result = engine.sparseAttention(
    qp,
    xp,
    yp,
    mean,
    count,
    n,
    dim,
    width,
    options,
    tolerance,
    threads,
    0,
    sumSq,
    eff,
    logden,
  );
  if (error && result.status === 'Ok') heap.setF64(error, Math.max(heap.getF64(error), result.errorEstimate));
  return result;
}
