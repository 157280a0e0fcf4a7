// The workloads whose bytes the determinism tests compare: across thread counts and builds in Chromium, across
// repeated calls, and between Chromium and Node (tests/browser/threads.test.mjs imports this module too). Sizes are
// big enough (at least 2^20 multiply-adds per thread) for the engine to start its threads.

/** Deterministic float32 inputs from a small linear congruential generator. */
function numbers(n, seed, lo = -1, hi = 1) {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + (hi - lo) * (s / 2 ** 32);
  });
}

const q = numbers(300 * 64, 1);
const k = numbers(257 * 64, 2);
const v = numbers(257 * 64, 3);
const x = numbers(2000, 4);
const y = numbers(2000, 5);
const at = numbers(1000, 6, -1.2, 1.2);
const few = numbers(20 * 16, 7); // 20 queries over 20,000 keys: the engine cuts the keys into shards
const many = numbers(20000 * 16, 8);
const manyValues = numbers(20000 * 2, 9);

export const WORKLOADS = {
  'softmax M=D=64': (ka) => ka.attention(q, k, v, { dim: 64 }),
  'softmax causal, 4 heads': (ka) => ka.attention(q, q, q, { dim: 64, heads: 4, causal: true }),
  '1-D gaussian': (ka) => ka.attention(at, x, y, { dim: 1, kernel: 'gaussian', bandwidth: 0.05 }),
  'few queries, sharded keys': (ka) => ka.attention(few, many, manyValues, { dim: 16 }),
  cvScore: (ka) => ka.cvScore(x.subarray(0, 1500), y.subarray(0, 1500), { dim: 1, bandwidth: 0.2 }),
  'selectBandwidth cv': (ka) => ka.selectBandwidth(x.subarray(0, 1500), y.subarray(0, 1500), { dim: 1 }).bandwidth,
  'local-linear fit with a band': (ka) => {
    const model = ka.kernelRegression(x.subarray(0, 1000), y.subarray(0, 1000), { dim: 1, bandwidth: 0.1 });
    const band = model.predictInterval(at.subarray(0, 200));
    return Float64Array.from([...band.mean, ...band.lower, ...band.upper]);
  },
};

/** The bytes of a result: a typed array's own bytes, a number as float64. */
export const bytes = (r) =>
  new Uint8Array(
    ArrayBuffer.isView(r) ? r.buffer.slice(r.byteOffset, r.byteOffset + r.byteLength) : Float64Array.of(r).buffer,
  );

/** Hex SHA-256 of a result's bytes (Web Crypto: the same in a Worker, a page and Node). */
export async function digest(r) {
  const hash = await crypto.subtle.digest('SHA-256', bytes(r));
  return Array.from(new Uint8Array(hash), (b) => b.toString(16).padStart(2, '0')).join('');
}
