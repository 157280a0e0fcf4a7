// npm pack from a clean checkout (the committed tree, as `git archive HEAD` gives it: no web/dist/, no node_modules):
// prepack refuses with a clear message where emcc is missing, and packs a working package once the build is there.
// Building the wasm again here would take minutes on 2 cores, so the test copies the web/dist/ that scripts/test.sh
// has just built into the checkout and packs with KA_PREPACK_USE_DIST=1; the build step itself is scripts/build.sh's.
// The tarball is then installed into a fresh project and imported from ESM and CommonJS.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkResults, run } from './support.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TIMEOUT_MS = 120_000;
let dir;
let checkout;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ka-clone-'));
  checkout = join(dir, 'checkout');
  mkdirSync(checkout);
  await run('bash', ['-c', `git -C "${root}" archive HEAD | tar -x -C "${checkout}"`]);
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a checkout has no build, and prepack without emcc refuses with a message', { timeout: TIMEOUT_MS }, async () => {
  assert.equal(existsSync(join(checkout, 'web/dist')), false, 'web/dist/ is not committed');
  // A PATH with node, npm and a shell but no emcc or cmake.
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const tool of ['bash', 'sh', 'dirname', 'env']) symlinkSync(`/usr/bin/${tool}`, join(bin, tool));
  symlinkSync(process.execPath, join(bin, 'node'));
  const npmCli = join(dirname(process.execPath), '../lib/node_modules/npm/bin/npm-cli.js');
  const npm = existsSync(npmCli) ? npmCli : '/usr/share/nodejs/npm/bin/npm-cli.js';
  await assert.rejects(
    run(process.execPath, [npm, 'pack', '--pack-destination', dir], {
      cwd: checkout,
      timeout: TIMEOUT_MS,
      env: { ...process.env, PATH: bin },
    }),
    /prepack: refusing to pack: the WebAssembly build needs emcc/,
  );
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.endsWith('.tgz')),
    [],
    'no tarball was written',
  );
});

test(
  'packed from the checkout with its build, the tarball installs and imports (ESM, CommonJS)',
  { timeout: TIMEOUT_MS },
  async () => {
    cpSync(join(root, 'web/dist'), join(checkout, 'web/dist'), { recursive: true });
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
      cwd: checkout,
      timeout: TIMEOUT_MS,
      env: { ...process.env, KA_PREPACK_USE_DIST: '1' },
    });
    const tarball = join(dir, JSON.parse(stdout.slice(stdout.indexOf('[')))[0].filename);
    const app = join(dir, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'scratch', version: '1.0.0', private: true }));
    cpSync(join(root, 'tests/package/consumers/app/compute.js'), join(app, 'compute.mjs'));
    writeFileSync(
      join(app, 'esm.mjs'),
      `import { init } from 'kernel-attention';
import { compute } from './compute.mjs';
console.log(JSON.stringify([compute(await init({ threads: 1 })), compute(await init({ threads: 2 }))]));
`,
    );
    writeFileSync(
      join(app, 'cjs.cjs'),
      `const { init } = require('kernel-attention');
import('./compute.mjs').then(async ({ compute }) => console.log(JSON.stringify([compute(await init({ threads: 1 }))])));
`,
    );
    await run(
      'npm',
      ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--cache', join(dir, 'cache'), tarball],
      { cwd: app, timeout: TIMEOUT_MS },
    );
    const esm = JSON.parse((await run(process.execPath, ['esm.mjs'], { cwd: app, timeout: TIMEOUT_MS })).stdout);
    checkResults(esm, 'ESM');
    assert.deepEqual(
      esm.map((r) => r.build),
      ['single', 'threads'],
    );
    checkResults(
      JSON.parse((await run(process.execPath, ['cjs.cjs'], { cwd: app, timeout: TIMEOUT_MS })).stdout),
      'CommonJS',
    );
  },
);
