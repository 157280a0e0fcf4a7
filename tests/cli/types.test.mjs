// The CLI's --types (cli/types.mjs) on mtcars (mpg ~ hp + cyl + am) as a CSV file with cyl as 4, 6, 8: predictions
// against statsmodels' KernelReg (tests/fixtures/mixed.json), fit and select-bandwidth against the API, and the
// refusals; a text column (ToothGrowth's supp: VC, OJ) read as a category without --types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init } from '../../web/src/index.js';
import { at, cli, okWarned, rows, useTempDir } from './run.mjs';

const fixtures = JSON.parse(readFileSync(new URL('../fixtures/mixed.json', import.meta.url), 'utf8'));
const cars = fixtures.cases.find((c) => c.name === 'mtcars');
const CYL = [4, 6, 8];
const TYPES = ['continuous', 'ordered', 'unordered'];
const csv = (x, y) =>
  ['hp,cyl,am,mpg']
    .concat(
      Array.from({ length: x.length / 3 }, (_, i) => [x[3 * i], CYL[x[3 * i + 1]], x[3 * i + 2], y[i] ?? 0].join(',')),
    )
    .join('\n') + '\n';

useTempDir('ka-types-', () => {
  writeFileSync(at('mtcars.csv'), csv(cars.x, cars.y));
  writeFileSync(at('at.csv'), csv(cars.queries, []));
});

test("predict --types c,o,u equals statsmodels' Nadaraya–Watson fit, cyl read as its levels 4, 6, 8", () => {
  const fixed = cars.fixed[0];
  const out = okWarned(
    'predict',
    'mtcars.csv',
    '--x',
    'hp,cyl,am',
    '--y',
    'mpg',
    '--types',
    'c,o,u',
    '--estimator',
    'nadaraya-watson',
    '--bandwidth',
    fixed.bandwidth.join(','),
    '--at',
    'at.csv',
    '--gradient',
  );
  const table = rows(out);
  assert.equal(table.length, cars.queries.length / 3);
  const range = Math.max(...cars.y) - Math.min(...cars.y);
  table.forEach((r, i) => {
    assert.equal(Number(r[1]), CYL[cars.queries[3 * i + 1]], 'the level is printed as read');
    assert.ok(Math.abs(Number(r[3]) - fixed.nw[i]) <= 1e-6 * range, `row ${i}`);
    assert.equal(r[5], 'NaN', 'no derivative along cyl');
  });
});

test('fit and select-bandwidth --types print what the API chooses', async () => {
  const ka = await init();
  const model = ka.kernelRegression(cars.x, cars.y, { dim: 3, types: TYPES, orderedKernel: 'li-racine' });
  try {
    const fit = JSON.parse(
      okWarned(
        'fit',
        'mtcars.csv',
        '--x',
        'hp,cyl,am',
        '--y',
        'mpg',
        '--types',
        'c,o,u',
        '--ordered-kernel',
        'li-racine',
        '--format',
        'json',
      ),
    );
    fit.bandwidth.forEach((h, d) =>
      assert.ok(Math.abs(h - model.bandwidth[d]) <= 1e-8 * Math.abs(model.bandwidth[d]) + 1e-12),
    );
  } finally {
    model.dispose();
  }
  const chosen = ka.selectBandwidth(cars.x, cars.y, { dim: 3, types: TYPES, rule: 'aicc' });
  const selected = JSON.parse(
    okWarned(
      'select-bandwidth',
      'mtcars.csv',
      '--x',
      'hp,cyl,am',
      '--y',
      'mpg',
      '--types',
      'c,o,u',
      '--rule',
      'aicc',
      '--format',
      'json',
    ),
  );
  selected.bandwidth.forEach((h, d) =>
    assert.ok(Math.abs(h - chosen.bandwidth[d]) <= 1e-8 * Math.abs(chosen.bandwidth[d]) + 1e-12),
  );
});

test('--types mistakes are usage errors; a level the sample lacks is refused', () => {
  const fails = (pattern, ...args) => {
    const r = cli(...args);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, pattern);
  };
  const base = ['fit', 'mtcars.csv', '--x', 'hp,cyl,am', '--y', 'mpg'];
  fails(/--types must be 3 of c, u, o/, ...base, '--types', 'c,o');
  fails(/--types must be 3 of c, u, o/, ...base, '--types', 'c,x,u');
  fails(/--ordered-kernel needs --types/, ...base, '--ordered-kernel', 'li-racine');
  writeFileSync(at('odd.csv'), 'hp,cyl,am\n100,5,0\n');
  fails(/level 5, which the sample does not/, 'predict', ...base.slice(1), '--types', 'c,o,u', '--at', 'odd.csv');
});

test("a text column is a category: ToothGrowth's supp (VC, OJ) fits and predicts as the API's unordered codes", async () => {
  const file = fileURLToPath(new URL('../fixtures/files/toothgrowth.csv', import.meta.url));
  const lines = readFileSync(file, 'utf8').trim().split('\n').slice(1);
  const supp = ['VC', 'OJ']; // the codes in the order first seen
  const x = new Float64Array(lines.length * 2);
  const y = new Float64Array(lines.length);
  lines.forEach((line, i) => {
    const [len, s, dose] = line.split(',');
    x[2 * i] = supp.indexOf(s.replaceAll('"', ''));
    x[2 * i + 1] = Number(dose);
    y[i] = Number(len);
  });
  assert.ok(!x.some((v, i) => i % 2 === 0 && v < 0));
  writeFileSync(at('at-supp.csv'), 'supp,dose\nOJ,1\nVC,0.5\n"OJ",2\n');
  const ka = await init();
  const model = ka.kernelRegression(x, y, { dim: 2, types: ['unordered', 'continuous'] });
  try {
    const fit = JSON.parse(okWarned('fit', file, '--x', 'supp,dose', '--y', 'len', '--format', 'json', '-q'));
    fit.bandwidth.forEach((h, d) =>
      assert.ok(Math.abs(h - model.bandwidth[d]) <= 1e-8 * Math.abs(model.bandwidth[d]) + 1e-12, `bandwidth ${d}`),
    );
    const want = model.predict(new Float64Array([1, 1, 0, 0.5, 1, 2]));
    const table = rows(okWarned('predict', file, '--x', 'supp,dose', '--y', 'len', '--at', 'at-supp.csv', '-q'));
    assert.deepEqual(
      table.map((r) => r[0]),
      ['OJ', 'VC', 'OJ'],
      'the labels are printed back',
    );
    table.forEach((r, i) => assert.ok(Math.abs(Number(r[2]) - want[i]) <= 1e-6 * Math.abs(want[i]), `row ${i}`));
  } finally {
    model.dispose();
  }
  const fails = (pattern, ...args) => {
    const r = cli(...args);
    assert.equal(r.code === 0, false, r.stdout);
    assert.match(r.stderr, pattern);
  };
  writeFileSync(at('at-odd.csv'), 'supp,dose\nXX,1\n');
  fails(
    /level "XX", which the sample does not \(its levels: VC, OJ\)/,
    'predict',
    file,
    '--x',
    'supp,dose',
    '--y',
    'len',
    '--at',
    'at-odd.csv',
  );
  fails(
    /column "supp" holds text, which is read as a category: u/,
    'fit',
    file,
    '--x',
    'supp,dose',
    '--y',
    'len',
    '--types',
    'o,c',
  );
  fails(
    /column "supp" holds text, which is read as a category: u/,
    'fit',
    file,
    '--x',
    'supp,dose',
    '--y',
    'len',
    '--types',
    'c,c',
  );
  // A command without categories (lowess) still refuses text as not a number.
  fails(/column "supp": expected a finite number; got "VC"/, 'lowess', file, '--x', 'supp', '--y', 'len');
});
