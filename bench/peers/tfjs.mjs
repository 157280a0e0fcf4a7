// Contender: @tensorflow/tfjs-backend-wasm (XNNPACK), SIMD binary, one thread, loaded offline from node_modules.
// Attention: matMul(Q, Kᵀ)·scale → softmax → matMul(·, V). Nadaraya–Watson: −0.5·(xq − xk)²/h² by broadcasting
// (squaredDifference) → softmax → matMul with y, in chunks of queries so that no intermediate exceeds 2²² floats.
// Inputs become tensors outside the timed call; the time includes reading the result back (dataSync).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const chunkFloats = 2 ** 22;

export function tfjsWasm() {
  let tf;
  let tensors = [];
  const release = () => {
    tf.dispose(tensors);
    tensors = [];
  };
  // Runs body in a tidy scope and copies its result tensor into out at `offset`, leaving nothing allocated.
  const readInto = (out, offset, body) => {
    const result = tf.tidy(body);
    out.set(result.dataSync(), offset);
    result.dispose();
  };
  return {
    label: 'tfjs-backend-wasm (SIMD, 1 thread)',
    ceiling: 'wasm',
    threads: 1,
    async start() {
      tf = require('@tensorflow/tfjs-core');
      const wasm = require('@tensorflow/tfjs-backend-wasm');
      // Only the SIMD binary exists under these names: picking the threaded or the scalar one fails loudly.
      const dir = dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm-simd.wasm'));
      wasm.setWasmPaths({
        'tfjs-backend-wasm-simd.wasm': join(dir, 'tfjs-backend-wasm-simd.wasm'),
        'tfjs-backend-wasm.wasm': join(dir, 'not-used-by-bench (scalar build)'),
        'tfjs-backend-wasm-threaded-simd.wasm': join(dir, 'not-used-by-bench (threaded build)'),
      });
      tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
      if (!(await tf.setBackend('wasm'))) throw new Error('the wasm backend failed to initialise');
      const threads = wasm.getThreadsCount();
      if (threads !== 1) throw new Error(`tfjs-backend-wasm runs ${threads} threads`);
      return `tfjs-core ${tf.version_core}, tfjs-backend-wasm ${wasm.version_wasm}, threads ${threads}`;
    },
    async load(c, rows) {
      release();
      const q = tf.tensor2d(c.q.subarray(0, rows * c.M), [rows, c.M]);
      const k = tf.tensor2d(c.k, c.kind === 'nw' ? [1, c.J] : [c.J, c.M]);
      const v = tf.tensor2d(c.v, [c.J, c.D]);
      tensors = [q, k, v];
      const out = new Float32Array(rows * c.D);
      const compute =
        c.kind === 'nw'
          ? () => {
              const chunk = Math.max(1, Math.floor(chunkFloats / c.J));
              for (let start = 0; start < rows; start += chunk) {
                const n = Math.min(chunk, rows - start);
                readInto(out, start, () => {
                  const logits = tf.mul(tf.squaredDifference(tf.slice(q, [start, 0], [n, 1]), k), -0.5 / (c.h * c.h));
                  return tf.matMul(tf.softmax(logits), v);
                });
              }
            }
          : () => readInto(out, 0, () => tf.matMul(tf.softmax(tf.mul(tf.matMul(q, k, false, true), c.scale)), v));
      return {
        async run() {
          const start = performance.now();
          compute();
          return (performance.now() - start) / 1e3;
        },
        output: () => out,
      };
    },
    close: () => release(),
  };
}
