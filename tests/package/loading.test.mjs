// How the package finds and compiles its .wasm (web/src/loader.js, cpp/bindings/instantiate.pre.js), each case in a
// fresh process or page since a build loads once per realm: init({ locateFile | wasmPaths }) in Node, their bad
// values, setThreads and KERNEL_ATTENTION_THREADS, 'auto' in a worker_threads worker; in Chromium, a server that sends
// the .wasm with the wrong Content-Type, and the files served from a second origin (a CDN) with threads in a Worker.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { checkResults, launchChromium, resultsInChromium } from './support.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const index = new URL('../../web/src/index.js', import.meta.url).href;
const compute = new URL('consumers/app/compute.js', import.meta.url).href;
const TIMEOUT_MS = 60_000;

// Each script in its own file (a worker_threads worker of a -e script would inherit --input-type and fail).
async function nodeRun(code, env = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ka-loading-'));
  try {
    writeFileSync(join(dir, 'script.mjs'), code);
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [join(dir, 'script.mjs')], {
      encoding: 'utf8',
      timeout: TIMEOUT_MS,
      env: { ...process.env, ...env },
    });
    return { out: JSON.parse(stdout), stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
const node = async (code, env) => (await nodeRun(code, env)).out;

test(
  'Node: wasmPaths and locateFile say where the .wasm files are; a wrong place is a typed error',
  { timeout: TIMEOUT_MS },
  async () => {
    const dist = join(root, 'web/dist/');
    const out = await node(`
    import { init } from '${index}';
    import { compute } from '${compute}';
    const asked = [];
    const single = await init({ threads: 1, wasmPaths: ${JSON.stringify(dist)} });
    const threads = await init({ threads: 2, locateFile: (name) => { asked.push(name); return ${JSON.stringify(dist)} + name; } });
    console.log(JSON.stringify({ results: [compute(single), compute(threads)], asked }));`);
    checkResults(out.results, 'Node with wasmPaths / locateFile');
    assert.deepEqual(
      out.results.map((r) => r.build),
      ['single', 'threads'],
    );
    assert.ok(out.asked.includes('kernel_attention_threads.wasm'), `asked for ${out.asked}`);

    const missing = await node(`
    import { init } from '${index}';
    const error = await init({ threads: 1, wasmPaths: '/nowhere/' }).then(() => null, (e) => e);
    console.log(JSON.stringify({ name: error?.name, code: error?.code, message: error?.message }));`);
    assert.equal(missing.name, 'KernelAttentionError');
    assert.equal(missing.code, 'Unsupported');
    assert.match(missing.message, /nowhere\/kernel_attention\.wasm/);
  },
);

test(
  'Node: a .wasm that does not compile is one typed error naming the file, with nothing on stderr',
  { timeout: TIMEOUT_MS },
  async () => {
    // Each build pointed at a file that is not WebAssembly (its own glue): Emscripten's abort() would also print
    // "Aborted(CompileError: …)" on stderr, a second report of the same failure.
    const glue = join(root, 'web/dist/kernel_attention.mjs');
    const { out, stderr } = await nodeRun(`
    import { init } from '${index}';
    const errors = [];
    for (const threads of [1, 2]) {
      const error = await init({ threads, locateFile: () => ${JSON.stringify(glue)} }).then(() => null, (e) => e);
      errors.push({ name: error?.name, code: error?.code, message: error?.message });
    }
    console.log(JSON.stringify(errors));`);
    for (const error of out) {
      assert.equal(error.name, 'KernelAttentionError');
      assert.equal(error.code, 'Unsupported');
      assert.ok(error.message.includes(glue), error.message);
    }
    assert.equal(stderr, '', 'one report per failure: the rejection, nothing printed');
  },
);

test('Node: bad loading options are BadArgument naming the option', { timeout: TIMEOUT_MS }, async () => {
  const out = await node(`
    import { init } from '${index}';
    const cases = [{ locateFile: '/x/' }, { wasmPaths: 3 }, { wasmPaths: '/a/', locateFile: (n) => n }];
    const errors = [];
    for (const options of cases) errors.push(await init(options).then(() => null, (e) => [e.code, e.argument]));
    console.log(JSON.stringify(errors));`);
  assert.deepEqual(out, [
    ['BadArgument', 'options.locateFile'],
    ['BadArgument', 'options.wasmPaths'],
    ['BadArgument', 'options.wasmPaths'],
  ]);
});

test(
  'Node: setThreads and KERNEL_ATTENTION_THREADS set the default; auto is one thread in a worker_threads worker',
  { timeout: TIMEOUT_MS },
  async () => {
    const code = `
    import { Worker, isMainThread, parentPort } from 'node:worker_threads';
    import { init, setThreads } from '${index}';
    if (isMainThread) {
      const inWorkers = await Promise.all([0, 1, 2].map(() => new Promise((ok, fail) => {
        const w = new Worker(new URL(import.meta.url));
        w.once('message', (m) => { ok(m); w.terminate(); });
        w.once('error', fail);
      })));
      const main = await init();
      const old = setThreads(1);
      const after = await init();
      const bad = (() => { try { setThreads(0); } catch (e) { return [e.code, e.argument]; } })();
      console.log(JSON.stringify({ inWorkers, main: [main.build, main.threads], old, after: [after.build, after.threads], bad }));
    } else {
      const ka = await init();
      parentPort.postMessage([ka.build, ka.threads]);
    }`;
    const cores = Math.min(availableParallelism(), 16);
    const auto = await node(code, { KERNEL_ATTENTION_THREADS: '' });
    assert.deepEqual(
      auto.inWorkers,
      [
        ['single', 1],
        ['single', 1],
        ['single', 1],
      ],
      'a worker_threads worker gets one thread',
    );
    assert.deepEqual(auto.main, cores > 1 ? ['threads', cores] : ['single', 1]);
    assert.equal(auto.old, 'auto');
    assert.deepEqual(auto.after, ['single', 1]);
    assert.deepEqual(auto.bad, ['BadArgument', 'options.threads']);
    const two = await node(code, { KERNEL_ATTENTION_THREADS: '2' });
    assert.deepEqual(
      two.inWorkers,
      [
        ['threads', 2],
        ['threads', 2],
        ['threads', 2],
      ],
      'the variable holds in every worker',
    );
    assert.equal(two.old, 2);
    await assert.rejects(
      node(code, { KERNEL_ATTENTION_THREADS: 'many' }),
      /KERNEL_ATTENTION_THREADS must be 'auto' or an integer/,
    );
  },
);

// ---- Chromium ----

let browser;
const servers = [];

/**
 * A static server on the repository with extra headers and a chosen Content-Type for .wasm; `wasmAsPage` answers every
 * .wasm with an HTML page (200, text/html), as a dev server's fallback for a file it does not have.
 */
function serve({ wasmType = 'application/wasm', cors = false, wasmAsPage = false } = {}) {
  const server = http.createServer(async (req, res) => {
    const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = join(root, path);
    if (!file.startsWith(root) || path.includes('..')) return res.writeHead(403).end();
    if (wasmAsPage && path.endsWith('.wasm')) {
      res.writeHead(200, { 'Content-Type': 'text/html', 'Cross-Origin-Resource-Policy': 'same-origin' });
      return res.end('<!doctype html><html><body>an app page</body></html>');
    }
    try {
      const body = await readFile(file);
      const type = path.endsWith('.wasm') ? wasmType : path.endsWith('.html') ? 'text/html' : 'text/javascript';
      res.writeHead(200, {
        'Content-Type': type,
        'Cross-Origin-Opener-Policy': 'same-origin',
        'Cross-Origin-Embedder-Policy': 'require-corp',
        'Cross-Origin-Resource-Policy': cors ? 'cross-origin' : 'same-origin',
        ...(cors ? { 'Access-Control-Allow-Origin': '*' } : {}),
      });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  servers.push(server);
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(`http://127.0.0.1:${server.address().port}`)));
}

before(async () => {
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  for (const s of servers) s.close();
});

async function pageResults(url) {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || (m.type() === 'warning' && /Aborted\(/.test(m.text())))
      problems.push(`console.${m.type()}: ${m.text()}`);
  });
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.results, null, { timeout: TIMEOUT_MS });
    const results = await page.evaluate(() => window.results);
    assert.deepEqual(problems, []);
    return results;
  } finally {
    await page.close();
  }
}

test(
  'Chromium: a .wasm served as application/octet-stream still loads (compiled from its bytes)',
  { timeout: TIMEOUT_MS },
  async () => {
    const origin = await serve({ wasmType: 'application/octet-stream' });
    const results = await pageResults(`${origin}/tests/package/loading/page.html`);
    checkResults(results, 'wrong MIME type');
    assert.equal(results[0].build, 'single');
  },
);

test(
  'Chromium: the files from a second origin (locateFile), threads in a Worker',
  { timeout: TIMEOUT_MS },
  async () => {
    const cdn = await serve({ cors: true });
    const origin = await serve();
    const results = await pageResults(
      `${origin}/tests/package/loading/cdn.html?cdn=${encodeURIComponent(`${cdn}/web/dist/`)}`,
    );
    checkResults(results, 'CDN');
    assert.equal(results[0].build, 'threads');
    assert.ok(
      results[0].fetched.every((url) => url.startsWith(cdn)),
      `fetched ${results[0].fetched}`,
    );
  },
);

test(
  'Chromium: a .wasm URL that answers an HTML page is one error naming the URL and the fix (no "Aborted(…)" warning)',
  { timeout: TIMEOUT_MS },
  async () => {
    const origin = await serve({ wasmAsPage: true });
    const [result] = await pageResults(`${origin}/tests/package/loading/page.html`);
    assert.ok(result.error, JSON.stringify(result));
    assert.ok(result.error.includes(`${origin}/web/dist/kernel_attention.wasm`), result.error);
    assert.match(result.error, /is not a WebAssembly file \(it starts with "<!doctype html>/);
    assert.match(result.error, /wasmPaths/);
    assert.doesNotMatch(result.error, /magic word/);
  },
);
