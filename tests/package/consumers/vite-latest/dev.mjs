// vite's dev server on ../app with the README's vite.config.js (copied here by bundlers.test.mjs): prints its URL, then
// serves (cross-origin isolated, for the pthreads build in the Worker) until the test kills it.
import { createServer } from 'vite';
import config from './vite.config.js';

const server = await createServer({
  ...config,
  root: 'app',
  configFile: false,
  logLevel: 'error',
  server: {
    port: 0,
    host: '127.0.0.1',
    headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
  },
});
await server.listen();
console.log(server.resolvedUrls.local[0]);
