// lowess(x, y, { frac, iterations, delta }): Cleveland's (1979) LOWESS as R's lowess() computes it
// (cpp/core/stats/lowess.h has the formulas; docs/regression.md, "LOWESS").
import { checkResult, fail, KernelAttentionError } from './errors.js';
import { MAX_WASM_BYTES } from './heap.js';
import { checkOptionNames, numericArray } from './validate.js';

// x, y are Float64Arrays of n ≥ 1 finite values, the options checked. The fit runs in float64 (it follows R's double
// arithmetic); the results come back as fresh Float64Array copies.
function runLowess(engine, x, y, frac, iterations, delta, threads) {
  const n = x.length;
  return engine.withHeap((heap) => {
    const xp = heap.f64(x);
    const yp = heap.f64(y);
    const fitted = heap.alloc(n * 8);
    const weights = heap.alloc(n * 8);
    checkResult(engine.lowess({ x: xp, y: yp, n, frac, iterations, delta, threads, fitted, weights }));
    return { fitted: heap.readF64(fitted, n), weights: heap.readF64(weights, n) };
  });
}

// The wasm memory holds 2 GiB; the call needs about 13 doubles per point (inputs, outputs, the engine's scratch).
const MAX_POINTS = Math.floor(MAX_WASM_BYTES / (13 * 8));

/**
 * A Float64Array of `value`'s entries after the API's standard checks (numericArray: a typed array or array of
 * finite numbers within float32 range), at least one, at most MAX_POINTS. The values keep their float64 precision.
 */
function pointArray(value, name) {
  const checked = numericArray(value, name);
  if (checked.length < 1) fail('BadShape', name, 'at least one value', value);
  if (checked.length > MAX_POINTS) {
    throw new KernelAttentionError(
      'OutOfMemory',
      `\`${name}\` has ${checked.length} entries; lowess() takes at most ${MAX_POINTS} within the 2 GiB WebAssembly memory`,
      name,
    );
  }
  return Float64Array.from(checked);
}

/** The lowess() function of the API; fits run on up to `threads` threads. */
export function makeLowess(engine, threads = 1) {
  return function lowess(x, y, options) {
    const { frac = 2 / 3, iterations = 3, delta } = checkOptionNames(options, ['frac', 'iterations', 'delta']);
    const xs = pointArray(x, 'x');
    const ys = pointArray(y, 'y');
    if (ys.length !== xs.length) {
      throw new KernelAttentionError(
        'BadShape',
        `\`y\` must have one value per \`x\` (${xs.length}); got ${ys.length}`,
        'y',
      );
    }
    if (typeof frac !== 'number' || !(frac > 0 && frac <= 1))
      fail('BadArgument', 'options.frac', 'a number in (0, 1]', frac);
    if (!Number.isInteger(iterations) || iterations < 0 || iterations > 2 ** 31 - 1) {
      fail('BadArgument', 'options.iterations', 'an integer ≥ 0', iterations);
    }
    let step = delta;
    if (step === undefined) {
      // R's default: 1 % of the range of x
      let lo = Infinity,
        hi = -Infinity;
      for (const v of xs) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
      step = 0.01 * (hi - lo);
      if (!Number.isFinite(step)) step = Number.MAX_VALUE; // a range beyond float64: every point but the ends is interpolated
    } else if (typeof step !== 'number' || !(step >= 0 && step < Infinity)) {
      fail('BadArgument', 'options.delta', 'a finite number ≥ 0', delta);
    }
    return runLowess(engine, xs, ys, frac, iterations, step, threads);
  };
}
