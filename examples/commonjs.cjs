// CommonJS: require() gives init(), which resolves to the same API as the ES module:
// `node node_modules/kernel-attention/examples/commonjs.cjs`.
const { init } = require('kernel-attention');

init().then((ka) => {
  const fit = ka.attention([0.5, 1.5], [0, 1, 2], [0, 1, 4], { dim: 1, kernel: 'gaussian', bandwidth: 0.5 });
  console.log('fit:', Array.from(fit, (f) => f.toFixed(3)).join(' '));
  // The error class lives on the ES module; in CommonJS test error.name or error.code.
  return ka.attention([0], [0], [1], { dim: 0 });
}).catch((error) => {
  console.log(error.name === 'KernelAttentionError' ? `rejected: ${error.code}` : `unexpected: ${error}`);
});
