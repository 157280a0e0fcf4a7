// Public entry: init() loads the WebAssembly core once and returns the API.
import { makeAttention, makeWeights } from './attention.js';
import { makeBandwidth } from './bandwidth.js';
import { KernelAttentionError } from './errors.js';
import { loadModule } from './loader.js';
import { makeRegression } from './regression.js';
import { makeStates } from './states.js';
import { checkOptionNames } from './validate.js';

export { KernelAttentionError };

let instance = null;

export async function init(options) {
  checkOptionNames(options, []);
  instance ??= loadModule().then((module) => {
    const bandwidth = makeBandwidth(module);
    return Object.freeze({
      attention: makeAttention(module),
      weights: makeWeights(module),
      ...makeStates(module),
      ...bandwidth,
      kernelRegression: makeRegression(module, 1, bandwidth.selectBandwidth),
      simd: module._simdName(),
    });
  });
  try {
    return await instance;
  } catch (error) {
    instance = null;  // a failed load may be retried
    throw error;
  }
}
