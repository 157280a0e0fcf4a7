// `kernel-attention lowess` against R's lowess() (tests/fixtures/lowess_r.json, statsmodels' test data) and the float64
// reference of tests/fixtures/make_lowess.py: the file's row order, robustness weights, stdin/stdout, bad flags.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { CLI, at, cli, cliIn, ok, parseCsv, tempDir, useTempDir } from './run.mjs';
import { writeSampleFiles } from './sample.mjs';

useTempDir('ka-cli-lowess-', writeSampleFiles);

// R's lowess() outputs (statsmodels' test data) and the float64 reference of tests/fixtures/make_lowess.py.
const LOWESS = JSON.parse(readFileSync(new URL('../fixtures/lowess_r.json', import.meta.url), 'utf8')).cases;
const lowessCase = (name) => LOWESS.find((c) => c.name === name);
/** The case's rows in a fixed shuffled order (the CLI must answer in the file's order, not sorted by x). */
function shuffled(c) {
  const order = c.x.map((_, i) => i);
  let s = 12345;
  for (let i = order.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}
const range = (a) => Math.max(...a) - Math.min(...a);

test("lowess matches R's lowess() in the file's row order (default delta, as R's), and prints x, y, fitted, weight", () => {
  const c = lowessCase('R mcycle delta default'); // 133 points with tied x, f = 0.1, 3 iterations, delta = 1 % of range(x)
  assert.equal(c.source, 'R');
  assert.ok(Math.abs(c.delta - 0.01 * range(c.x)) < 1e-12);
  const order = shuffled(c);
  writeFileSync(at('mcycle.csv'), 'times,accel\n' + order.map((i) => `${c.x[i]},${c.y[i]}`).join('\n') + '\n');
  const rows = parseCsv(ok('lowess', 'mcycle.csv', '--x', 'times', '--y', 'accel', '--frac', '0.1'));
  assert.deepEqual(rows[0], ['times', 'accel', 'fitted', 'weight']);
  assert.equal(rows.length - 1, order.length);
  const tolerance = 1e-5 * range(c.y);
  rows.slice(1).forEach((r, k) => {
    const i = order[k];
    assert.deepEqual([Number(r[0]), Number(r[1])], [c.x[i], c.y[i]], `row ${k}`);
    assert.ok(
      Math.abs(Number(r[2]) - c.fitted[i]) <= tolerance,
      `row ${k} (x = ${c.x[i]}): ${r[2]} vs R's ${c.fitted[i]}`,
    );
    assert.ok(Number(r[3]) >= 0 && Number(r[3]) <= 1, `row ${k}: weight ${r[3]}`);
  });
  // --delta 0 and --iterations, against R again (its 20-point example, no robustness iterations).
  const simple = lowessCase('R iter 0');
  writeFileSync(at('simple.tsv'), simple.x.map((x, i) => `${x}\t${simple.y[i]}`).join('\n') + '\n');
  const json = JSON.parse(
    ok('lowess', 'simple.tsv', '--x', '1', '--y', '2', '--iterations', '0', '--delta', '0', '--format', 'json'),
  );
  json.forEach((r, i) => {
    assert.ok(
      Math.abs(r.fitted - simple.fitted[i]) <= 1e-5 * range(simple.y),
      `${i}: ${r.fitted} vs R's ${simple.fitted[i]}`,
    );
    assert.equal(r.weight, 1, 'no robustness iterations: every weight 1');
  });
});

test('lowess: robustness weights follow the float64 reference; - is stdin and stdout', () => {
  const c = lowessCase('outlier f=0.3 iter 4');
  const text = 'x,y\n' + c.x.map((x, i) => `${x},${c.y[i]}`).join('\n') + '\n';
  const r = cliIn(
    text,
    'lowess',
    '-',
    '--x',
    'x',
    '--y',
    'y',
    '--frac',
    String(c.frac),
    '--iterations',
    String(c.iterations),
    '--delta',
    String(c.delta),
    '--output',
    '-',
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, '');
  const rows = parseCsv(r.stdout).slice(1);
  assert.equal(rows.length, c.x.length);
  rows.forEach((row, i) => {
    assert.ok(Math.abs(Number(row[2]) - c.fitted[i]) <= 1e-5 * range(c.y), `${i}: fitted ${row[2]} vs ${c.fitted[i]}`);
    assert.ok(Math.abs(Number(row[3]) - c.weights[i]) <= 1e-6, `${i}: weight ${row[3]} vs ${c.weights[i]}`);
  });
  assert.ok(
    rows.some((row) => Number(row[3]) < 0.5),
    'the outliers are down-weighted',
  );
});

test('lowess: bad --frac, --iterations, --delta and columns are refused naming the flag (exit code 2), before reading the file', () => {
  const cases = [
    [['--frac', '0'], /^kernel-attention: --frac must be a number in \(0, 1\]; got "0"\n/],
    [['--frac', '1.5'], /--frac must be a number in \(0, 1\]; got "1\.5"/],
    [['--frac', 'two-thirds'], /--frac must be a number; got "two-thirds"/],
    [['--iterations', '2.5'], /--iterations must be an integer; got "2\.5"/],
    [['--iterations=-1'], /--iterations must be an integer ≥ 0; got "-1"/],
    [['--delta=-0.1'], /--delta must be a number ≥ 0/],
  ];
  for (const [extra, pattern] of cases) {
    const r = cli('lowess', 'missing-file.csv', '--x', 'x', '--y', 'y', ...extra);
    assert.equal(r.code, 2, `${extra.join(' ')}: exit ${r.code} (${r.stderr})`);
    assert.match(r.stderr, pattern, extra.join(' '));
    assert.equal(r.stdout, '');
  }
  const two = cli('lowess', 'sample.csv', '--x', 'x,label', '--y', 'the y');
  assert.equal(two.code, 2);
  assert.match(two.stderr, /--x must name one column/);
  const text = cli('lowess', 'sample.csv', '--x', 'label', '--y', 'the y');
  assert.equal(text.code, 1);
  assert.match(text.stderr, /^sample\.csv:2:\d+: column "label"/);
  assert.match(ok('lowess', '--help'), /^Usage: kernel-attention lowess /);
});

test('lowess: a closed pipe (… | head -1) ends the command quietly with exit code 0', () => {
  const rows = Array.from({ length: 200_000 }, (_, i) => `${i},${Math.sin(i / 1000) + ((i * 7919) % 13) / 13}`);
  writeFileSync(at('long.csv'), 'x,y\n' + rows.join('\n') + '\n');
  const r = spawnSync(
    'bash',
    ['-c', `set -o pipefail; "${process.execPath}" "${CLI}" lowess long.csv --x x --y y --frac 0.05 | head -1`],
    { cwd: tempDir(), encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.stdout, 'x,y,fitted,weight\n');
  assert.equal(r.stderr, '');
  assert.equal(r.status, 0);
});
