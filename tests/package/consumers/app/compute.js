// The same computation in every consumer app: a 1-D Gaussian kernel regression and a two-head softmax attention on
// inputs made here, which bundlers.test.mjs recomputes with float64 loops.
export function compute(ka) {
  const x = Array.from({ length: 40 }, (_, i) => i / 8);
  const y = x.map((t, i) => Math.sin(t) + 0.05 * Math.cos(11 * i));
  const at = [0.3, 1.7, 2.9, 4.4];
  const q = Array.from({ length: 3 * 4 }, (_, i) => Math.sin(0.7 * i));
  const k = Array.from({ length: 5 * 4 }, (_, i) => Math.cos(0.3 * i));
  const v = Array.from({ length: 5 * 4 }, (_, i) => i / 10 - 1);
  return {
    build: ka.build,
    threads: ka.threads,
    regression: { x, y, at, fit: Array.from(ka.attention(at, x, y, { dim: 1, kernel: 'gaussian', bandwidth: 0.3 })) },
    attention: { q, k, v, out: Array.from(ka.attention(q, k, v, { dim: 4, heads: 2 })) },
  };
}
