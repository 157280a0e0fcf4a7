// A page that runs the package in a module Worker (the page is cross-origin isolated): the pthreads build there.
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
worker.onmessage = (e) => {
  window.results = [e.data];
};
worker.onerror = (e) => {
  window.results = [{ error: e.message || 'worker failed to start' }];
};
