// The README's JavaScript examples that import the package by name run, as written, from the packed tarball installed
// into a fresh directory (each block in its own file: .mjs, or .cjs for a block that only require()s). Blocks without
// such an import (the API summary, a config file, a CDN URL) are not programs and are left out.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './support.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TIMEOUT_MS = 120_000;
const blocks = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/^```js\n([\s\S]*?)^```$/gm)]
  .map((m) => m[1])
  .filter((code) => /from 'kernel-attention'|require\('kernel-attention'\)/.test(code));
let app;
let dir;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ka-readme-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: root,
    env: { ...process.env, KA_PREPACK_USE_DIST: '1' },
  });
  app = join(dir, 'app');
  mkdirSync(app);
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'readme-examples', version: '1.0.0', private: true }),
  );
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
      join(dir, JSON.parse(stdout.slice(stdout.indexOf('[')))[0].filename),
    ],
    { cwd: app },
  );
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the README has runnable examples', () => {
  assert.ok(blocks.length >= 5, `found ${blocks.length}`);
});

blocks.forEach((code, n) => {
  const title = code.split('\n')[0].slice(0, 90);
  test(`README example ${n + 1}: ${title}`, { timeout: TIMEOUT_MS }, async () => {
    const file = join(app, `example-${n + 1}.${/^import /m.test(code) ? 'mjs' : 'cjs'}`);
    writeFileSync(file, code);
    const { stdout, stderr } = await run(process.execPath, [file], { cwd: app, timeout: TIMEOUT_MS });
    assert.doesNotMatch(stderr, /Error|unexpected/, stderr);
    assert.doesNotMatch(stdout, /unexpected/, stdout);
  });
});
