// How the CLI reads and writes, against the API or a float64 loop: CSV output safe from spreadsheet formulas, the
// progress bar on stderr, closed pipes, stdin and stdout (-), --missing skip, the demo's dialect (decimal commas,
// dates), and a 33 MB CSV streamed in bounded memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { init } from '../../web/src/index.js';
import { CLI, at, cli, cliIn, cliWith, ok, okWarned, parseCsv, tempDir, useTempDir } from './run.mjs';
import { X, Y, writeSampleFiles } from './sample.mjs';

useTempDir('ka-cli-io-', writeSampleFiles);

test('CSV output neutralises column names a spreadsheet would run as formulas; numbers stay numbers', () => {
  writeFileSync(
    at('formula.csv'),
    '"=HYPERLINK(""http://x"",""y"")",@x,+y\n' + X.map((x, i) => `${-x},${x},${Y[i]}`).join('\n') + '\n',
  );
  const out = ok('predict', 'formula.csv', '--x', '1', '--y', '3', '--bandwidth', '0.5', '--grid', '2');
  const [head, ...rows] = out.trim().split('\n');
  assert.equal(head, `"'=HYPERLINK(""http://x"",""y"")",'+y`);
  assert.ok(
    rows.length > 0 && rows.every((r) => r.split(',').every((c) => Number.isFinite(Number(c)))),
    rows.join('\n'),
  );
  assert.ok(
    rows.some((r) => r.split(',').some((c) => c.startsWith('-'))),
    'a negative number keeps its minus sign',
  );
});

test('a progress bar on stderr for fit, predict, select-bandwidth and attention when stderr is a terminal (KA_PROGRESS=1 here), not with --quiet or KA_PROGRESS=0', () => {
  const q = new Float32Array(Array.from({ length: 3000 * 8 }, (_, i) => Math.sin(i)));
  writeFileSync(at('bar-q.f32'), q);
  writeFileSync(at('bar-v.f32'), q.subarray(0, 3000 * 4));
  const runs = {
    fit: ['fit', 'sample.csv', '--x', 'x', '--y', 'the y'],
    predict: ['predict', 'sample.csv', '--x', 'x', '--y', 'the y', '--grid', '21'],
    'select-bandwidth': ['select-bandwidth', 'sample.csv', '--x', 'x', '--y', 'the y'],
    attention: [
      'attention',
      '--queries',
      'bar-q.f32',
      '--keys',
      'bar-q.f32',
      '--values',
      'bar-v.f32',
      '--dim',
      '8',
      '--causal',
    ],
  };
  for (const [label, args] of Object.entries(runs)) {
    const plain = cliWith({ KA_PROGRESS: '0' }, ...args);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stderr, '', `${label}: a bar with KA_PROGRESS=0`);
    const drawn = cliWith({ KA_PROGRESS: '1' }, ...args);
    assert.equal(drawn.code, 0, drawn.stderr);
    assert.equal(drawn.stdout, plain.stdout, `${label}: the bar changed the output`);
    const frames = drawn.stderr.split('\r').filter(Boolean);
    const bar = label === 'predict' ? 'fit' : label;
    assert.ok(
      frames.some((f) => f.startsWith(`${bar} [`)),
      `${label}: no bar in ${JSON.stringify(drawn.stderr)}`,
    );
    assert.match(
      frames.filter((f) => f.startsWith(`${bar} [`)).at(-1),
      /\[#{30}\] 100% \((\d+)\/\1\)$/,
      `${label}: the bar does not end full`,
    );
    assert.ok(drawn.stderr.endsWith('\r\x1b[2K'), `${label}: the bar is not erased at the end`);
    const quiet = cliWith({ KA_PROGRESS: '1' }, ...args, '--quiet');
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, '', `${label}: a bar despite --quiet`);
  }
});

test('the progress bar is drawn when the stream is a TTY and is not otherwise (a fake stream)', async () => {
  const { progressBar } = await import('../../cli/progress.mjs');
  for (const [isTTY, env, quiet, expect] of [
    [true, {}, false, true],
    [false, {}, false, false],
    [undefined, {}, false, false],
    [true, { KA_PROGRESS: '0' }, false, false],
    [true, {}, true, false],
    [false, { KA_PROGRESS: '1' }, false, true],
  ]) {
    let text = '';
    const bar = progressBar('work', {
      quiet,
      env,
      stream: {
        isTTY,
        write: (s) => {
          text += s;
        },
      },
    });
    bar.onProgress?.({ done: 1, total: 4 });
    bar.onProgress?.({ done: 4, total: 4 });
    bar.done();
    assert.equal(
      text.includes('work [###'),
      expect,
      `isTTY ${isTTY}, ${JSON.stringify(env)}, quiet ${quiet}: ${JSON.stringify(text)}`,
    );
    if (expect) assert.ok(text.includes('100% (4/4)') && text.endsWith('\r\x1b[2K'), text);
  }
});

test('a closed pipe (… | head -1) ends the command quietly with exit code 0', () => {
  const r = spawnSync(
    'bash',
    [
      '-c',
      `set -o pipefail; "${process.execPath}" "${CLI}" predict sample.csv --x x --y 'the y' ` +
        '--bandwidth 0.2 --grid 200000 | head -1',
    ],
    { cwd: tempDir(), encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.stdout, 'x,the y\n');
  assert.equal(r.stderr, '', 'no EPIPE, no stack trace');
  assert.equal(r.status, 0, 'pipefail: every command of the pipe exited 0');
});

test('- reads stdin and --output - writes stdout; --version prints the package version', () => {
  const text = readFileSync(at('sample.csv'), 'utf8');
  const fromFile = ok('predict', 'sample.csv', '--x', 'x', '--y', 'the y', '--bandwidth', '0.2', '--grid', '4');
  const r = cliIn(
    text,
    'predict',
    '-',
    '--x',
    'x',
    '--y',
    'the y',
    '--bandwidth',
    '0.2',
    '--grid',
    '4',
    '--output',
    '-',
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, fromFile);
  assert.throws(() => readFileSync(at('-')), { code: 'ENOENT' }, 'no file named -');
  const q = Float32Array.from({ length: 6 }, (_, i) => i / 4);
  writeFileSync(at('stdin-k.f32'), q);
  const raw = spawnSync(
    process.execPath,
    [
      CLI,
      'attention',
      '--queries',
      '-',
      '--keys',
      'stdin-k.f32',
      '--values',
      'stdin-k.f32',
      '--dim',
      '2',
      '--format',
      'f32',
      '--output',
      '-',
    ],
    { cwd: tempDir(), input: Buffer.from(q.buffer), timeout: 60_000 },
  );
  assert.equal(raw.status, 0, String(raw.stderr));
  assert.equal(raw.stdout.length, 3 * 2 * 4, 'I × D float32 values on stdout');
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
  assert.equal(ok('--version'), `kernel-attention ${version}\n`);
});

test('--missing skip drops rows with empty or NA cells in the columns used; the default refuses them, naming the flag', async () => {
  writeFileSync(
    at('co2.csv'),
    'year,note,co2\n' +
      X.map((x, i) => `${x},${i % 4 ? '' : 'NA'},${i % 5 === 2 ? (i % 2 ? 'NA' : '') : Y[i]}`).join('\n') +
      '\n',
  );
  const r = cli('fit', 'co2.csv', '--x', 'year', '--y', 'co2', '--bandwidth', '0.2');
  assert.equal(r.code, 1);
  assert.match(r.stderr, /^co2\.csv:4: column "co2": missing value \(--missing skip drops such rows\)\n$/);
  const json = JSON.parse(ok('fit', 'co2.csv', '--x', 'year', '--y', 'co2', '--missing', 'skip', '--format', 'json'));
  const keep = X.map((_, i) => i).filter((i) => i % 5 !== 2);
  assert.equal(json.n, keep.length);
  const ka = await init({ threads: 1 });
  const model = ka.kernelRegression(
    keep.map((i) => X[i]),
    keep.map((i) => Y[i]),
    { dim: 1 },
  );
  assert.ok(
    Math.abs(json.bandwidth[0] - model.bandwidth[0]) <= 1e-6 * model.bandwidth[0],
    `${json.bandwidth} vs ${model.bandwidth}`,
  );
  model.dispose();
  const bad = cli('fit', 'co2.csv', '--x', 'year', '--y', 'co2', '--missing', 'drop');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--missing must be one of skip, error/);
});

test("the demo's dialect: semicolons with decimal commas, dates as x (fitted in seconds, printed as dates), a refusal naming --decimal", () => {
  const files = fileURLToPath(new URL('../fixtures/files/', import.meta.url));
  const eu = JSON.parse(
    ok('fit', join(files, 'european.csv'), '--x', 'x', '--y', 'y', '--bandwidth', '1', '--format', 'json'),
  );
  assert.equal(eu.n, 3);
  const grid = parseCsv(
    ok(
      'predict',
      join(files, 'iso-dates.csv'),
      '--x',
      'date',
      '--y',
      'co2',
      '--estimator',
      'nadaraya-watson',
      '--bandwidth',
      String(7 * 86400),
      '--grid',
      '2',
    ),
  );
  assert.deepEqual(
    grid.map((r) => r[0]),
    ['date', '1958-03-29', '1958-04-19T06:30:15Z'],
  );
  // Nadaraya-Watson at the first date, in days (a float64 loop over the file's values).
  const t = [0, 7, 14.5, 21 + (6.5 * 3600 + 15) / 86400];
  const v = [316.19, 317.31, 317.69, 317.58];
  const w = t.map((d) => Math.exp(-0.5 * (d / 7) ** 2));
  const want = w.reduce((a, wi, i) => a + wi * v[i], 0) / w.reduce((a, b) => a + b);
  assert.ok(Math.abs(Number(grid[1][1]) - want) < 1e-4, `${grid[1][1]} vs ${want}`);
  const r = cli('fit', join(files, 'ambiguous-decimal.tsv'), '--x', 'x', '--y', 'y');
  assert.equal(r.code, 1);
  assert.match(r.stderr, /"1,234".*set --decimal ',' or '\.'\n$/);
  // Two rows at h = 1: the fit interpolates them, and says so on stderr.
  const fixed = JSON.parse(
    okWarned(
      'fit',
      join(files, 'ambiguous-decimal.tsv'),
      '--x',
      'x',
      '--y',
      'y',
      '--decimal',
      ',',
      '--bandwidth',
      '1',
      '--format',
      'json',
    ),
  );
  assert.equal(fixed.n, 2);
});

test('a 33 MB CSV is streamed: peak memory follows the two columns used, not the file', () => {
  const rows = 750_000;
  const file = at('big.csv');
  const fd = openSync(file, 'w');
  writeSync(fd, 'a,b,c,d,e,f,g,h,i,j\n');
  for (let start = 0; start < rows; start += 10_000) {
    let text = '';
    for (let i = start; i < start + 10_000; i++) {
      const x = i / rows;
      text += `${x.toFixed(7)},${(i % 2 ? 1 : -1).toFixed(6)},1.5,2.5,3.5,4.5,5.5,6.5,7.5,${(i * 0.123456789).toFixed(6)}\n`;
    }
    writeSync(fd, text);
  }
  closeSync(fd);
  assert.ok(statSync(file).size > 33e6);
  // The CLI in a process that reports its peak resident memory as it exits.
  const script = `process.on('exit', () => process.stderr.write('maxRSS ' + process.resourceUsage().maxRSS + '\\n'));
    await import(${JSON.stringify(pathToFileURL(CLI).href)});`;
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      script,
      'cli',
      'predict',
      'big.csv',
      '--x',
      'a',
      '--y',
      'b',
      '--estimator',
      'nadaraya-watson',
      '--bandwidth',
      '0.05',
      '--grid',
      '3',
      '-q',
    ],
    { cwd: tempDir(), encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.status, 0, r.stderr);
  // y alternates ±1 along x, so the smooth is about 0 everywhere (within the edge effects of an even count).
  parseCsv(r.stdout)
    .slice(1)
    .forEach(([x, y]) => assert.ok(Math.abs(Number(y)) < 1e-3, `${x}: ${y}`));
  const rssMB = Number(/maxRSS (\d+)/.exec(r.stderr)[1]) / 1024;
  // Two columns of 750,000 float64 are 12 MB (24 MB while doubling) and the engine's copies as much again; reading
  // the whole text and its fields took 954 MB for such a file. 161 MB was measured.
  assert.ok(rssMB < 300, `peak RSS ${rssMB.toFixed(0)} MB`);
  console.log(`# big.csv: peak RSS ${rssMB.toFixed(0)} MB`);
  rmSync(file);
});
