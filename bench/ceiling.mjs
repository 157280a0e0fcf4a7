// The machine's single-core SIMD ceilings: the probes of bench/ceiling_kernels.h as WebAssembly (build/bench/wasm,
// built by bench/build.sh with the core's wasm flags) and inside each native driver. Returns
// { wasm: { dot, madd }, 'sse4.1': {…}, avx2: {…} } in GFLOP/s, each the median of 5 measurements after a warm-up.
// The run measures them before, between and after its cases and keeps the best figure of each: a ceiling is the best
// the machine did, and this VM's speed drifts by tens of per cent from one minute to the next.

import { Worker } from 'node:worker_threads';
import { useAll, useOne } from './affinity.mjs';

// Calls per measurement: about 0.05 s each at the speeds measured here.
const calls = { dot: 100000, madd: 10000 };

async function median5(gflops, count) {
  await gflops(count); // warm-up: V8 tiers the kernel up during this one
  const g = [];
  for (let n = 0; n < 5; n++) g.push(await gflops(count));
  return g.sort((a, b) => a - b)[2];
}

let wasm; // the probe module, instantiated once
const wasmProbe = () => (wasm ??= import('../build/bench/wasm/ceiling.mjs').then(({ default: create }) => create()));

const measure = async (probe) => ({
  dot: await median5((n) => probe('dot', n), calls.dot),
  madd: await median5((n) => probe('madd', n), calls.madd),
});

// The wasm mul+add probe on `threads` worker threads at once, each with its own instance, started together: the
// sum of their medians. Against `threads` × the one-thread figure it says whether this machine's cores share their
// floating-point units (as SMT siblings do), which bounds what threads can gain on multiply-add-bound work.
const together = `
  import { workerData, parentPort } from 'node:worker_threads';
  const { default: createCeiling } = await import(workerData.url);
  const m = await createCeiling();
  m._ceiling_madd(workerData.calls);  // warm-up: V8 tiers the kernel up
  const flags = new Int32Array(workerData.flags);
  Atomics.add(flags, 0, 1);
  Atomics.wait(flags, 1, 0);  // until every worker is ready
  const g = [];
  for (let n = 0; n < 5; n++) g.push(m._ceiling_madd(workerData.calls));
  parentPort.postMessage(g.sort((a, b) => a - b)[2]);
`;

async function maddTogether(threads) {
  const flags = new SharedArrayBuffer(8);
  const url = new URL('../build/bench/wasm/ceiling.mjs', import.meta.url).href;
  const workers = Array.from(
    { length: threads },
    () =>
      new Worker(together, {
        eval: true,
        type: 'module',
        workerData: { url, calls: calls.madd, flags },
      }),
  );
  const results = workers.map(
    (w) =>
      new Promise((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      }),
  );
  const view = new Int32Array(flags);
  while (Atomics.load(view, 0) < threads) await new Promise((resolve) => setTimeout(resolve, 5));
  Atomics.store(view, 1, 1);
  Atomics.notify(view, 1);
  const gflops = await Promise.all(results);
  await Promise.all(workers.map((w) => w.terminate()));
  return gflops.reduce((a, b) => a + b, 0);
}

/**
 * natives: native contenders; `ceiling` names their flavour and probe(name, calls) runs a probe in their binary.
 * The one-thread probes run pinned to affinity.mjs's vCPU, as the one-thread cells do; returns with every vCPU allowed.
 * With `earlier` (a previous result), each figure is the larger of the earlier and the new one.
 */
export async function measureCeilings(natives, earlier = {}) {
  const m = await wasmProbe();
  useOne();
  const result = { wasm: await measure((name, n) => (name === 'dot' ? m._ceiling_dot(n) : m._ceiling_madd(n))) };
  for (const who of natives) result[who.ceiling] = await measure((name, n) => who.probe(name, n));
  useAll(); // before the workers start: a new thread takes the affinity of the one that creates it
  result.wasm.madd2 = await maddTogether(2);
  for (const [key, now] of Object.entries(result)) {
    const before = earlier[key] ?? now;
    result[key] = Object.fromEntries(
      Object.keys(now).map((probe) => [probe, Math.max(before[probe] ?? 0, now[probe])]),
    );
  }
  return result;
}
