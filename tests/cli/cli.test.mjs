// The `kernel-attention` command on sample files: each command's output against a float64 loop (or the API), every
// --help, and malformed input reported as file:line:column with exit code 1 (2 for command-line mistakes).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { init } from '../../web/src/index.js';

const CLI = fileURLToPath(new URL('../../cli/kernel-attention.mjs', import.meta.url));
let dir;
const at = (name) => join(dir, name);

/** Runs the CLI; returns { code, stdout, stderr }. */
function cli(...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function ok(...args) {
  const r = cli(...args);
  assert.equal(r.code, 0, `kernel-attention ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  assert.equal(r.stderr, '');
  return r.stdout;
}

/** As ok(), but stderr may hold the result's warnings (`warning [code]: message` lines) and nothing else. */
function okWarned(...args) {
  const r = cli(...args);
  assert.equal(r.code, 0, `kernel-attention ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  for (const line of r.stderr.split('\n').filter(Boolean))
    assert.match(line, /^warning \[(interpolating|precision|guard)\]: \S/);
  return r.stdout;
}

const parseCsv = (text) =>
  text
    .trim()
    .split('\n')
    .map((line) => line.split(','));

// 30 noisy samples of a curve; x in the first column, a text column between, y last.
const X = Array.from({ length: 30 }, (_, i) => i / 29);
const Y = X.map((t, i) => Math.sin(4 * t) + 0.2 * Math.sin(7.3 * i * i));

function nadarayaWatson(xq, h) {
  return xq.map((q) => {
    let num = 0;
    let den = 0;
    X.forEach((k, j) => {
      const w = Math.exp(-0.5 * ((q - k) / h) ** 2);
      num += w * Y[j];
      den += w;
    });
    return num / den;
  });
}

/** The local-quadratic fit (R's loess degree 2) at xq, Gaussian kernel: the 3 × 3 normal equations by Cramer's rule. */
function localQuadratic(xq, h) {
  return xq.map((q) => {
    const m = new Float64Array(5); // Σw·u^k, k = 0 … 4
    const t = new Float64Array(3); // Σw·u^k·y, k = 0 … 2
    X.forEach((k, j) => {
      const u = k - q;
      const w = Math.exp(-0.5 * (u / h) ** 2);
      for (let p = 0; p < 5; p++) m[p] += w * u ** p;
      for (let p = 0; p < 3; p++) t[p] += w * u ** p * Y[j];
    });
    const det3 = (a) =>
      a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6]);
    const A = [m[0], m[1], m[2], m[1], m[2], m[3], m[2], m[3], m[4]];
    return det3([t[0], m[1], m[2], t[1], m[2], m[3], t[2], m[3], m[4]]) / det3(A);
  });
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'ka-cli-'));
  writeFileSync(at('sample.csv'), 'x,label,"the y"\n' + X.map((x, i) => `${x},"p, ${i}",${Y[i]}`).join('\r\n') + '\n');
  writeFileSync(at('sample.tsv'), X.map((x, i) => `${x}\t${Y[i]}`).join('\n') + '\n');
  writeFileSync(at('queries.tsv'), 'x\n0.1\n0.5\n0.77\n');
  writeFileSync(at('bad-number.csv'), 'x,y\n0,1\n0.5,2\n1,2.x\n');
  writeFileSync(at('ragged.csv'), 'x,y\n0,1\n0.5\n1,2\n');
  writeFileSync(at('quote.csv'), 'x,y\n0,1\n0.5,"2\n');
});

after(() => rmSync(dir, { recursive: true, force: true }));

test('fit prints the model (JSON and CSV) and matches the API', async () => {
  const json = JSON.parse(ok('fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--format', 'json'));
  const ka = await init({ threads: 1 });
  const model = ka.kernelRegression(X, Y, { dim: 1 });
  assert.equal(json.n, 30);
  assert.equal(json.rule, 'cv');
  assert.equal(json.method, model.method);
  assert.ok(
    Math.abs(json.bandwidth[0] - model.bandwidth[0]) <= 1e-6 * model.bandwidth[0],
    `${json.bandwidth} vs ${model.bandwidth}`,
  );
  assert.ok(Math.abs(json.effectiveDegreesOfFreedom - model.effectiveDegreesOfFreedom) < 1e-6);
  const csv = parseCsv(ok('fit', 'sample.csv', '--x', '1', '--y', '3', '--bandwidth', '0.2'));
  assert.deepEqual(csv[0], ['name', 'value']);
  assert.ok(Math.abs(Number(csv.find((r) => r[0] === 'bandwidth.x')[1]) - 0.2) < 1e-7);
  assert.deepEqual(
    csv.find((r) => r[0] === 'rule'),
    ['rule', 'fixed'],
  );
  assert.deepEqual(
    csv.find((r) => r[0] === 'method'),
    ['method', 'exact'],
  );
});

test('predict --span --gradient follows the float64 k-NN fit and slope loops; fit reports the span', async () => {
  const { referenceLocalSlope, referenceSpanFit } = await import('../js/reference.mjs');
  const rows = JSON.parse(
    ok(
      'predict',
      'sample.csv',
      '--x',
      'x',
      '--y',
      'the y',
      '--kernel',
      'tricube',
      '--span',
      '0.4',
      '--grid',
      '5',
      '--gradient',
      '--level',
      '0.9',
      '--format',
      'json',
    ),
  );
  const xq = rows.map((r) => r.x);
  const x32 = Float32Array.from(X);
  const y32 = Float32Array.from(Y);
  const want = referenceSpanFit(x32, y32, Float32Array.from(xq), { dim: 1, kernel: 'tricube', span: 0.4 });
  rows.forEach((r, i) => {
    assert.ok(Math.abs(r['the y'] - want.mean[i]) < 1e-5, `row ${i}: ${r['the y']} vs ${want.mean[i]}`);
    const slope = referenceLocalSlope(x32, y32, Float32Array.of(xq[i]), {
      dim: 1,
      kernel: 'tricube',
      bandwidth: [want.bandwidths[i]],
    }).slope[0];
    assert.ok(
      Math.abs(r['the y.d.x'] - slope) < 1e-4 * Math.max(1, Math.abs(slope)),
      `row ${i} slope: ${r['the y.d.x']} vs ${slope}`,
    );
    assert.ok(r['the y.d.x.stderr'] > 0);
  });
  const fit = JSON.parse(ok('fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--span', '0.4', '--format', 'json'));
  assert.equal(fit.span, 0.4);
  assert.equal(fit.rule, 'span');
  assert.deepEqual(fit.scale, [1]);
  for (const [args, message] of [
    [['--span', '0'], /--span must be a number in \(0, 1\]/],
    [['--span', '0.5', '--bandwidth', '1'], /not both/],
  ]) {
    const r = cli('fit', 'sample.csv', '--x', 'x', '--y', 'the y', ...args);
    assert.equal(r.code, 2);
    assert.match(r.stderr, message);
  }
});

test('predict --estimator local-quadratic follows a float64 loop', () => {
  const grid = parseCsv(
    ok(
      'predict',
      'sample.csv',
      '--x',
      'x',
      '--y',
      'the y',
      '--estimator',
      'local-quadratic',
      '--bandwidth',
      '0.15',
      '--grid',
      '5',
    ),
  );
  const want = localQuadratic([0, 0.25, 0.5, 0.75, 1], 0.15);
  grid
    .slice(1)
    .forEach((r, i) => assert.ok(Math.abs(Number(r[1]) - want[i]) < 1e-5, `grid ${i}: ${r[1]} vs ${want[i]}`));
  const r = cli('fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--estimator', 'local-cubic');
  assert.equal(r.code, 2);
  assert.match(r.stderr, /local-quadratic/);
});

test('predict on a grid and at the rows of a TSV file follows a float64 loop', () => {
  const grid = parseCsv(
    ok(
      'predict',
      'sample.csv',
      '--x',
      'x',
      '--y',
      'the y',
      '--estimator',
      'nadaraya-watson',
      '--bandwidth',
      '0.1',
      '--grid',
      '5',
    ),
  );
  assert.deepEqual(grid[0], ['x', 'the y']);
  const xs = grid.slice(1).map((r) => Number(r[0]));
  assert.deepEqual(xs, [0, 0.25, 0.5, 0.75, 1]);
  const want = nadarayaWatson(xs, 0.1);
  grid
    .slice(1)
    .forEach((r, i) => assert.ok(Math.abs(Number(r[1]) - want[i]) < 1e-5, `grid ${i}: ${r[1]} vs ${want[i]}`));

  const rows = JSON.parse(
    ok(
      'predict',
      'sample.tsv',
      '--x',
      '1',
      '--y',
      '2',
      '--estimator',
      'nadaraya-watson',
      '--bandwidth',
      '0.1',
      '--at',
      'queries.tsv',
      '--at-x',
      'x',
      '--level',
      '0.9',
      '--format',
      'json',
    ),
  );
  const wantAt = nadarayaWatson([0.1, 0.5, 0.77], 0.1);
  assert.equal(rows.length, 3);
  rows.forEach((r, i) => {
    assert.ok(Math.abs(r.y1 - wantAt[i]) < 1e-5, `row ${i}: ${r.y1} vs ${wantAt[i]}`);
    assert.ok(r['y1.lower'] < r.y1 && r.y1 < r['y1.upper'] && r['y1.stderr'] > 0);
  });

  ok('predict', 'sample.csv', '--x', 'x', '--y', 'the y', '--grid', '3', '--output', 'out.json');
  assert.equal(JSON.parse(readFileSync(at('out.json'), 'utf8')).length, 3);
});

test('select-bandwidth prints the chosen bandwidth and the CV curve', async () => {
  const ka = await init({ threads: 1 });
  const want = ka.selectBandwidth(X, Y, { dim: 1, estimator: 'local-linear' }); // the CLI's default, as kernelRegression's
  const json = JSON.parse(ok('select-bandwidth', 'sample.csv', '--x', 'x', '--y', 'the y', '--format', 'json'));
  assert.ok(Math.abs(json.bandwidth[0] - want.bandwidth[0]) <= 1e-6 * want.bandwidth[0]);
  assert.equal(json.curve.length, want.curve.scores.length);
  assert.ok(json.curve.length > 3);
  assert.deepEqual([json.rule, json.method], ['cv', 'exact']);
  const csv = parseCsv(ok('select-bandwidth', 'sample.csv', '--x', 'x', '--y', 'the y'));
  assert.deepEqual(csv[0], ['bandwidth.x', 'score', 'chosen']);
  const chosen = csv.slice(1).filter((r) => r[2] === '1');
  assert.equal(chosen.length, 1);
  assert.ok(Math.abs(Number(chosen[0][0]) - want.bandwidth[0]) <= 1e-6 * want.bandwidth[0]);
  // The chosen score is the smallest on the curve.
  assert.equal(Math.min(...csv.slice(1).map((r) => Number(r[1]))), Number(chosen[0][1]));
});

test("--rule plugin and --bandwidth plugin are the API's plug-in rule (R's dpill): no score, its estimates in JSON", async () => {
  const ka = await init({ threads: 1 });
  const want = ka.selectBandwidth(X, Y, { dim: 1, rule: 'plugin' });
  const args = ['sample.csv', '--x', 'x', '--y', 'the y'];
  const json = JSON.parse(ok('select-bandwidth', ...args, '--rule', 'plugin', '--format', 'json'));
  assert.deepEqual([json.rule, json.method, json.score, json.curve], ['plugin', 'exact', null, []]);
  assert.ok(Math.abs(json.bandwidth[0] - want.bandwidth[0]) <= 1e-8 * want.bandwidth[0]);
  assert.equal(json.plugin.blocks, want.plugin.blocks);
  assert.ok(Math.abs(json.plugin.sigma2 - want.plugin.sigma2) <= 1e-8 * want.plugin.sigma2);
  const csv = parseCsv(ok('select-bandwidth', ...args, '--rule', 'plugin'));
  assert.deepEqual(csv, [
    ['bandwidth.x', 'score', 'chosen'],
    [String(json.bandwidth[0]), '', '1'],
  ]);
  const fit = JSON.parse(okWarned('fit', ...args, '--bandwidth', 'plugin', '--format', 'json'));
  assert.deepEqual([fit.rule, fit.score, fit.bandwidth], ['plugin', null, json.bandwidth]);
  const two = cli('select-bandwidth', 'sample.csv', '--x', 'x,x', '--y', 'the y', '--rule', 'plugin');
  assert.notEqual(two.code, 0);
  assert.match(two.stderr, /^kernel-attention: the number of --x columns must be 1 for rule 'plugin'/);
});

test('--exclude R runs blocked CV in select-bandwidth and fit, as the API does; a negative R or a rule other than cv is refused', async () => {
  const ka = await init({ threads: 1 });
  const want = ka.selectBandwidth(X, Y, { dim: 1, estimator: 'local-linear', exclude: 0.1 });
  const json = JSON.parse(
    ok('select-bandwidth', 'sample.csv', '--x', 'x', '--y', 'the y', '--exclude', '0.1', '--format', 'json'),
  );
  assert.ok(Math.abs(json.bandwidth[0] - want.bandwidth[0]) <= 1e-6 * want.bandwidth[0]);
  assert.notEqual(want.bandwidth[0], ka.selectBandwidth(X, Y, { dim: 1, estimator: 'local-linear' }).bandwidth[0]);
  const fit = JSON.parse(
    okWarned('fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--exclude', '0.1', '--format', 'json'),
  );
  assert.ok(Math.abs(fit.bandwidth[0] - want.bandwidth[0]) <= 1e-6 * want.bandwidth[0]);
  for (const args of [['--exclude=-1'], ['--exclude', 'x'], ['--bandwidth', 'aicc', '--exclude', '1']]) {
    const r = cli('fit', 'sample.csv', '--x', 'x', '--y', 'the y', ...args);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /--exclude/);
  }
});

test('select-bandwidth --rule chooses the rule; --method, its spelling before 0.2.0, still works with a note on stderr', async () => {
  const ka = await init({ threads: 1 });
  const want = ka.selectBandwidth(X, Y, { dim: 1, rule: 'aicc', estimator: 'local-linear' });
  const args = ['select-bandwidth', 'sample.csv', '--x', 'x', '--y', 'the y', '--format', 'json'];
  const json = JSON.parse(ok(...args, '--rule', 'aicc'));
  assert.equal(json.rule, 'aicc');
  assert.ok(Math.abs(json.bandwidth[0] - want.bandwidth[0]) <= 1e-6 * want.bandwidth[0]);
  const old = cli(...args, '--method', 'aicc');
  assert.equal(old.code, 0, old.stderr);
  assert.deepEqual(JSON.parse(old.stdout), json);
  assert.match(old.stderr, /^deprecated: --method is now --rule\b.*\n$/);
  const both = cli(...args, '--method', 'aicc', '--rule', 'cv');
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--method.*--rule/);
  const bad = cli(...args, '--rule', 'grid');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--rule must be one of/);
});

test('attention over raw float32 and .npy files follows a float64 loop', () => {
  const dim = 4;
  const q = Float32Array.from({ length: 3 * dim }, (_, i) => Math.sin(i));
  const k = Float32Array.from({ length: 5 * dim }, (_, i) => Math.cos(0.5 * i));
  const v = Float32Array.from({ length: 5 * 2 }, (_, i) => i / 3);
  writeFileSync(at('q.f32'), q);
  writeFileSync(at('k.f32'), k);
  // v as .npy (version 1.0, '<f4', C order), its header padded to a multiple of 64 bytes as numpy writes it.
  let header = "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 2), }";
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  const npy = Buffer.concat([
    Buffer.from('\x93NUMPY\x01\x00', 'latin1'),
    Buffer.from(Uint16Array.of(header.length).buffer),
    Buffer.from(header, 'latin1'),
    Buffer.from(v.buffer),
  ]);
  writeFileSync(at('v.npy'), npy);
  const want = [];
  for (let i = 0; i < 3; i++) {
    const s = Array.from({ length: 5 }, (_, j) => {
      let dot = 0;
      for (let d = 0; d < dim; d++) dot += q[i * dim + d] * k[j * dim + d];
      return dot / 2;
    });
    const w = s.map((x) => Math.exp(x - Math.max(...s)));
    const total = w.reduce((a, b) => a + b);
    for (let c = 0; c < 2; c++) want.push(w.reduce((a, wj, j) => a + wj * v[j * 2 + c], 0) / total);
  }
  const rows = JSON.parse(
    ok('attention', '--queries', 'q.f32', '--keys', 'k.f32', '--values', 'v.npy', '--dim', '4', '--format', 'json'),
  );
  rows.flat().forEach((o, i) => assert.ok(Math.abs(o - want[i]) < 1e-6, `${i}: ${o} vs ${want[i]}`));
  ok('attention', '--queries', 'q.f32', '--keys', 'k.f32', '--values', 'v.npy', '--dim', '4', '--output', 'out.f32');
  const raw = readFileSync(at('out.f32'));
  assert.deepEqual(Array.from(new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4)), rows.flat());
});

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

test('--help for every command', () => {
  assert.match(ok('--help'), /Commands:/);
  for (const command of ['fit', 'predict', 'select-bandwidth', 'lowess', 'loess', 'attention']) {
    assert.match(ok(command, '--help'), new RegExp(`^Usage: kernel-attention ${command} `));
  }
});

test('malformed input: file:line:column and exit code 1; command-line mistakes: exit code 2; never a stack trace', () => {
  const cases = [
    [
      ['fit', 'bad-number.csv', '--x', 'x', '--y', 'y'],
      1,
      /^bad-number\.csv:4:3: column "y": expected a finite number; got "2\.x"\n$/,
    ],
    [
      ['predict', 'ragged.csv', '--x', 'x', '--y', 'y', '--grid', '3'],
      1,
      /^ragged\.csv:3: expected 2 fields \(as in the first row\); got 1\n$/,
    ],
    [['select-bandwidth', 'quote.csv', '--x', 'x', '--y', 'y'], 1, /^quote\.csv: line 3: a quoted field is not closed/],
    [['fit', 'sample.csv', '--x', 'nope', '--y', 'the y'], 2, /no column "nope" in sample\.csv/],
    [['fit', 'sample.csv', '--x', 'x'], 2, /--y is required/],
    [['fit', '--x', 'x', '--y', 'the y'], 2, /the data file \(FILE\) is missing/],
    [['fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--kernel', 'gauss'], 2, /--kernel must be one of/],
    [['predict', 'sample.csv', '--x', 'x', '--y', 'the y'], 2, /give one of --at FILE2 or --grid N/],
    [['fit', 'missing.csv', '--x', 'x', '--y', 'y'], 2, /cannot read missing\.csv: no such file/],
    [['fit', 'sample.csv', '--bogus'], 2, /Unknown option '--bogus'/],
    [['frobnicate'], 2, /unknown command "frobnicate"/],
    [
      ['attention', '--queries', 'q.f32', '--keys', 'k.f32', '--values', 'v.npy', '--dim', '3'],
      1,
      /kernel-attention: .*3/,
    ],
  ];
  for (const [args, code, pattern] of cases) {
    const r = cli(...args);
    assert.equal(r.code, code, `${args.join(' ')}: exit ${r.code} (${r.stderr})`);
    assert.match(r.stderr, pattern, args.join(' '));
    assert.doesNotMatch(r.stderr, /\n\s+at /, `${args.join(' ')} printed a stack trace`);
    assert.equal(r.stdout, '');
  }
});

test('a path that is a directory or unreadable: one line on stderr, exit code 2 (as a missing file), nothing on stdout', () => {
  mkdirSync(at('folder'));
  const oneLine = (args, pattern, options) => {
    const r = options
      ? spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, ...options })
      : cli(...args);
    const what = `kernel-attention ${args.join(' ')}`;
    assert.equal(r.status ?? r.code, 2, `${what}: exit ${r.status ?? r.code} (${r.stderr})`);
    assert.match(r.stderr, pattern, what);
    assert.equal(r.stderr.split('\n').length, 2, `${what}: more than one line: ${JSON.stringify(r.stderr)}`);
    assert.equal(r.stdout, '', what);
  };
  oneLine(['fit', 'folder', '--x', 'x', '--y', 'y'], /^kernel-attention: cannot read folder: it is a directory\n$/);
  oneLine(
    ['fit', 'missing.csv', '--x', 'x', '--y', 'y'],
    /^kernel-attention: cannot read missing\.csv: no such file\n$/,
  );
  oneLine(
    ['predict', 'sample.csv', '--x', 'x', '--y', 'the y', '--at', 'folder'],
    /^kernel-attention: cannot read folder: it is a directory\n$/,
  );
  oneLine(
    ['attention', '--queries', 'folder', '--keys', 'folder', '--values', 'folder', '--dim', '1'],
    /^kernel-attention: cannot read folder: it is a directory\n$/,
  );
  oneLine(
    ['fit', 'sample.csv/x.csv', '--x', 'x', '--y', 'y'],
    /^kernel-attention: cannot read sample\.csv\/x\.csv: a part of the path is not a directory\n$/,
  );
  oneLine(
    ['fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--bandwidth', '0.2', '--output', 'folder'],
    /^kernel-attention: cannot write folder: it is a directory\n$/,
  );

  // Unreadable: mode 000. root reads any file, so as root the CLI runs as nobody (uid 65534) on a folder it may enter.
  const open = mkdtempSync(join(tmpdir(), 'ka-cli-perm-'));
  try {
    chmodSync(open, 0o755);
    writeFileSync(join(open, 'secret.csv'), 'x,y\n0,1\n1,2\n');
    chmodSync(join(open, 'secret.csv'), 0o000);
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    oneLine(
      ['fit', 'secret.csv', '--x', 'x', '--y', 'y'],
      /^kernel-attention: cannot read secret\.csv: permission denied\n$/,
      { cwd: open, ...asNobody },
    );
  } finally {
    rmSync(open, { recursive: true, force: true });
  }
});

/** Runs the CLI with extra environment variables (KA_PROGRESS=1 draws the bar as on a terminal). */
function cliWith(env, ...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

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

/** Runs the CLI with `input` on stdin. */
function cliIn(input, ...args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: dir, input, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('a closed pipe (… | head -1) ends the command quietly with exit code 0', () => {
  const r = spawnSync(
    'bash',
    [
      '-c',
      `set -o pipefail; "${process.execPath}" "${CLI}" predict sample.csv --x x --y 'the y' ` +
        '--bandwidth 0.2 --grid 200000 | head -1',
    ],
    { cwd: dir, encoding: 'utf8', timeout: 120_000 },
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
    { cwd: dir, input: Buffer.from(q.buffer), timeout: 60_000 },
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

test('strict numbers in cells and flags: 0x10, 1e and 12abc are refused where they are', () => {
  writeFileSync(at('hex.csv'), 'x,y\n0,1\n0x10,2\n1,3\n2,4\n');
  const cases = [
    [
      ['fit', 'hex.csv', '--x', 'x', '--y', 'y'],
      1,
      /^hex\.csv:3:1: column "x": expected a finite number; got "0x10"\n$/,
    ],
    [['fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--bandwidth', '0x10'], 2, /--bandwidth must be/],
    [['predict', 'sample.csv', '--x', 'x', '--y', 'the y', '--grid', '1e'], 2, /--grid must be an integer; got "1e"/],
    [
      ['predict', 'sample.csv', '--x', 'x', '--y', 'the y', '--grid', '12abc'],
      2,
      /--grid must be an integer; got "12abc"/,
    ],
    [['fit', 'hex.csv', '--x', 'x', '--y', 'y', '--missing', 'skip'], 1, /expected a finite number; got "0x10"/],
  ];
  for (const [args, code, pattern] of cases) {
    const r = cli(...args);
    assert.equal(r.code, code, `${args.join(' ')}: exit ${r.code} (${r.stderr})`);
    assert.match(r.stderr, pattern, args.join(' '));
  }
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

test('API errors name the flags (--dim, --keys), not the API (options.dim); a value beyond float32 names its line', () => {
  const r = cli('attention', '--queries', 'q.f32', '--keys', 'k.f32', '--values', 'v.npy', '--dim', '3');
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--keys/);
  assert.match(r.stderr, /--dim/);
  assert.doesNotMatch(r.stderr, /options\.|`keys`/);
  const h = cli(
    'attention',
    '--queries',
    'q.f32',
    '--keys',
    'k.f32',
    '--values',
    'v.npy',
    '--dim',
    '4',
    '--heads',
    '3',
  );
  assert.match(h.stderr, /^kernel-attention: --heads = 3 must divide --dim = 4\n$/);
  writeFileSync(at('huge.csv'), 'x,y\n0,1\n1,1e300\n2,3\n');
  const big = cli('fit', 'huge.csv', '--x', 'x', '--y', 'y', '--bandwidth', '1');
  assert.equal(big.code, 1);
  assert.match(big.stderr, /^huge\.csv:3: column "y": .*float32/);
});

test('.npy files keep their shape: 2-D gives --dim, a mismatching --dim is refused, 1-D is a flat list', () => {
  const npy = (array, shape) => {
    let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
    header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
    return Buffer.concat([
      Buffer.from('\x93NUMPY\x01\x00', 'latin1'),
      Buffer.from(Uint16Array.of(header.length).buffer),
      Buffer.from(header, 'latin1'),
      Buffer.from(array.buffer),
    ]);
  };
  const q = Float32Array.from({ length: 3 * 4 }, (_, i) => Math.sin(i));
  const k = Float32Array.from({ length: 5 * 4 }, (_, i) => Math.cos(0.5 * i));
  writeFileSync(at('q2.npy'), npy(q, [3, 4]));
  writeFileSync(at('k2.npy'), npy(k, [5, 4]));
  writeFileSync(at('k1.npy'), npy(k, [20]));
  writeFileSync(at('v-wrong.npy'), npy(new Float32Array(8), [4, 2]));
  const base = ok(
    'attention',
    '--queries',
    'q.f32',
    '--keys',
    'k.f32',
    '--values',
    'v.npy',
    '--dim',
    '4',
    '--format',
    'json',
  );
  assert.equal(
    ok('attention', '--queries', 'q2.npy', '--keys', 'k2.npy', '--values', 'v.npy', '--format', 'json'),
    base,
    'dim from the shape',
  );
  assert.equal(
    ok('attention', '--queries', 'q2.npy', '--keys', 'k1.npy', '--values', 'v.npy', '--format', 'json'),
    base,
  );
  assert.equal(
    ok('attention', '--queries', 'q.f32', '--keys', 'k1.npy', '--values', 'v.npy', '--dim', '4', '--format', 'json'),
    base,
  );
  const cases = [
    [
      ['--queries', 'q2.npy', '--keys', 'k2.npy', '--values', 'v.npy', '--dim', '2'],
      2,
      /--dim 2 does not match --queries q2\.npy, of shape \(3, 4\): rows of 4/,
    ],
    [['--queries', 'q.f32', '--keys', 'k1.npy', '--values', 'v.npy'], 2, /--dim is required/],
    [
      ['--queries', 'q2.npy', '--keys', 'k2.npy', '--values', 'v-wrong.npy'],
      1,
      /--values has shape \(4, 2\): 4 rows, for 5 keys/,
    ],
  ];
  for (const [args, code, pattern] of cases) {
    const r = cli('attention', ...args);
    assert.equal(r.code, code, `${args.join(' ')}: exit ${r.code} (${r.stderr})`);
    assert.match(r.stderr, pattern, args.join(' '));
  }
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
    { cwd: dir, encoding: 'utf8', timeout: 120_000 },
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
    { cwd: dir, encoding: 'utf8', timeout: 120_000 },
  );
  assert.equal(r.stdout, 'x,y,fitted,weight\n');
  assert.equal(r.stderr, '');
  assert.equal(r.status, 0);
});

test("fit, predict and select-bandwidth print the result's warnings on stderr (one line each), never on stdout", async () => {
  // Yearly sunspots (309 years, public domain; the demo's copy of statsmodels' data): leave-one-out CV chooses an h
  // below the one-year spacing, and the fit interpolates.
  const { DATASETS } = await import('../../web/demo/data/datasets.js');
  const set = DATASETS.sunspots;
  writeFileSync(at('sunspots.csv'), 'year,spots\n' + set.rows.map((r) => r.join(',')).join('\n') + '\n');
  const ka = await init({ threads: 1 });
  const model = ka.kernelRegression(
    set.rows.map((r) => r[0]),
    set.rows.map((r) => r[1]),
    { dim: 1 },
  );
  const want = model.warnings;
  model.dispose();
  assert.ok(
    want.some((w) => w.code === 'interpolating'),
    'the API warns',
  );
  const runs = [
    ['fit', 'sunspots.csv', '--x', 'year', '--y', 'spots', '--format', 'json'],
    ['predict', 'sunspots.csv', '--x', 'year', '--y', 'spots', '--grid', '3'],
    ['select-bandwidth', 'sunspots.csv', '--x', 'year', '--y', 'spots', '--format', 'json'],
  ];
  for (const args of runs) {
    const r = cli(...args);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stderr.split('\n').filter(Boolean);
    assert.ok(lines.length >= 1, `${args[0]}: no warning`);
    for (const line of lines)
      assert.match(line, /^warning \[(interpolating|precision|guard)\]: \S/, `${args[0]}: ${line}`);
    assert.ok(
      lines.some((l) => /^warning \[interpolating\]: .*below the median spacing 1\b/.test(l)),
      `${args[0]}: ${r.stderr}`,
    );
    assert.doesNotMatch(r.stdout, /warning/);
    if (args[0] === 'fit')
      assert.deepEqual(
        lines,
        want.map((w) => `warning [${w.code}]: ${w.message}`),
      );
    if (args.includes('json')) JSON.parse(r.stdout); // stdout is the result alone
  }
});

test("--robust [N] (fit, predict) follows the float64 bisquare loop and names the rejected rows; --variance local gives the API's local band", async () => {
  const { referenceRobustFit } = await import('../js/reference.mjs');
  const xs = Array.from({ length: 40 }, (_, i) => i / 39);
  const ys = xs.map((t, i) => Math.fround(Math.sin(4 * t) + 0.1 * Math.sin(7.3 * i * i) + (i % 7 === 3 ? 5 : 0)));
  writeFileSync(at('outliers.csv'), 'x,y\n' + xs.map((x, i) => `${x},${ys[i]}`).join('\n') + '\n');
  const range = Math.max(...ys) - Math.min(...ys);
  for (const [flags, iterations] of [
    [['--robust'], 3],
    [['--robust', '2'], 2],
    [['--robust=1'], 1],
  ]) {
    const grid = parseCsv(
      ok('predict', 'outliers.csv', '--x', 'x', '--y', 'y', '--bandwidth', '0.15', ...flags, '--grid', '5'),
    );
    const q = grid.slice(1).map((r) => Number(r[0]));
    const want = referenceRobustFit(
      xs.map(Math.fround),
      ys,
      q,
      { dim: 1, bandwidth: Math.fround(0.15) },
      iterations,
    ).mean;
    grid
      .slice(1)
      .forEach((r, i) =>
        assert.ok(Math.abs(Number(r[1]) - want[i]) < 1e-4 * range, `${flags} at ${q[i]}: ${r[1]} vs ${want[i]}`),
      );
  }
  const fit = JSON.parse(
    ok('fit', 'outliers.csv', '--x', 'x', '--y', 'y', '--bandwidth', '0.15', '--robust', '--format', 'json'),
  );
  assert.deepEqual(
    fit.rejected,
    xs.flatMap((_, i) => (i % 7 === 3 ? [i + 1] : [])),
  );
  assert.equal(JSON.parse(ok('fit', 'outliers.csv', '--x', 'x', '--y', 'y', '--format', 'json')).rejected, undefined);

  const rows = JSON.parse(
    ok(
      'predict',
      'sample.tsv',
      '--x',
      '1',
      '--y',
      '2',
      '--bandwidth',
      '0.1',
      '--at',
      'queries.tsv',
      '--at-x',
      'x',
      '--level',
      '0.9',
      '--variance',
      'local',
      '--format',
      'json',
    ),
  );
  const ka = await init({ threads: 1 });
  const model = ka.kernelRegression(X, Y, { dim: 1, bandwidth: 0.1 });
  const band = model.predictInterval([0.1, 0.5, 0.77], { level: 0.9, variance: 'local' });
  rows.forEach((r, i) =>
    assert.ok(
      Math.abs(r['y1.stderr'] - band.stderr[i]) < 1e-4 * band.stderr[i],
      `row ${i}: ${r['y1.stderr']} vs ${band.stderr[i]}`,
    ),
  );
  model.dispose();

  for (const [args, pattern] of [
    [
      ['predict', 'outliers.csv', '--x', 'x', '--y', 'y', '--grid', '3', '--variance', 'local'],
      /--variance needs --level/,
    ],
    [
      ['predict', 'outliers.csv', '--x', 'x', '--y', 'y', '--grid', '3', '--level', '0.9', '--variance', 'wide'],
      /--variance must be one of global, local/,
    ],
    [['fit', 'outliers.csv', '--x', 'x', '--y', 'y', '--robust', '0'], /--robust must be a positive integer; got "0"/],
  ]) {
    const r = cli(...args);
    assert.equal(r.code, 2, args.join(' '));
    assert.match(r.stderr, pattern);
  }
});

test('--bandwidth: the message fits the number of x columns; a negative number is a value, refused as such (not "ambiguous")', () => {
  writeFileSync(at('two-x.csv'), 'a,b,y\n' + X.map((x, i) => `${x},${(i * 7) % 11},${Y[i]}`).join('\n') + '\n');
  const cases = [
    [
      ['fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--bandwidth', 'abc'],
      /^kernel-attention: --bandwidth must be cv, aicc, scott, silverman, plugin or a positive number; got "abc"\n/,
    ],
    [
      ['fit', 'two-x.csv', '--x', 'a,b', '--y', 'y', '--bandwidth', 'abc'],
      /--bandwidth must be cv, aicc, scott, silverman, plugin, a positive number or 2 of them \(one per --x column\); got "abc"/,
    ],
    [
      ['fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--bandwidth', '-1'],
      /--bandwidth must be .*a positive number; got "-1"/,
    ],
    [
      ['predict', 'sample.csv', '--x', 'x', '--y', 'the y', '--grid', '3', '--level', '-0.5'],
      /--level must be between 0 and 1; got -0\.5/,
    ],
    [
      ['select-bandwidth', 'sample.csv', '--x', 'x', '--y', 'the y', '--exclude', '-1'],
      /--exclude must be a number >= 0; got "-1"/,
    ],
  ];
  for (const [args, pattern] of cases) {
    const r = cli(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code} (${r.stderr})`);
    assert.match(r.stderr, pattern, args.join(' '));
    assert.doesNotMatch(r.stderr, /ambiguous|or 1 of them/, args.join(' '));
  }
  // A negative value where one is allowed: the grid's ends.
  const rows = parseCsv(
    ok(
      'predict',
      'sample.csv',
      '--x',
      'x',
      '--y',
      'the y',
      '--bandwidth',
      '0.2',
      '--grid',
      '3',
      '--from',
      '-0.5',
      '--to',
      '1',
    ),
  );
  assert.deepEqual(
    rows.slice(1).map((r) => Number(r[0])),
    [-0.5, 0.25, 1],
  );
});

test('predict and lowess print numbers as fit does: 9 significant digits of the column (its range for predictions, so a large offset keeps its digits)', () => {
  const digits = (text) => text.split(/e/i)[0].replace(/^-/, '').replace('.', '').replace(/^0+/, '').length;
  const fit = parseCsv(ok('fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--bandwidth', '0.2'));
  for (const [name, value] of fit.slice(1))
    if (/^-?\d/.test(value)) assert.ok(digits(value) <= 9, `fit ${name} ${value}`);
  const args = ['sample.csv', '--x', 'x', '--y', 'the y', '--estimator', 'nadaraya-watson', '--bandwidth', '0.2'];
  const grid = [0, 0.25, 0.5, 0.75, 1];
  const want = nadarayaWatson(grid, 0.2);
  const rows = parseCsv(ok('predict', ...args, '--grid', '5', '--level', '0.9')).slice(1);
  rows.forEach((r, i) => {
    // y spans about 2.3, so 9 significant digits of it are 8 decimals.
    // The fit and its band (the standard error keeps 9 digits of its own).
    for (const cell of r.slice(1, 4)) assert.ok((cell.split('.')[1] ?? '').length <= 8, `predict row ${i}: ${r}`);
    assert.ok(Math.abs(Number(r[1]) - want[i]) < 1e-5, `predict ${r[1]} vs ${want[i]}`);
  });
  // The same sample 1.7e9 higher: the printed fit still follows the float64 loop to float32's precision on y's spread.
  writeFileSync(at('offset.csv'), 'x,y\n' + X.map((x, i) => `${x},${1.7e9 + Y[i]}`).join('\n') + '\n');
  const high = parseCsv(
    ok(
      'predict',
      'offset.csv',
      '--x',
      'x',
      '--y',
      'y',
      '--estimator',
      'nadaraya-watson',
      '--bandwidth',
      '0.2',
      '--grid',
      '5',
    ),
  ).slice(1);
  high.forEach((r, i) => {
    assert.ok((r[1].split('.')[1] ?? '').length <= 8, `offset predict row ${i}: ${r}`);
    assert.ok(Math.abs(Number(r[1]) - 1.7e9 - want[i]) < 1e-5, `offset predict ${r[1]} vs 1.7e9 + ${want[i]}`);
  });
  const smooth = parseCsv(ok('lowess', 'offset.csv', '--x', 'x', '--y', 'y')).slice(1);
  for (const r of smooth)
    assert.ok((r[2].split('.')[1] ?? '').length <= 8 && Math.abs(Number(r[2]) - 1.7e9) < 3, `lowess ${r}`);
});
