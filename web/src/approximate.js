// attention() by certified sparsity, top-k, random features or Nyström, as plan.js planned it: one runner per method.
import { checkResult } from './errors.js';
import { copyCall } from './options.js';
import { outputOf } from './frame.js';

/**
 * run(heap, args, output) with `call`'s inputs copied into the heap and room for its I·D outputs: args are the fields
 * every attention binding takes, output(result) checks the core's result and reads the output back.
 */
function withCall(engine, call, run) {
  return engine.withHeap((heap) => {
    const { q, k, v, options } = copyCall(heap, call);
    const out = heap.alloc(call.I * call.D * 4);
    const { I, J, M, D } = call;
    return run(heap, { q, k, v, out, I, J, M, D, options }, (result) => {
      checkResult(result);
      return outputOf(heap.readF32(out, I * D), call);
    });
  });
}

/**
 * Sparse and top-k attention: { output, method, reason, errorEstimate, droppedMass (Float64Array I·H: per query and
 * head, a bound on (sparse) or the amount of (top-k) the skipped weight relative to the kept weight; NaN for an empty
 * row), keptKeys, skippedKeys, exactRows: 0 }. kernelRegression's sparse model calls the core in model-fit.js.
 */
function keepingKeys(engine, call, how, run) {
  return withCall(engine, call, (heap, args, output) => {
    const dropped = heap.alloc(call.I * call.heads * 8);
    const result = run({ ...args, dropped });
    return {
      output: output(result),
      method: how.method,
      reason: how.reason,
      errorEstimate: result.errorEstimate,
      droppedMass: heap.readF64(dropped, call.I * call.heads),
      keptKeys: result.keptKeys,
      skippedKeys: result.skippedKeys,
      exactRows: 0,
    };
  });
}

/** Random features and Nyström: { output, method, reason, errorEstimate, features or landmarks (`counted`), exactRows }. */
function lowRank(engine, call, how, run, counted) {
  const { tolerance, seed, count, sampling } = how;
  return withCall(engine, call, (heap, args, output) => {
    const result = run({ ...args, approximation: { tolerance, seed, count, sampling } });
    return {
      output: output(result),
      method: how.method,
      reason: how.reason,
      errorEstimate: result.errorEstimate,
      [counted]: result.count,
      exactRows: result.exactRows,
    };
  });
}

/** Per approximating method, its run of `call` as `how` (plan.js, planAttention) says, on up to `threads` threads. */
const RUNNERS = {
  sparse: (engine, call, how, threads) =>
    keepingKeys(engine, call, how, (args) => engine.sparseAttention({ ...args, tolerance: how.tolerance, threads })),
  'top-k': (engine, call, how) =>
    keepingKeys(engine, call, how, (args) => engine.topKAttention({ ...args, topK: how.count })),
  'random-features': (engine, call, how) => lowRank(engine, call, how, engine.randomFeaturesAttention, 'features'),
  nystrom: (engine, call, how) => lowRank(engine, call, how, engine.nystromAttention, 'landmarks'),
};

/**
 * The run of `call` by the approximation `how` names ((engine, call, how, threads) → { output, method, reason,
 * errorEstimate, … }), or null where `how` is the exact engine's.
 */
export const approximation = (how) => RUNNERS[how.method] ?? null;
