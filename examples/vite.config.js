// vite.config.js for an app whose own Web Worker imports kernel-attention (the pthreads build runs there). An app
// that uses the package on the page only needs no configuration. Vite's dev server pre-bundles dependencies, which
// moves the package away from its .wasm and worker files: exclude it.
export default {
  worker: { format: 'es' },
  optimizeDeps: { exclude: ['kernel-attention'] },
};
