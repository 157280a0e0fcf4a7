// selectBandwidth / cvScore against statsmodels 0.13.5 (tests/fixtures/statsmodels_cv.json) and the documented rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, KernelAttentionError } from '../../web/src/index.js';

const ka = await init();
const fixtures = JSON.parse(readFileSync(new URL('../fixtures/statsmodels_cv.json', import.meta.url), 'utf8'));

for (const c of fixtures.cases) {
  const x = Float32Array.from(c.x),
    y = Float32Array.from(c.y);

  test(`${c.name}: the CV score equals statsmodels' cv_loo at every stored bandwidth (1e-4 relative)`, () => {
    for (const { bandwidth, score } of c.cv) {
      const got = ka.cvScore(x, y, { dim: c.dim, estimator: 'nadaraya-watson', bandwidth });
      assert.ok(Math.abs(got - score) <= 1e-4 * score, `h = ${bandwidth}: ${got} vs ${score}`);
    }
  });

  test(`${c.name}: the CV-selected bandwidth scores no worse than statsmodels' cv_ls`, () => {
    const chosen = ka.selectBandwidth(x, y, {
      dim: c.dim,
      estimator: 'nadaraya-watson',
      rule: 'cv',
      perDimension: c.dim > 1,
    });
    assert.ok(chosen.bandwidth.every((h) => h > 0));
    assert.ok(
      chosen.score <= c.cv_ls.score * (1 + 1e-6),
      `ours ${chosen.score} (h = ${chosen.bandwidth}) vs statsmodels ${c.cv_ls.score}`,
    );
    assert.equal(chosen.curve.scores.length * c.dim, chosen.curve.bandwidths.length);
    assert.ok(Math.min(...chosen.curve.scores) >= chosen.score * (1 - 1e-9));
  });

  test(`${c.name}: Scott and Silverman follow their documented formulas (1e-6)`, () => {
    const factor = c.n ** (-1 / (c.dim + 4));
    const scott = ka.selectBandwidth(x, y, { dim: c.dim, rule: 'scott' });
    const silverman = ka.selectBandwidth(x, y, { dim: c.dim, rule: 'silverman' });
    for (let d = 0; d < c.dim; d++) {
      const want = [c.std[d] * factor, 0.9 * Math.min(c.std[d], c.iqr[d] / 1.349) * factor];
      assert.ok(Math.abs(scott.bandwidth[d] - want[0]) <= 1e-6 * want[0], `scott ${scott.bandwidth[d]} vs ${want[0]}`);
      assert.ok(
        Math.abs(silverman.bandwidth[d] - want[1]) <= 1e-6 * want[1],
        `silverman ${silverman.bandwidth[d]} vs ${want[1]}`,
      );
    }
    assert.ok(Math.abs(scott.score - ka.cvScore(x, y, { dim: c.dim, bandwidth: Array.from(scott.bandwidth) })) < 1e-12);
  });
}

test('bad arguments give typed errors naming them, and inputs are not mutated', () => {
  const x = Float32Array.from([0, 0.5, 1]),
    y = Float32Array.from([1, 2, 3]);
  const copies = [x.slice(), y.slice()];
  const cases = [
    [() => ka.selectBandwidth(x, y), 'options'],
    [() => ka.selectBandwidth(x, y, { dim: 1, rule: 'aic' }), 'options.rule'],
    [() => ka.selectBandwidth(x, y, { dim: 1, kernel: 'softmax' }), 'options.kernel'],
    [() => ka.selectBandwidth(x, y, { dim: 1, estimator: 'local-cubic' }), 'options.estimator'],
    [() => ka.selectBandwidth(x, y, { dim: 1, perDimension: 'yes' }), 'options.perDimension'],
    [() => ka.selectBandwidth(x, y, { dim: 1, methd: 'cv' }), 'options.methd'],
    [() => ka.selectBandwidth([0], [1], { dim: 1 }), 'x'],
    [() => ka.selectBandwidth(x, [1, 2], { dim: 1 }), 'y'],
    [() => ka.cvScore(x, y, { dim: 1 }), 'options.bandwidth'],
    [() => ka.cvScore(x, y, { dim: 1, bandwidth: -1 }), 'options.bandwidth'],
  ];
  for (const [call, argument] of cases) {
    assert.throws(call, (e) => e instanceof KernelAttentionError && e.argument === argument, argument);
  }
  assert.deepEqual([x, y], copies);
  assert.ok(ka.selectBandwidth(x, y, { dim: 1 }).bandwidth[0] > 0);
});

test('a compact kernel never picks a bandwidth that leaves a point without neighbours', () => {
  const x = Float32Array.from([0, 0.1, 0.2, 5, 5.1, 9]),
    y = Float32Array.from([0, 1, 0, 1, 0, 1]);
  const chosen = ka.selectBandwidth(x, y, { dim: 1, kernel: 'epanechnikov' });
  assert.ok(Number.isFinite(chosen.score));
  assert.ok(chosen.bandwidth[0] > 3.9, `h = ${chosen.bandwidth[0]}: the point at 9 needs a neighbour within h`);
});
