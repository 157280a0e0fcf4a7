// vite.config.js for an app that imports kernel-attention. `vite build` of an app that uses the package on the page
// only needs none of it; the dev server pre-bundles dependencies away from the package's .wasm files (exclude it),
// and an app whose own Web Worker imports the package (the pthreads build runs there) needs ES module workers.
export default {
  worker: { format: 'es' },
  optimizeDeps: { exclude: ['kernel-attention'] },
};
