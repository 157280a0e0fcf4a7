// The documented minimum TypeScript (5.7: generic typed arrays, for the Float32Array<ArrayBuffer> results) compiles
// tests/types' consumers against the packed package, installed by name (tests/package/consumers/typescript-min pins
// it with a committed lockfile). The repository's own TypeScript (package.json) checks the same files in scripts/test.sh.
// Skipped, with a message, only when the npm registry cannot be reached.
import { test, before, after } from 'node:test';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './support.mjs';

const root = fileURLToPath(new URL('../../', import.meta.url));
const TIMEOUT_MS = 120_000;
let dir;
let offline = null;

before(async () => {
  try {
    await run('npm', ['ping'], { timeout: 20_000 });
  } catch (e) {
    offline = `the npm registry is unreachable (${e.message.split('\n')[0]})`;
    return;
  }
  dir = mkdtempSync(join(tmpdir(), 'ka-typescript-'));
});

after(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test(
  'the minimum TypeScript compiles the types consumers (strict, nodenext, ESM and CommonJS)',
  { timeout: TIMEOUT_MS },
  async (t) => {
    if (offline) return t.skip(offline);
    const project = join(dir, 'project');
    cpSync(join(root, 'tests/package/consumers/typescript-min'), project, { recursive: true });
    for (const f of ['consumer.ts', 'consumer-cjs.cts', 'tsconfig.json'])
      cpSync(join(root, 'tests/types', f), join(project, f));
    await run('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts', '--prefer-offline'], {
      cwd: project,
      timeout: TIMEOUT_MS,
    });
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', dir], {
      cwd: root,
      env: { ...process.env, KA_PREPACK_USE_DIST: '1' },
    });
    const target = join(project, 'node_modules/kernel-attention');
    mkdirSync(target, { recursive: true });
    await run('tar', [
      '-xzf',
      join(dir, JSON.parse(stdout.slice(stdout.indexOf('[')))[0].filename),
      '-C',
      target,
      '--strip-components=1',
    ]);
    const version = JSON.parse(readFileSync(join(project, 'node_modules/typescript/package.json'), 'utf8')).version;
    t.diagnostic(`TypeScript ${version}`);
    await run(process.execPath, [join(project, 'node_modules/typescript/bin/tsc'), '-p', '.'], {
      cwd: project,
      timeout: TIMEOUT_MS,
    });
  },
);
