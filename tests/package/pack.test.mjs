// Proof it installs: `npm pack`, install the tarball with no network into a scratch project in a temporary directory,
// then use it as users will: Node ESM, CommonJS, a plain HTML page with an import map, a module Web Worker in
// Chromium and a Node worker_threads worker, each computing a known result checked against a float64 loop here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../scripts/serve.mjs';
import { assertClose, checkResults, launchChromium, referenceRegression, run } from './support.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TIMEOUT_MS = 60_000;

// What the tarball must hold besides web/src and web/types: both WebAssembly builds, and nothing else of web/dist.
const DIST = [
  'web/dist/kernel_attention.mjs',
  'web/dist/kernel_attention.wasm',
  'web/dist/kernel_attention_threads.mjs',
  'web/dist/kernel_attention_threads.wasm',
  'web/dist/kernel_attention_threads.worker.js',
  'web/dist/node/kernel_attention_threads.js',
  'web/dist/node/kernel_attention_threads.worker.js',
  'web/dist/node/package.json',
];
const SHIPPABLE = [
  /^package\.json$/,
  /^README\.md$/,
  /^CHANGELOG\.md$/,
  /^LICENSE$/,
  /^docs\/[\w-]+\.md$/,
  /^web\/src\/[\w-]+\.c?js$/,
  /^web\/types\/[\w-]+\.d\.c?ts$/,
  /^cli\/(commands\/)?[\w-]+\.mjs$/,
  // The README's examples and their data, so that its commands run from an installed copy.
  /^examples\/[\w-]+(\.config)?\.(mjs|cjs|js|html|sh|csv)$/,
];

// The same computation as the bundler matrix's apps (tests/package/consumers/app/compute.js), pasted into each
// consumer here as source, so checkResults recomputes it with the same float64 loops.
const COMPUTE = readFileSync(new URL('./consumers/app/compute.js', import.meta.url), 'utf8').replace(
  'export function compute',
  'function compute',
);

const FILES = {
  'package.json': JSON.stringify({ name: 'scratch', version: '1.0.0', private: true, type: 'module' }),
  'esm.mjs': `import { init, KernelAttentionError } from 'kernel-attention';
${COMPUTE}
const error = await init({ threads: 0 }).then(() => null, (e) => e);
const results = [compute(await init({ threads: 1 })), compute(await init())];
console.log(JSON.stringify({ results, typed: error instanceof KernelAttentionError, code: error?.code }));
`,
  'cjs.cjs': `const { init, setThreads } = require('kernel-attention');
${COMPUTE}
(async () => {
  const old = setThreads(1);  // not awaited: the init() below must still see it
  const ka = await init();
  const threads = [await old, await setThreads('auto'), ka.threads];
  const badThreads = await setThreads(0).then(() => null, (e) => e.code);
  const error = await init({ threads: 0 }).then(() => null, (e) => e);
  const { KernelAttentionError } = await import('kernel-attention');
  console.log(JSON.stringify({ results: [compute(ka)], threads, badThreads, typed: error instanceof KernelAttentionError, code: error?.code, name: error?.name }));
})();
`,
  'thread.mjs': `import { parentPort } from 'node:worker_threads';
import { init } from 'kernel-attention';
${COMPUTE}
parentPort.postMessage(compute(await init()));
`,
  'node-worker.mjs': `import { Worker } from 'node:worker_threads';
const worker = new Worker(new URL('./thread.mjs', import.meta.url));
worker.once('message', (result) => { console.log(JSON.stringify({ results: [result] })); worker.terminate(); });
worker.once('error', (e) => { console.error(e); process.exit(1); });
`,
  'index.html': `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>scratch</title><link rel="icon" href="data:,">
<script type="importmap">{ "imports": { "kernel-attention": "./node_modules/kernel-attention/web/src/index.js" } }</script>
</head>
<body>
<script type="module">
import { init } from 'kernel-attention';
${COMPUTE}
window.results = [compute(await init())];
const worker = new Worker('./web-worker.mjs', { type: 'module' });
worker.onmessage = (e) => { window.workerResults = [e.data]; };
worker.onerror = (e) => { window.workerResults = [{ error: e.message || 'worker failed to start' }]; };
</script>
</body>
</html>
`,
  // Import maps do not reach workers: a worker imports the package by URL.
  'web-worker.mjs': `import { init } from './node_modules/kernel-attention/web/src/index.js';
${COMPUTE}
init().then((ka) => postMessage(compute(ka)), (e) => postMessage({ error: String(e && e.stack || e) }));
`,
  // A TypeScript consumer of the installed package's types, resolved through "exports" as Node would.
  'consumer.ts': `import { init, KernelAttentionError, type KernelAttention } from 'kernel-attention';
const ka: KernelAttention = await init({ threads: 1 });
const out: Float64Array = ka.attention([0], [0], [1], { dim: 1 }); // numbers in, double out
const e: KernelAttentionError | null = null;
// @ts-expect-error: dim is required
ka.attention([0], [0], [1], {});
export { out, e };
`,
  // A TypeScript consumer compiled to CommonJS: require() resolves through the "require" condition to index.d.cts.
  'consumer-cjs.cts': `import ka = require('kernel-attention');
import type { KernelAttention } from 'kernel-attention';
export async function main(): Promise<Float64Array> {
  const old: 'auto' | number = await ka.setThreads(1);
  void old;
  const api: KernelAttention = await ka.init({ threads: 1 });
  // @ts-expect-error: the CommonJS entry has no error class at run time
  void ka.KernelAttentionError;
  // Numbers as values: the output is a Float64Array (a Float32Array only for Float32Array values).
  return api.attentionAsync([0], [0], [1], { dim: 1, onProgress: ({ done, total }) => done / total });
}
`,
  // A Vite app: the package by its bare name on the page and in a module Worker that Vite bundles too.
  'vite-app/index.html': `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>vite</title><link rel="icon" href="data:,"></head>
<body><script type="module" src="./main.js"></script></body></html>
`,
  'vite-app/main.js': `import { init } from 'kernel-attention';
${COMPUTE}
init().then((ka) => { window.results = [compute(ka)]; }, (e) => { window.results = [{ error: String(e) }]; });
const worker = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
worker.onmessage = (e) => { window.workerResults = [e.data]; };
worker.onerror = (e) => { window.workerResults = [{ error: e.message || 'worker failed to start' }]; };
`,
  'vite-app/worker.js': `import { init } from 'kernel-attention';
${COMPUTE}
init().then((ka) => postMessage(compute(ka)), (e) => postMessage({ error: String(e && e.stack || e) }));
`,
};

// ---- the scratch project ----

let dir;
let app;
let packed;

before(async () => {
  for (const file of DIST) {
    if (!existsSync(root + file)) throw new Error(`${file} is missing: run scripts/build.sh package first`);
  }
  dir = mkdtempSync(join(tmpdir(), 'ka-pack-'));
  // The web/dist/ that is there (checked above): prepack would otherwise rebuild it (tests/package/clone.test.mjs
  // packs through prepack from a clean clone).
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: root,
    env: { ...process.env, KA_PREPACK_USE_DIST: '1' },
  });
  packed = JSON.parse(stdout.slice(stdout.indexOf('[')))[0];
  app = join(dir, 'app');
  mkdirSync(join(app, 'vite-app'), { recursive: true });
  for (const [name, text] of Object.entries(FILES)) writeFileSync(join(app, name), text);
  // --offline with an empty cache: anything that would need the registry fails instead of being fetched.
  await run(
    'npm',
    [
      'install',
      '--offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--cache',
      join(dir, 'cache'),
      join(dir, packed.filename),
    ],
    { cwd: app },
  );
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const node = async (file) =>
  JSON.parse((await run(process.execPath, [file], { cwd: app, timeout: TIMEOUT_MS })).stdout);

test('the tarball holds what the package needs and nothing else', (t) => {
  const files = packed.files.map((f) => f.path).sort();
  for (const f of files)
    assert.ok(SHIPPABLE.some((re) => re.test(f)) || DIST.includes(f), `${f} should not be in the package`);
  for (const f of [
    ...DIST,
    'package.json',
    'CHANGELOG.md',
    'docs/package.md',
    'web/src/index.js',
    'web/src/index.cjs',
    'web/types/index.d.ts',
    'web/types/index.d.cts',
    'cli/kernel-attention.mjs',
    'cli/commands/fit.mjs',
    'examples/load.csv',
    'examples/node.mjs',
  ]) {
    assert.ok(files.includes(f), `${f} is missing from the package`);
  }
  // Every relative import of a shipped module is shipped too.
  for (const f of files.filter((name) => /\.(c?js|mjs)$/.test(name) && name.startsWith('web/src/'))) {
    const text = readFileSync(join(app, 'node_modules/kernel-attention', f), 'utf8');
    for (const [, spec] of text.matchAll(/['"](\.{1,2}\/[^'"]+\.(?:c?js|mjs))['"]/g)) {
      const target = new URL(spec, `file:///${f}`).pathname.slice(1);
      assert.ok(files.includes(target), `${f} imports ${spec}, which is not in the package`);
    }
  }
  const pkg = JSON.parse(readFileSync(join(app, 'node_modules/kernel-attention/package.json'), 'utf8'));
  for (const [condition, target] of Object.entries(pkg.exports['.'])) {
    assert.equal(
      Object.keys(target)[0],
      'types',
      `"types" must come first in the "${condition}" condition of "exports"`,
    );
    assert.ok(
      files.includes(target.types.slice(2)) && files.includes(target.default.slice(2)),
      `"${condition}" points at files that ship`,
    );
  }
  assert.match(pkg.exports['.'].require.types, /\.d\.cts$/, 'CommonJS consumers get CommonJS types');
  assert.deepEqual(Object.keys(pkg.dependencies ?? {}), [], 'no runtime dependencies');
  // A budget, so that a stray build output or test file cannot slip in unnoticed (0.94 MB and 3.69 MB in 0.1.0 on 2026-12-03).
  assert.ok(packed.size < 1_200_000, `the tarball is ${packed.size} bytes`);
  assert.ok(packed.unpackedSize < 4_500_000, `the package unpacks to ${packed.unpackedSize} bytes`);
  t.diagnostic(`tarball ${packed.size} B (gzip), unpacked ${packed.unpackedSize} B, ${files.length} files`);
  if (process.env.KA_UPDATE_DOCS === '1') writeTarballRow(packed);
});

/** KA_UPDATE_DOCS=1: docs/package.md's tarball row in its Sizes table, from what npm pack reported. */
function writeTarballRow({ size, unpackedSize, entryCount }) {
  const file = join(root, 'docs/package.md');
  const text = readFileSync(file, 'utf8');
  const row = /^\| tarball \(`npm pack`, \d+ files\) \| [\d.]+ MB unpacked \| \d+ kB \|$/m;
  assert.match(text, row, 'docs/package.md lacks the tarball row');
  const mb = (unpackedSize / 1e6).toFixed(2);
  writeFileSync(
    file,
    text.replace(
      row,
      `| tarball (\`npm pack\`, ${entryCount} files) | ${mb} MB unpacked | ${Math.round(size / 1000)} kB |`,
    ),
  );
}

test('Node ESM: import, both builds, typed errors', { timeout: TIMEOUT_MS }, async () => {
  const out = await node('esm.mjs');
  checkResults(out.results, 'ESM');
  assert.deepEqual(
    out.results.map((r) => r.build),
    ['single', availableParallelism() >= 2 ? 'threads' : 'single'],
  );
  assert.equal(out.typed, true);
  assert.equal(out.code, 'BadArgument');
});

test(
  'CommonJS: require() gives init() returning a Promise, and an asynchronous setThreads()',
  { timeout: TIMEOUT_MS },
  async () => {
    const out = await node('cjs.cjs');
    checkResults(out.results, 'CommonJS');
    assert.deepEqual(out.threads, ['auto', 1, 1]);
    assert.equal(out.badThreads, 'BadArgument');
    assert.deepEqual([out.typed, out.code, out.name], [true, 'BadArgument', 'KernelAttentionError']);
  },
);

test('Node worker_threads worker', { timeout: TIMEOUT_MS }, async () => {
  checkResults((await node('node-worker.mjs')).results, 'worker_threads');
});

test(
  'TypeScript (strict, nodenext) finds the types through "exports" of the installed package',
  { timeout: TIMEOUT_MS },
  async () => {
    await run(
      process.execPath,
      [
        join(root, 'node_modules/typescript/bin/tsc'),
        '--noEmit',
        '--strict',
        '--target',
        'es2022',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--lib',
        'es2022,dom',
        'consumer.ts',
        'consumer-cjs.cts',
      ],
      { cwd: app, timeout: TIMEOUT_MS },
    );
  },
);

test('the kernel-attention command of the installed package (node_modules/.bin)', { timeout: TIMEOUT_MS }, async () => {
  const x = Array.from({ length: 40 }, (_, i) => i / 8);
  const y = x.map((t, i) => Math.sin(t) + 0.05 * Math.cos(11 * i));
  const at = [0.3, 1.7, 2.9, 4.4];
  writeFileSync(join(app, 'data.csv'), 'x,y\n' + x.map((t, i) => `${t},${y[i]}`).join('\n') + '\n');
  writeFileSync(join(app, 'at.csv'), 'x\n' + at.join('\n') + '\n');
  const { stdout } = await run(
    join(app, 'node_modules/.bin/kernel-attention'),
    [
      'predict',
      'data.csv',
      '--x',
      'x',
      '--y',
      'y',
      '--estimator',
      'nadaraya-watson',
      '--bandwidth',
      '0.3',
      '--at',
      'at.csv',
      '--format',
      'json',
    ],
    { cwd: app, timeout: TIMEOUT_MS },
  );
  assertClose(
    JSON.parse(stdout).map((r) => r.y),
    referenceRegression({ x, y, at }, 0.3),
    1e-5,
    'CLI predict',
  );
});

/** Opens `path` under `root` in Chromium; resolves to the results of the page and of its module Worker. */
async function resultsInChromium(root, path) {
  const server = await startServer({ port: 0, root });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const problems = [];
    // A failed module import is no page error, only a hang: any of these ends the wait at once.
    let fail;
    const failed = new Promise((_, reject) => {
      fail = reject;
    });
    failed.catch(() => {});
    const report = (problem) => {
      problems.push(problem.slice(0, 1500));
      fail(new Error(problem.slice(0, 1500)));
    };
    page.on('pageerror', (e) => report(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') report(`console.error: ${m.text()}`);
    });
    page.on('response', (r) => {
      if (r.status() >= 400) report(`HTTP ${r.status()} ${r.url()}`);
    });
    page.on('requestfailed', (r) => report(`request failed: ${r.url()}`));
    try {
      await Promise.race([page.goto(server.url + path), failed]);
      await Promise.race([
        page.waitForFunction(() => window.results && window.workerResults, null, { timeout: TIMEOUT_MS }),
        failed,
      ]);
    } catch (e) {
      throw new Error(`${path} did not finish: ${problems.join('\n') || e.message}`);
    }
    const out = await page.evaluate(() => ({
      results: window.results,
      workerResults: window.workerResults,
      cores: navigator.hardwareConcurrency,
    }));
    assert.deepEqual(problems, []);
    return out;
  } finally {
    await browser.close();
    await server.close();
  }
}

function checkBrowser({ results, workerResults, cores }, what) {
  checkResults(results, `${what} page`);
  checkResults(workerResults, `${what} module Worker`);
  assert.equal(results[0].build, 'single', "a page's main thread uses the single-thread build");
  // The server sends COOP/COEP, so a Worker on a machine with 2+ cores runs the pthreads build's files.
  if (cores >= 2) assert.equal(workerResults[0].build, 'threads', `${what} module Worker`);
}

test('Chromium: a plain page with an import map, and a module Web Worker', { timeout: 2 * TIMEOUT_MS }, async () => {
  checkBrowser(await resultsInChromium(app, '/index.html'), 'import map');
});

test(
  'Vite: an app importing the package builds offline and runs in Chromium, page and Worker',
  { timeout: 2 * TIMEOUT_MS },
  async () => {
    const { build } = await import('vite');
    // The README's vite.config.js (worker.format 'es': the pthreads build's own workers are bundled too).
    const { default: config } = await import('../../examples/vite.config.js');
    const out = join(dir, 'vite-dist');
    await build({
      ...config,
      root: join(app, 'vite-app'),
      configFile: false,
      logLevel: 'error',
      build: { outDir: out, emptyOutDir: true, chunkSizeWarningLimit: 2000 },
    });
    checkBrowser(await resultsInChromium(out, '/index.html'), 'Vite');
  },
);

test('the Node pthreads build needs no .wasm of its own: emcc wrote the same bytes for both pthreads builds', () => {
  // web/src/loader.js gives the Node build the browsers' .wasm, and only that one ships.
  const node = readFileSync(join(root, 'web/dist/node/kernel_attention_threads.wasm'));
  assert.ok(node.equals(readFileSync(join(root, 'web/dist/kernel_attention_threads.wasm'))));
});
