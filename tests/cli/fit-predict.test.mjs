// `kernel-attention fit` and `predict` on the 30-point sample: the model against the API; predictions (Nadaraya-Watson,
// local-linear with --span, local-quadratic, --robust) against float64 loops written here or in tests/js/reference.mjs;
// --variance local against the API's band; the digits printed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { init } from '../../web/src/index.js';
import { at, cli, ok, parseCsv, useTempDir } from './run.mjs';
import { X, Y, localQuadratic, nadarayaWatson, writeSampleFiles } from './sample.mjs';

useTempDir('ka-cli-fit-', writeSampleFiles);

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
  assert.equal(fit.neighbours, Math.floor(0.4 * X.length)); // R's loess: ⌊f·n⌋
  assert.equal(fit.rule, 'span');
  assert.deepEqual(fit.scale, [1]);
  for (const [args, message] of [
    [['--span', '0'], /--span must be a finite number > 0/],
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
