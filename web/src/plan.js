// plan(): which method a call would run, and why, as the core decides it (cpp/core/methods/plan.h), without running it.
import { KernelAttentionError } from './errors.js';
import { METHOD_OPTIONS, readMethod } from './approximate.js';
import { regressionKernels, resolveApproximation } from './bandwidth.js';
import { readCall, SHARED_OPTIONS } from './options.js';
import { checkOptionNames, oneOf, positiveInteger } from './validate.js';

const TASKS = ['attention', 'regression'];

/**
 * plan('attention', queries, keys, options): what attention() with these arguments would run ({ method, reason });
 * plan('regression', { n, dim, kernel, method, tolerance }): what kernelRegression() and selectBandwidth() run on a
 * sample of n points (method 'auto', 'exact' or 'grid'; a model may still fit exactly at a bandwidth no grid serves,
 * and says so in its own `reason`).
 */
export function makePlan(engine) {
  return function plan(task, ...args) {
    oneOf(task, TASKS, 'task');
    if (task === 'attention') {
      const [queries, keys, options] = args;
      const call = readCall(engine, queries, keys, undefined, options, [...SHARED_OPTIONS, ...METHOD_OPTIONS]);
      const { method, reason } = readMethod(engine, options, call);
      return { method, reason };
    }
    const [options] = args;
    if (options === undefined) {
      throw new KernelAttentionError('BadArgument', '`options` is required: at least `{ n, dim }`', 'options');
    }
    checkOptionNames(options, ['n', 'dim', 'kernel', 'method', 'tolerance']);
    const { n, dim, kernel = 'gaussian', method = 'auto', tolerance } = options;
    positiveInteger(n, 'options.n');
    positiveInteger(dim, 'options.dim');
    oneOf(kernel, regressionKernels(engine), 'options.kernel');
    const p = resolveApproximation(engine, method, tolerance, { dim, kernel, n }, 'options.method');
    return { method: p.method, reason: p.reason };
  };
}
