// The README's JavaScript examples that import the package by name run, as written, from the packed tarball installed
// into a fresh directory (each block in its own file: .mjs, or .cjs for a block that only require()s), and so do its
// shell sessions and the commands it names (`node node_modules/kernel-attention/examples/…`, `npx kernel-attention …`).
// Blocks without such an import (the API summary, a config file, a CDN URL) are not programs and are left out. The same blocks compile
// under TypeScript's strict mode against the package's own types (checked JavaScript, as an editor checks them), with
// a few lines declaring the Node built-ins they use.
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
const isModule = (code) => /^import /m.test(code);
// The shell sessions (but installing the package, which before() does from the tarball, and working on the repository)
// and the commands in the text and the examples' comments: `node …` and `npx kernel-attention …` without placeholders.
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const sessions = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
  .map((m) => m[1])
  .filter((code) => !/^npm (install|start|test)\b/m.test(code));
const commands = [
  ...new Set(
    [...readme.matchAll(/`((?:npx )?kernel-attention\s[^`]+|node\s[^`]+)`/g)].map((m) => m[1].replace(/\s+/g, ' ')),
  ),
].filter((command) => !/\b[A-Z]{2,}\b/.test(command));
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
  assert.ok(sessions.length >= 1, `found ${sessions.length} shell sessions`);
  assert.ok(commands.length >= 6, `found ${commands.length} commands: ${commands.join('; ')}`);
});

/** Runs a shell command in the fresh directory, with the installed package's bin on PATH (as `npm exec` has it). */
function shell(script, options = []) {
  return run('bash', [...options, '-c', script], {
    cwd: app,
    timeout: TIMEOUT_MS,
    env: { ...process.env, PATH: `${join(app, 'node_modules/.bin')}:${process.env.PATH}` },
  });
}

sessions.forEach((code, n) => {
  test(`README shell session ${n + 1} runs from the installed package`, { timeout: TIMEOUT_MS }, async () => {
    await shell(code, ['-e']);
  });
});

commands.forEach((command) => {
  test(`README command: ${command}`, { timeout: TIMEOUT_MS }, async () => {
    const { stderr } = await shell(command);
    assert.doesNotMatch(stderr, /Error|unexpected/, stderr);
  });
});

blocks.forEach((code, n) => {
  const title = code.split('\n')[0].slice(0, 90);
  test(`README example ${n + 1}: ${title}`, { timeout: TIMEOUT_MS }, async () => {
    const file = join(app, `example-${n + 1}.${isModule(code) ? 'mjs' : 'cjs'}`);
    writeFileSync(file, code);
    const { stdout, stderr } = await run(process.execPath, [file], { cwd: app, timeout: TIMEOUT_MS });
    assert.doesNotMatch(stderr, /Error|unexpected/, stderr);
    assert.doesNotMatch(stdout, /unexpected/, stdout);
  });
});

// What the README's examples use of Node beyond the DOM's lib (the project has no @types/node).
const NODE_GLOBALS = `declare var process: { exitCode?: number | string };
declare module 'node:worker_threads' {
  export class Worker {
    constructor(url: URL, options?: { workerData?: unknown });
    once(event: 'message', listener: (message: any) => void): this;
    once(event: 'error', listener: (error: Error) => void): this;
  }
  export const isMainThread: boolean;
  export const parentPort: { postMessage(message: unknown, transfer?: ArrayBuffer[]): void };
  export const workerData: any;
}
`;

test(
  "the README's examples compile under tsc --strict against the package's types",
  { timeout: TIMEOUT_MS },
  async () => {
    const project = join(app, 'typescript');
    mkdirSync(project);
    const files = blocks.map((code, n) => {
      const file = `example-${n + 1}.${isModule(code) ? 'mjs' : 'cjs'}`;
      writeFileSync(join(project, file), code);
      return file;
    });
    writeFileSync(join(project, 'node-globals.d.ts'), NODE_GLOBALS);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          // The examples are JavaScript: their own helpers' parameters are untyped (any), as in any script; every use
          // of the package's types is checked under the other strict flags (null checks, narrowing).
          noImplicitAny: false,
          noEmit: true,
          allowJs: true,
          checkJs: true,
          target: 'es2022',
          lib: ['es2022', 'dom'],
          module: 'nodenext',
          moduleResolution: 'nodenext',
          types: [],
        },
        files: ['node-globals.d.ts', ...files],
      }),
    );
    await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', project], {
      cwd: project,
      timeout: TIMEOUT_MS,
    });
  },
);
