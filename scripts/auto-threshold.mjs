// The measurements behind attention()'s method 'auto' (docs/approximations.md, "Choosing a method"): exact against
// 'sparse' over bandwidths, kernels and dimensions, on keys and queries uniform on [0, 1]^dim, one thread.
// `node scripts/auto-threshold.mjs` after `npm run build:wasm`; prints one line per case with the share of the keys'
// bounding box within the kernel's reach (what 'auto' computes) and the share of pairs 'sparse' visited.
import { init } from '../web/src/index.js';

const ka = await init({ threads: 1 });
let seed = 3;
const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
const time = (fn) => {
  const start = performance.now();
  fn();
  return performance.now() - start;
};
// Reach in bandwidths at the weight ratio 1e-3 (approximate.js AUTO_REACH; Cauchy's, which 'auto' never picks).
const REACH = {
  gaussian: Math.sqrt(2 * Math.log(1e3)),
  laplacian: Math.log(1e3),
  epanechnikov: 1,
  cauchy: Math.sqrt(1e3 - 1),
};
for (const [dim, I, J] of [
  [1, 4000, 50000],
  [2, 4000, 50000],
  [3, 2000, 50000],
]) {
  const x = Float32Array.from({ length: J * dim }, random);
  const q = Float32Array.from({ length: I * dim }, random);
  const y = Float32Array.from({ length: J }, random);
  for (const kernel of Object.keys(REACH)) {
    for (const h of [0.003, 0.01, 0.03, 0.1, 0.3]) {
      const options = { dim, kernel, bandwidth: h, method: 'exact' };
      const share = Math.min(1, 2 * REACH[kernel] * h) ** dim;
      ka.attention(q.subarray(0, 64 * dim), x, y, options); // warm-up
      const exact = time(() => ka.attention(q, x, y, options));
      let info;
      const sparse = time(() => (info = ka.attentionWithInfo(q, x, y, { ...options, method: 'sparse' })));
      console.log(
        `dim ${dim}, ${kernel}, h ${h}: share in reach ${share.toFixed(3)}, pairs visited ${(info.keptKeys / (I * J)).toFixed(3)}, ` +
          `exact ${exact.toFixed(0)} ms, sparse ${sparse.toFixed(0)} ms, exact ÷ sparse ${(exact / sparse).toFixed(2)}`,
      );
    }
  }
}
