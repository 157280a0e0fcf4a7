// vite.config.js for an app that imports kernel-attention. The pthreads build starts its workers with
// `new Worker(new URL('….worker.js', import.meta.url))`, which Vite bundles as a worker too; that worker loads the
// module with a dynamic import(), which Vite's default worker format ('iife') cannot hold: use ES module workers.
export default {
  worker: { format: 'es' },
};
