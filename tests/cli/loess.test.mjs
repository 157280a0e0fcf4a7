// `kernel-attention loess` against R's loess() (tests/fixtures/loess_r.json, made by tests/fixtures/make_loess.R):
// fitted values in the file's order, predictions at the rows of another file with R's se.fit and t band, and the
// statistics of --summary, for 1-D to 4-D data, both surfaces and families, prior weights and exact statistics; then
// R's NA outside the box, the flags refused by name, and the API's refusals in the flags' words.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { at, cli, ok, okWarnedWith, parseCsv, useTempDir } from './run.mjs';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/loess_r.json', import.meta.url), 'utf8'));
const sets = new Map(fixture.datasets.map((s) => [s.name, s]));

/** R's warnings (`warning [outside|pseudoinverse]: …` lines) the loess command may print on stderr. */
const LOESS_WARNINGS = ['outside', 'pseudoinverse'];

const names = (set) => Array.from({ length: set.dims }, (_, d) => `x${d + 1}`);
const rangeOf = (v) => Math.max(...v) - Math.min(...v);
const relative = (a, b) => Math.abs(a - b) / Math.abs(b);

/** Each data set as data.csv (x1 … xd, y, and w, the prior weights of the weighted cases) and queries.csv. */
useTempDir('ka-loess-cli-', () => {
  for (const set of sets.values()) {
    const d = set.dims;
    const weights = fixture.cases.find((c) => c.dataset === set.name && c.weights)?.weights;
    const head = [...names(set), 'y', ...(weights ? ['w'] : [])].join(',');
    const lines = set.y.map((y, i) => [...set.x.slice(i * d, (i + 1) * d), y, ...(weights ? [weights[i]] : [])]);
    writeFileSync(at(`${set.name}.csv`), `${head}\n${lines.map((l) => l.join(',')).join('\n')}\n`);
    const queries = Array.from({ length: set.queries.length / d }, (_, i) => set.queries.slice(i * d, (i + 1) * d));
    writeFileSync(at(`${set.name}-q.csv`), `${names(set).join(',')}\n${queries.map((q) => q.join(',')).join('\n')}\n`);
  }
});

/** The flags of a fixture case. */
const flagsOf = (c, set) => [
  `${set.name}.csv`,
  '--x',
  names(set).join(','),
  '--y',
  'y',
  '--span',
  String(c.span),
  '--degree',
  String(c.degree),
  '--family',
  c.family,
  '--surface',
  c.surface,
  '--statistics',
  c.statistics,
  ...(c.weights ? ['--weights', 'w'] : []),
];

// One case per kind: each dimension count, both surfaces and families, degrees 0-2, spans 0.3/0.75/1.2, weights, the
// exact statistics.
const PICKS = [
  ['cars', 0.75, 2, 'gaussian', 'interpolate', 'approximate', false],
  ['mcycle', 0.3, 2, 'symmetric', 'direct', 'approximate', false],
  ['lynx', 1.2, 0, 'gaussian', 'interpolate', 'approximate', false],
  ['Nile', 0.75, 2, 'gaussian', 'direct', 'exact', false],
  ['cars', 0.75, 2, 'symmetric', 'interpolate', 'approximate', true],
  ['airquality2', 0.75, 2, 'symmetric', 'direct', 'approximate', true],
  ['trees', 0.75, 1, 'gaussian', 'interpolate', 'exact', false],
  ['swiss4', 0.75, 2, 'gaussian', 'interpolate', 'approximate', false],
];

test("loess matches R's loess(): fitted values in the file's order, predict(se = TRUE) at --at rows, the statistics", () => {
  for (const [dataset, span, degree, family, surface, statistics, weighted] of PICKS) {
    const c = fixture.cases.find(
      (k) =>
        k.dataset === dataset &&
        k.span === span &&
        k.degree === degree &&
        k.family === family &&
        k.surface === surface &&
        k.statistics === statistics &&
        Boolean(k.weights) === weighted,
    );
    assert.ok(c, `fixture case ${dataset} ${span} ${degree} ${family} ${surface}`);
    const set = sets.get(dataset);
    const what = `${dataset} span ${span} degree ${degree} ${family} ${surface} ${statistics}${weighted ? ' weighted' : ''}`;
    const tol = 1e-7 * rangeOf(set.y); // 9 digits of range(y) are printed; the target is 1e-6 of it

    // The fitted values, one row per data row in the file's order: x, y, fitted, residual (and robustness).
    const rows = parseCsv(ok('loess', ...flagsOf(c, set)));
    const head = [...names(set), 'y', 'fitted', 'residual', ...(family === 'symmetric' ? ['robustness'] : [])];
    assert.deepEqual(rows[0], head, what);
    assert.equal(rows.length, set.y.length + 1, what);
    c.fittedIndex.forEach((i, j) => {
      const fitted = Number(rows[i + 1][set.dims + 1]);
      assert.ok(Math.abs(fitted - c.fitted[j]) <= tol, `${what}: fitted[${i}] ${fitted}, R ${c.fitted[j]}`);
      assert.ok(Math.abs(Number(rows[i + 1][set.dims + 2]) - (set.y[i] - c.fitted[j])) <= tol, `${what}: residual`);
    });

    // Predictions at the rows of another file with R's se.fit and its t band (JSON: R's NA is null).
    const answer = okWarnedWith(
      LOESS_WARNINGS,
      'loess',
      ...flagsOf(c, set),
      '--at',
      `${dataset}-q.csv`,
      '--se',
      '--format',
      'json',
    );
    const predicted = JSON.parse(answer.stdout);
    assert.equal(predicted.length, c.predict.length, what);
    const outside = c.predict.filter((p) => p === null).length;
    assert.equal(
      answer.warnings.some((w) => w.startsWith(`warning [outside]: ${outside} point`)),
      outside > 0,
      what,
    );
    c.predict.forEach((want, j) => {
      const p = predicted[j];
      if (want === null) {
        assert.equal(p.y, null, `${what}: query ${j} is outside the box: R's NA`);
        return;
      }
      assert.ok(Math.abs(p.y - want) <= tol, `${what}: predict[${j}] ${p.y}, R ${want}`);
      assert.ok(relative(p['y.stderr'], c.se[j]) <= 1e-7, `${what}: se[${j}] ${p['y.stderr']}, R ${c.se[j]}`);
      if (c.qt975 === null) return; // R's df is negative (qt NaN) for this fit
      assert.ok(Math.abs(p['y.upper'] - (want + c.qt975 * c.se[j])) <= tol, `${what}: upper[${j}]`);
      assert.ok(Math.abs(p['y.lower'] - (want - c.qt975 * c.se[j])) <= tol, `${what}: lower[${j}]`);
    });

    // R's print() and summary() statistics.
    const stats = JSON.parse(ok('loess', ...flagsOf(c, set), '--summary', '--format', 'json'));
    assert.equal(stats.n, set.y.length);
    for (const [key, want] of [
      ['enp', c.enp],
      ['residualScale', c.s],
      ['traceHat', c.traceHat],
      ['oneDelta', c.oneDelta],
      ['twoDelta', c.twoDelta],
      ['degreesOfFreedom', c.df],
    ]) {
      assert.ok(relative(stats[key], want) <= 1e-7, `${what}: ${key} ${stats[key]}, R ${want}`);
    }
  }
});

test("loess defaults are R's (span 0.75, degree 2, gaussian, interpolate); --se at the data gives R's se.fit there", () => {
  const set = sets.get('cars');
  const c = fixture.cases.find(
    (k) =>
      k.dataset === 'cars' &&
      k.span === 0.75 &&
      k.degree === 2 &&
      k.family === 'gaussian' &&
      k.surface === 'interpolate' &&
      k.statistics === 'approximate' &&
      !k.weights,
  );
  const rows = parseCsv(ok('loess', 'cars.csv', '--x', 'x1', '--y', 'y', '--se', '--level', '0.95'));
  assert.deepEqual(rows[0], ['x1', 'y', 'fitted', 'residual', 'lower', 'upper', 'stderr']);
  // The first and the last query are the smallest and largest speed, which are data rows (4 and 25).
  for (const [j, x] of [
    [0, 4],
    [7, 25],
  ]) {
    const row = rows.find((r) => Number(r[0]) === x);
    assert.ok(Math.abs(Number(row[2]) - c.predict[j]) <= 1e-7 * rangeOf(set.y), `fitted at ${x}`);
    assert.ok(relative(Number(row[6]), c.se[j]) <= 1e-7, `stderr at ${x}: ${row[6]}, R ${c.se[j]}`);
    assert.ok(Math.abs(Number(row[5]) - (c.predict[j] + c.qt975 * c.se[j])) <= 1e-7 * rangeOf(set.y), `upper at ${x}`);
  }
  const summary = ok('loess', 'cars.csv', '--x', '1', '--y', '2', '--summary');
  assert.match(summary, /^name,value\n/);
  const value = (name) => Number(summary.match(new RegExp(`^${name},(.*)$`, 'm'))[1]);
  assert.ok(relative(value('enp'), c.enp) <= 1e-7 && relative(value('residualScale'), c.s) <= 1e-7);
  assert.match(summary, /^span,0\.75$/m);
  assert.match(summary, /^surface,interpolate$/m);
});

test('loess: a query outside the box is NaN (R: NA) with a warning on stderr; --surface direct fits there', () => {
  const set = sets.get('cars');
  const r = cli('loess', 'cars.csv', '--x', 'x1', '--y', 'y', '--at', 'cars-q.csv');
  assert.equal(r.code, 0, r.stderr);
  const rows = r.stdout.trim().split('\n');
  assert.equal(rows.length, 11);
  assert.equal(rows[9], `${set.queries[8]},NaN`);
  assert.equal(rows[10], `${set.queries[9]},NaN`);
  assert.match(r.stderr, /^warning \[outside\]: 2 points are outside the data's box.*--surface direct/);
  const direct = ok('loess', 'cars.csv', '--x', 'x1', '--y', 'y', '--at', 'cars-q.csv', '--surface', 'direct');
  assert.doesNotMatch(direct, /NaN/);
  // A grid from the smallest to the largest x stays inside.
  assert.equal(ok('loess', 'cars.csv', '--x', 'x1', '--y', 'y', '--grid', '4').trim().split('\n').length, 5);
});

test('loess: bad flags are refused naming the flag (exit code 2) before the file is read; the API refusals name flags', () => {
  const cases = [
    [['--span', '0'], /--span must be a positive number; got "0"/],
    [['--degree', '3'], /--degree must be one of 0, 1, 2; got "3"/],
    [['--family', 'robust'], /--family must be one of gaussian, symmetric/],
    [['--surface', 'kd'], /--surface must be one of interpolate, direct/],
    [['--iterations', '0'], /--iterations must be an integer from 1 to 1000/],
    [['--cell', '-1'], /--cell must be a positive number/],
    [['--statistics', 'none', '--se'], /--statistics none gives no standard errors/],
    [['--level', '95'], /--level must be between 0 and 1/],
    [['--summary', '--grid', '5'], /--summary prints the statistics only/],
    [['--at', 'q.csv', '--grid', '5'], /give --at FILE2 or --grid N, not both/],
    [['--trace-hat', 'fast'], /--trace-hat must be one of exact, approximate/],
  ];
  for (const [extra, pattern] of cases) {
    const r = cli('loess', 'missing-file.csv', '--x', 'x', '--y', 'y', ...extra);
    assert.equal(r.code, 2, `${extra.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, pattern, extra.join(' '));
    assert.equal(r.stdout, '');
  }
  const five = cli('loess', 'missing-file.csv', '--x', 'a,b,c,d,e', '--y', 'y');
  assert.equal(five.code, 2);
  assert.match(five.stderr, /--x must name 1 to 4 columns; got 5/);
  assert.match(cli('loess', 'cars.csv', '--x', 'x1', '--y', 'y,x1').stderr, /--y must name one column/);
  // The API's own checks, worded as the flags: too few points per fit, a negative weight.
  const small = cli('loess', 'cars.csv', '--x', 'x1', '--y', 'y', '--span', '0.05');
  assert.equal(small.code, 1);
  assert.match(small.stderr, /^kernel-attention: --span must give at least 4 points per fit for degree 2 in 1-D/);
  writeFileSync(at('negative.csv'), 'x,y,w\n1,2,1\n2,3,-1\n3,5,1\n4,4,1\n5,6,1\n6,7,1\n7,9,1\n8,8,1\n');
  const negative = cli('loess', 'negative.csv', '--x', 'x', '--y', 'y', '--weights', 'w', '--span', '1');
  assert.equal(negative.code, 1);
  assert.match(negative.stderr, /--weights must be numbers ≥ 0; got -1 at index 1/);
  assert.match(ok('loess', '--help'), /^Usage: kernel-attention loess /);
});
