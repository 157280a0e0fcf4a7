// A module Web Worker that fits curves off the page's main thread: `new Worker(url, { type: 'module' })`.
// In a cross-origin-isolated page, init() here picks the pthreads build (threads may block in a Worker).
import { init } from '../web/src/index.js';

const ready = init();

self.onmessage = async ({ data: { id, x, y, at, bandwidth } }) => {
  try {
    const ka = await ready;
    const fit = ka.attention(at, x, y, { dim: 1, kernel: 'gaussian', bandwidth });
    self.postMessage({ id, fit, build: ka.build }, [fit.buffer]);  // the result's buffer moves, not copied
  } catch (error) {
    self.postMessage({ id, error: { code: error.code, message: error.message } });
  }
};
