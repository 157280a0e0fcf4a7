// Next.js 16 with no configuration (tests/package/consumers/next16, a committed package-lock.json, npm ci from the npm
// registry), built by Turbopack (`next build`) and by webpack (`next build --webpack`) from the packed tarball:
// - a server component rendered at build time, one rendered on each request, and a route handler compute in Node;
// - a client page computes in Chromium;
// - neither build prints a warning;
// - a server that cannot find the package's files (a deployment that left node_modules behind) answers with the error
//   naming the one line that fixes it, serverExternalPackages (after Turbopack's build: the message is the loader's).
// Results are checked against the float64 loops of support.mjs. Skipped, with a message, only when the npm registry
// cannot be reached.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkResults, launchChromium, run } from './support.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TIMEOUT_MS = 300_000;
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: '1' };

let dir;
let project;
let browser;
let offline = null;

before(async () => {
  try {
    await run('npm', ['ping', '--no-audit'], { timeout: 20_000 });
  } catch (e) {
    offline = `the npm registry is unreachable (${e.message.split('\n')[0]})`;
    return;
  }
  dir = mkdtempSync(join(tmpdir(), 'ka-next-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: root,
    env: { ...process.env, KA_PREPACK_USE_DIST: '1' },
  });
  const tarball = join(dir, JSON.parse(stdout.slice(stdout.indexOf('[')))[0].filename);
  project = join(dir, 'next16');
  cpSync(join(root, 'tests/package/consumers/next16'), project, { recursive: true });
  cpSync(join(root, 'tests/package/consumers/app/compute.js'), join(project, 'app/compute.js'));
  await run('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline'], {
    cwd: project,
    timeout: TIMEOUT_MS,
  });
  // A package without dependencies installs as its files: unpack it where npm would.
  const target = join(project, 'node_modules/kernel-attention');
  mkdirSync(target, { recursive: true });
  await run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const next = (args, options) =>
  run(process.execPath, [join(project, 'node_modules/next/dist/bin/next'), ...args], options);

/** The results a server-rendered page carries in its data-results attribute. */
function pageResults(html, what) {
  const attribute = /data-results="([^"]*)"/.exec(html);
  assert.ok(attribute, `${what}: no results in the page: ${html.slice(0, 500)}`);
  return JSON.parse(attribute[1].replaceAll('&quot;', '"').replaceAll('&amp;', '&'));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Runs `next start` on a free port for `work(url, output)`; `output()` is what the server printed so far. */
async function withServer(work) {
  const port = await freePort();
  const child = spawn(process.execPath, [join(project, 'node_modules/next/dist/bin/next'), 'start', '-p', port], {
    cwd: project,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let printed = '';
  child.stdout.on('data', (chunk) => (printed += chunk));
  child.stderr.on('data', (chunk) => (printed += chunk));
  const url = `http://127.0.0.1:${port}`;
  try {
    for (let waited = 0; ; waited += 250) {
      try {
        await fetch(url + '/_not-found');
        break;
      } catch (e) {
        if (waited > 60_000 || child.exitCode !== null)
          throw new Error(`next start did not answer: ${printed}`, { cause: e });
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
    return await work(url, () => printed);
  } finally {
    child.kill();
  }
}

async function clientResults(url) {
  const page = await browser.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console.error: ${m.text().slice(0, 500)}`);
  });
  try {
    await page.goto(url);
    await page.waitForFunction(() => window.results, null, { timeout: 60_000 });
    const results = await page.evaluate(() => window.results);
    assert.deepEqual(problems, [], url);
    return results;
  } finally {
    await page.close();
  }
}

for (const [builder, args] of [
  ['Turbopack', []],
  ['webpack', ['--webpack']],
]) {
  test(
    `Next.js 16 (${builder}, no configuration): server components, a route handler and a client page`,
    { timeout: TIMEOUT_MS },
    async (t) => {
      if (offline) return t.skip(offline);
      rmSync(join(project, '.next'), { recursive: true, force: true });
      const started = performance.now();
      const { stdout, stderr } = await next(['build', ...args], { cwd: project, env, timeout: TIMEOUT_MS });
      const buildSeconds = (performance.now() - started) / 1000;
      // Next.js itself warns "No build cache found" on every first build where the CI variable is set: not ours.
      const printed = (stdout + stderr).replace(/^.*No build cache found.*$/gm, '');
      assert.doesNotMatch(printed, /⚠|warn/i, `${builder}: the build printed a warning:\n${stdout}\n${stderr}`);
      // Rendered by next build itself.
      const built = readFileSync(join(project, '.next/server/app/index.html'), 'utf8');
      checkResults(pageResults(built, `${builder} build-time page`), `${builder} server component at build time`);

      await withServer(async (url) => {
        const dynamic = await (await fetch(url + '/dynamic')).text();
        const request = pageResults(dynamic, `${builder} /dynamic`);
        checkResults(request, `${builder} server component on request`);
        const response = await fetch(url + '/api/fit');
        assert.equal(response.status, 200, `${builder} /api/fit`);
        checkResults(await response.json(), `${builder} route handler`);
        const client = await clientResults(url + '/client');
        checkResults(client, `${builder} client page`);
        assert.equal(client[0].build, 'single', 'a page main thread runs the single-thread build');
        t.diagnostic(`${builder}: next build ${buildSeconds.toFixed(0)} s; on the server: ${request[0].build} build`);
      });
      if (builder === 'Turbopack') await checkMissingFiles();
    },
  );
}

/**
 * A server whose bundle cannot find the package's files, as in a deployment that copied the build but not
 * node_modules/kernel-attention (output: 'standalone' without the line): the route handler's error names the fix.
 */
async function checkMissingFiles() {
  const installed = join(project, 'node_modules/kernel-attention');
  renameSync(installed, `${installed}-away`);
  try {
    await withServer(async (url, output) => {
      const response = await fetch(url + '/api/fit');
      assert.equal(response.status, 500);
      for (let waited = 0; !output().includes('serverExternalPackages') && waited < 10_000; waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100));
      assert.match(output(), /KernelAttentionError.*cannot find the package's \.wasm files/);
      assert.match(output(), /In Next\.js add serverExternalPackages: \['kernel-attention'\] to next\.config\.js/);
    });
  } finally {
    renameSync(`${installed}-away`, installed);
  }
}
