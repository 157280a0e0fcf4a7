import { init } from 'kernel-attention';
import { compute } from './compute.js';

// initMs: how long init() took here (reported by the test, never asserted: a fallback must not wait on a timeout).
const started = performance.now();
init().then(
  (ka) => postMessage({ ...compute(ka), initMs: performance.now() - started }),
  (e) => postMessage({ error: String((e && e.stack) || e) }),
);
