// Runs in a module Worker: on a cross-origin-isolated page the pthreads build must give the single-thread build's
// bytes for 2 and 4 threads; elsewhere threads > 1 must be refused and the default must be one thread. Sizes are
// big enough (at least 2^20 multiply-adds per thread) for the engine to start the threads.
import { init } from '/web/src/index.js';

/** Deterministic float32 inputs from a small linear congruential generator. */
function numbers(n, seed, lo = -1, hi = 1) {
  let s = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + (hi - lo) * (s / 2 ** 32);
  });
}

const bytes = (r) => new Uint8Array(ArrayBuffer.isView(r) ? r.buffer : Float64Array.of(r).buffer);
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

const q = numbers(300 * 64, 1);
const k = numbers(257 * 64, 2);
const v = numbers(257 * 64, 3);
const x = numbers(2000, 4);
const y = numbers(2000, 5);
const at = numbers(1000, 6, -1.2, 1.2);
const WORKLOADS = {
  'softmax M=D=64': (ka) => ka.attention(q, k, v, { dim: 64 }),
  'softmax causal, 4 heads': (ka) => ka.attention(q, q, q, { dim: 64, heads: 4, causal: true }),
  '1-D gaussian': (ka) => ka.attention(at, x, y, { dim: 1, kernel: 'gaussian', bandwidth: 0.05 }),
  cvScore: (ka) => ka.cvScore(x.subarray(0, 1500), y.subarray(0, 1500), { dim: 1, bandwidth: 0.2 }),
  'selectBandwidth cv': (ka) => ka.selectBandwidth(x.subarray(0, 1500), y.subarray(0, 1500), { dim: 1 }).bandwidth,
};

async function report() {
  const auto = await init();
  const out = { worker: { build: auto.build, threads: auto.threads, isolated: crossOriginIsolated,
    cores: navigator.hardwareConcurrency } };
  if (!crossOriginIsolated) {
    const error = await init({ threads: 2 }).then(() => null, (e) => e);
    out.refused = error && { code: error.code, argument: error.argument, message: error.message };
    return out;
  }
  const apis = await Promise.all([1, 2, 4].map((threads) => init({ threads })));
  out.builds = apis.map((ka) => [ka.build, ka.threads]);
  out.workloads = {};
  for (const [name, run] of Object.entries(WORKLOADS)) {
    const [one, ...more] = apis.map((ka) => bytes(run(ka)));
    out.workloads[name] = { length: one.length, same: more.map((b) => same(one, b)) };
  }
  return out;
}

report().then((out) => postMessage(out), (err) => postMessage({ error: String(err && err.stack || err) }));
