// Kernel regression in a Node worker_threads worker, so the main thread stays free:
// `node node_modules/kernel-attention/examples/node-worker.mjs`.
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { init } from 'kernel-attention';

if (isMainThread) {
  const x = Float64Array.from({ length: 1000 }, (_, i) => i / 100);
  const y = x.map((t) => Math.cos(t));
  const worker = new Worker(new URL(import.meta.url), { workerData: { x, y, at: [1, 2, 3] } });
  worker.once('message', ({ at, fit }) => {
    console.log('fit:', Array.from(fit, (f) => f.toFixed(3)).join(' '));
    console.log('cos:', at.map((t) => Math.cos(t).toFixed(3)).join(' '));
  });
  worker.once('error', (error) => { console.error(error.message); process.exitCode = 1; });
} else {
  const ka = await init();
  const { x, y, at } = workerData;
  const fit = ka.attention(at, x, y, { dim: 1, kernel: 'gaussian', bandwidth: 0.05 });
  parentPort.postMessage({ at, fit }, [fit.buffer]);
}
