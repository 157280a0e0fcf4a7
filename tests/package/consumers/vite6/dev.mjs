// vite's dev server on ../app, with the README's vite.config.js when bundlers.test.mjs has copied it here (without it,
// Vite's defaults): prints its URL, then serves (cross-origin isolated, for the pthreads build in the Worker) until
// the test kills it.
import { existsSync } from 'node:fs';
import { createServer } from 'vite';

const config = existsSync('vite.config.js') ? (await import('./vite.config.js')).default : {};
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
