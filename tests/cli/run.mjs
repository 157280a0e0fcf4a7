// The runner every CLI test file shares: `kernel-attention` spawned in a temporary folder (made before a file's tests,
// removed after them), its exit code and stderr checked, its CSV output read. Not a test file itself.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../cli/kernel-attention.mjs', import.meta.url));

/** The warning codes of a regression result (fit, predict, select-bandwidth). */
const REGRESSION_WARNINGS = ['interpolating', 'precision', 'guard'];

let dir;

/** Makes the file's temporary folder (`prefix` + random) before its tests, then runs `fill`; removes it after them. */
export function useTempDir(prefix, fill = () => {}) {
  before(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    fill();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
}

/** The temporary folder, where the CLI runs. */
export const tempDir = () => dir;

/** The path of `name` in the temporary folder. */
export const at = (name) => join(dir, name);

/** Runs the CLI in the temporary folder with extra spawnSync options; returns { code, stdout, stderr }. */
function spawnCli(args, options) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000, ...options });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs the CLI; returns { code, stdout, stderr }. */
export const cli = (...args) => spawnCli(args, {});

/** Runs the CLI with extra environment variables (KA_PROGRESS=1 draws the bar as on a terminal). */
export const cliWith = (env, ...args) => spawnCli(args, { env: { ...process.env, ...env } });

/** Runs the CLI with `input` on stdin. */
export const cliIn = (input, ...args) => spawnCli(args, { input });

/** Runs the CLI, which must exit 0 with nothing on stderr; returns stdout. */
export function ok(...args) {
  const r = cli(...args);
  assert.equal(r.code, 0, `kernel-attention ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  assert.equal(r.stderr, '');
  return r.stdout;
}

/**
 * As ok(), but stderr may hold the result's warnings (`warning [code]: message` lines, each code one of `codes`) and
 * nothing else; returns { stdout, warnings }.
 */
export function okWarnedWith(codes, ...args) {
  const r = cli(...args);
  assert.equal(r.code, 0, `kernel-attention ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  const warnings = r.stderr.split('\n').filter(Boolean);
  for (const line of warnings) assert.match(line, new RegExp(`^warning \\[(${codes.join('|')})\\]: \\S`));
  return { stdout: r.stdout, warnings };
}

/** As ok(), but stderr may hold a regression result's warnings and nothing else; returns stdout. */
export const okWarned = (...args) => okWarnedWith(REGRESSION_WARNINGS, ...args).stdout;

/** The CSV text's rows (the header first), each split at every comma: the outputs read this way quote nothing. */
export const parseCsv = (text) =>
  text
    .trim()
    .split('\n')
    .map((line) => line.split(','));

/** The CSV text's rows without the header. */
export const rows = (text) => parseCsv(text).slice(1);
