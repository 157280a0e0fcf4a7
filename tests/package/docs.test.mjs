// The README's worker, bundler and CLI examples are the files in examples/, verbatim, and each runs: the Node worker
// and the shell session here, the module-Worker page in Chromium (the Vite config is used by pack.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../chromium.mjs';
import { startServer } from '../../scripts/serve.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path) => readFileSync(root + path, 'utf8');

test('the README shows the worker, bundler and CLI examples verbatim', () => {
  const readme = read('README.md');
  for (const [file, lang] of [
    ['examples/worker.mjs', 'js'],
    ['examples/worker.html', 'html'],
    ['examples/node-worker.mjs', 'js'],
    ['examples/vite.config.js', 'js'],
    ['examples/cli.sh', 'sh'],
    ['examples/commonjs.cjs', 'js'],
  ]) {
    assert.ok(readme.includes('```' + lang + '\n' + read(file).trimEnd() + '\n```'), `README copy of ${file} is stale`);
  }
});

test('the worker_threads example fits cos(x)', () => {
  const output = execFileSync(process.execPath, [root + 'examples/node-worker.mjs'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  const fit = output
    .match(/^fit: (.*)$/m)[1]
    .split(' ')
    .map(Number);
  const cos = output
    .match(/^cos: (.*)$/m)[1]
    .split(' ')
    .map(Number);
  assert.equal(fit.length, 3);
  fit.forEach((f, i) => assert.ok(Math.abs(f - cos[i]) < 0.01, `fit ${f} vs cos ${cos[i]}`));
});

test('the CommonJS example requires the package by name, fits, and sees the typed error by name', () => {
  const output = execFileSync(process.execPath, [root + 'examples/commonjs.cjs'], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  const fit = output
    .match(/^fit: (.*)$/m)[1]
    .split(' ')
    .map(Number);
  const want = [0.5, 1.5].map((q) => {
    const w = [0, 1, 2].map((k) => Math.exp(-0.5 * ((q - k) / 0.5) ** 2));
    return (w[1] * 1 + w[2] * 4) / (w[0] + w[1] + w[2]);
  });
  fit.forEach((f, i) => assert.ok(Math.abs(f - want[i]) < 1e-3, `fit ${f} vs ${want[i]}`));
  assert.match(output, /^rejected: BadArgument$/m);
});

test('the CLI session runs and prints what its comments say', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ka-cli-example-'));
  try {
    // The package installed as npm installs it (this working tree in node_modules, its bin in node_modules/.bin):
    // readme.test.mjs runs the same lines from the packed tarball.
    mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true });
    symlinkSync(root, join(dir, 'node_modules/kernel-attention'));
    symlinkSync(root + 'cli/kernel-attention.mjs', join(dir, 'node_modules/.bin/kernel-attention'));
    const r = spawnSync('bash', ['-e', root + 'examples/cli.sh'], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines[0], 'bandwidth.hour,score,chosen');
    const curve = lines
      .slice(1)
      .filter((l) => /^[\d.e-]+,[\d.e-]+,[01]$/.test(l))
      .map((l) => l.split(',').map(Number));
    assert.ok(curve.length > 5);
    const chosen = curve.filter((c) => c[2] === 1);
    assert.equal(chosen.length, 1);
    assert.equal(chosen[0][1], Math.min(...curve.map((c) => c[1])));
    const band = JSON.parse(lines.find((l) => l.startsWith('[')));
    assert.deepEqual(
      band.map((p) => p.hour),
      [0, 4, 8, 12, 16, 20, 24],
    );
    band.forEach((p) => assert.ok(p['load.lower'] < p.load && p.load < p['load.upper']));
    assert.equal(JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')).bandwidth[0], 1.5);
    assert.match(r.stderr, /^load\.csv:2:\d+: column "site": expected a finite number; got "south"\n$/);
    assert.equal(lines.at(-1), 'exit code 1');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the Web Worker example page fits in a module Worker', { timeout: 120_000 }, async () => {
  const server = await startServer({ port: 0 });
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const problems = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    await page.goto(`${server.url}/examples/worker.html`);
    await page
      .waitForFunction(
        () => window.exampleResult || document.getElementById('out').textContent.includes('rror'),
        null,
        { timeout: 60_000 },
      )
      .catch((e) => {
        throw new Error(problems.join('\n') || e.message);
      });
    const r = await page.evaluate(() => window.exampleResult);
    assert.ok(r, `no result: ${problems.join('\n')}`);
    const want = r.at.map((q) => {
      let num = 0;
      let den = 0;
      r.x.forEach((k, j) => {
        const w = Math.exp(-0.5 * ((q - k) / r.bandwidth) ** 2);
        num += w * r.y[j];
        den += w;
      });
      return num / den;
    });
    r.fit.forEach((f, i) => assert.ok(Math.abs(f - want[i]) < 1e-5, `fit ${f} vs ${want[i]}`));
    assert.ok(r.build === 'threads' || r.build === 'single');
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
    await server.close();
  }
});

test("the version is the CHANGELOG's newest section, in package.json, its lockfile and the README's CDN example", () => {
  const { version } = JSON.parse(read('package.json'));
  const lock = JSON.parse(read('package-lock.json'));
  const newest = read('CHANGELOG.md').match(/^## (\d+\.\d+\.\d+)/m)[1];
  assert.equal(version, newest, 'package.json against the CHANGELOG');
  assert.equal(lock.version, version, 'package-lock.json');
  assert.equal(lock.packages[''].version, version, "package-lock.json's root package");
  const cdn = [...read('README.md').matchAll(/kernel-attention@(\d+\.\d+\.\d+)/g)].map((m) => m[1]);
  assert.ok(cdn.length > 0, 'the README has no versioned CDN URL');
  for (const v of cdn) assert.equal(v, version, "the README's CDN example");
});
