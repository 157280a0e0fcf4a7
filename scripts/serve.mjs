// Static file server for the demo, the examples and the browser tests.
import http from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url)).replace(/[\\/]$/, '');

const contentTypes = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.csv': 'text/csv; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

// Cross-origin isolation gives a fine-grained performance.now() and lets a threaded build use SharedArrayBuffer.
// 'no-cache' lets a browser keep what it fetched and ask again each time: an unchanged file costs a 304 (its ETag
// is its size and modification time), a rebuilt one comes back new, so a warm visit loads from the cache.
const commonHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-cache',
};

/**
 * The demo's Content-Security-Policy: scripts and workers from this origin only, WebAssembly compiled without eval,
 * no inline script or style, nothing from elsewhere. A worker takes its policy from its own script's response, so the
 * policy goes on everything the demo loads (web/; node_modules/ too, should a page load from there), not only on its
 * page.
 * Examples and test pages (examples/, tests/) keep their inline scripts and get none unless a test asks for one.
 */
export const DEMO_CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";
// By the resolved path, so that no spelling of a URL (dot segments, escapes) reaches the demo's files without it.
const withCsp = (relative) => ['web', 'node_modules'].includes(relative.split(path.sep)[0]);

function send(res, status, body, headers = {}) {
  res.writeHead(status, {
    ...commonHeaders,
    ...res.policy,
    ...res.extraHeaders,
    'Content-Type': 'text/plain; charset=utf-8',
    ...headers,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

async function handle(req, res) {
  const { root } = res;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return send(res, 405, 'Method Not Allowed\n', { Allow: 'GET, HEAD' });
  }
  let pathname;
  try {
    pathname = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
  } catch {
    return send(res, 400, 'Bad Request\n');
  }
  if (pathname === '/') return send(res, 302, 'Found\n', { Location: '/web/demo/' });

  const file = path.resolve(root, '.' + pathname);
  if (pathname.includes('\0') || (file !== root && !file.startsWith(root + path.sep))) {
    return send(res, 403, 'Forbidden\n');
  }
  if (withCsp(path.relative(root, file))) res.policy = { 'Content-Security-Policy': DEMO_CSP };
  // Keeps .git and other dot-folders of the checkout private.
  if (
    path
      .relative(root, file)
      .split(path.sep)
      .some((part) => part.startsWith('.'))
  ) {
    return send(res, 404, 'Not Found\n');
  }

  let target = file;
  try {
    if ((await stat(target)).isDirectory()) {
      // Relative URLs inside an index page only resolve against a trailing slash.
      if (!pathname.endsWith('/')) {
        const { search } = new URL(req.url, 'http://localhost');
        return send(res, 301, 'Moved Permanently\n', { Location: encodeURI(pathname) + '/' + search });
      }
      target = path.join(target, 'index.html');
    }
    const info = await stat(target);
    const etag = `"${info.size.toString(36)}-${Math.floor(info.mtimeMs).toString(36)}"`;
    const type = contentTypes[path.extname(target).toLowerCase()] ?? 'application/octet-stream';
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { ...commonHeaders, ...res.policy, ...res.extraHeaders, ETag: etag });
      return res.end();
    }
    const body = await readFile(target);
    res.writeHead(200, {
      ...commonHeaders,
      ...res.policy,
      ...res.extraHeaders,
      'Content-Type': type,
      'Content-Length': body.length,
      ETag: etag,
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR' || err.code === 'EISDIR') return send(res, 404, 'Not Found\n');
    send(res, 500, 'Internal Server Error\n');
  }
}

function listen(server, port, host) {
  return new Promise((resolve, reject) => {
    const onError = (err) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}

/**
 * Serves `root` (default: the repository root); resolves once listening. `port: 0` picks a free port. `headers` are
 * added to every response (e.g. a Content-Security-Policy for the strict-CSP test).
 */
export async function startServer({ port = 0, host = '127.0.0.1', headers = {}, root = repoRoot } = {}) {
  root = path.resolve(root);
  const server = http.createServer((req, res) => {
    res.extraHeaders = headers;
    res.root = root;
    handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'Internal Server Error\n');
      else res.destroy();
    });
  });
  await listen(server, port, host);
  const actualPort = server.address().port;
  const hostInUrl = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${hostInUrl}:${actualPort}`,
    close() {
      return new Promise((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // A browser's keep-alive connections would otherwise hold close() open.
        server.closeAllConnections();
      });
    },
  };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const wanted = Number(process.env.PORT ?? 8080);
  let served;
  try {
    served = await startServer({ port: wanted });
  } catch (err) {
    if (err.code !== 'EADDRINUSE') throw err;
    served = await startServer({ port: 0 });
  }
  console.log(`kernel-attention demo: ${served.url}/web/demo/`);
  const stop = () => served.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
