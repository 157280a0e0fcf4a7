// A classic Worker's script, bundled by esbuild in its default format (IIFE): init() picks the single-thread build
// ('auto' falls back from the pthreads build, whose workers need an ES module), and asking for threads is refused
// with a message naming --format=esm.
import { init } from 'kernel-attention';
import { compute } from './app/compute.js';

init().then(
  async (ka) => {
    const refusal = await init({ threads: 2 }).then(
      () => null,
      (e) => e.message,
    );
    postMessage({ ...compute(ka), refusal });
  },
  (e) => postMessage({ error: String((e && e.stack) || e) }),
);
