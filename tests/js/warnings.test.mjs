// medianSpacings (warnings.js, the module's median_spacing), which the 'interpolating' warning compares bandwidths
// with: the median gap between sorted distinct values, against a plain sort-everything reference on random samples with
// ties and repeats, and past the size where the module's radix sort takes over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeEngine } from '../../web/src/engine.js';
import { medianSpacings } from '../../web/src/warnings.js';
import { countedModule } from './counted.mjs';
import { mulberry32 } from './reference.mjs';

function reference(x, n, dim, c) {
  const v = Array.from({ length: n }, (_, i) => x[i * dim + c]).sort((a, b) => a - b);
  const gaps = [];
  for (let i = 1; i < n; i++) if (v[i] > v[i - 1]) gaps.push(v[i] - v[i - 1]);
  if (!gaps.length) return 0;
  gaps.sort((a, b) => a - b);
  const at = 0.5 * (gaps.length - 1);
  const k = Math.floor(at);
  return gaps[k] + (at - k) * ((gaps[k + 1] ?? gaps[k]) - gaps[k]);
}

test('medianSpacings is the median gap between sorted distinct values (ties, repeats, 2-D columns), memory given back', async () => {
  const { module, live } = await countedModule();
  const engine = makeEngine(module);
  const rand = mulberry32(41);
  const spacings = (x, n, dim) => Array.from(medianSpacings(engine, x, n, dim));
  for (let t = 0; t < 2000; t++) {
    const n = t % 500 === 0 ? 5000 + t : 1 + Math.floor(rand() * 80);
    const dim = 1 + (t % 2);
    const levels = 1 + (t % 25);
    const x = Float64Array.from({ length: n * dim }, () => Math.floor(rand() * levels) * 0.37 + (t % 3 ? rand() : 0));
    const want = Array.from({ length: dim }, (_, c) => reference(x, n, dim, c));
    assert.deepEqual(spacings(x, n, dim), want, `case ${t}`);
  }
  assert.deepEqual(spacings([5, 5, 5], 3, 1), [0]);
  assert.deepEqual(spacings([0, 1, 3, 6], 4, 1), [2]);
  assert.equal(live.size, 0);
});

test("'sparse-points': a choice where the criterion turns finite (a skewed x's isolated tail) is flagged, others not", async () => {
  const { init } = await import('../../web/src/index.js');
  const ka = await init({ threads: 1 });
  const rand = mulberry32(2005);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const n = 2000;
  const x = Float64Array.from({ length: n }, () => Math.exp(normal())); // lognormal: a long, sparse right tail
  const y = Float64Array.from(x, (v) => Math.log(v) + 0.3 * normal());
  const codes = (warnings) => warnings.map((w) => w.code);
  const selection = ka.selectBandwidth(x, y, { dim: 1 });
  const h = selection.bandwidth[0];
  // The claim itself, by the exact criterion: infinite just below the choice, finite at it.
  assert.equal(ka.cvScore(x, y, { dim: 1, bandwidth: 0.97 * h }), Infinity);
  assert.ok(Number.isFinite(ka.cvScore(x, y, { dim: 1, bandwidth: h })));
  assert.ok(codes(selection.warnings).includes('sparse-points'), JSON.stringify(selection.warnings));
  const warning = selection.warnings.find((w) => w.code === 'sparse-points');
  assert.match(warning.message, /median spacings/);
  assert.match(warning.message, /nadaraya-watson/);
  // The default fit's model says it too (its bandwidth is the selection's).
  assert.ok(codes(ka.kernelRegression(x, y, { dim: 1 }).warnings).includes('sparse-points'));
  // What the advice says works: log x; Nadaraya–Watson (one neighbour suffices); and a sample without such a tail.
  const logged = Float64Array.from(x, Math.log);
  assert.ok(!codes(ka.selectBandwidth(logged, y, { dim: 1 }).warnings).includes('sparse-points'));
  assert.ok(!codes(ka.kernelRegression(logged, y, { dim: 1 }).warnings).includes('sparse-points'));
  assert.ok(
    !codes(ka.selectBandwidth(x, y, { dim: 1, estimator: 'nadaraya-watson' }).warnings).includes('sparse-points'),
  );
  const uniform = Float64Array.from({ length: n }, () => rand());
  const wave = Float64Array.from(uniform, (v) => Math.sin(6 * v) + 0.3 * normal());
  assert.ok(!codes(ka.selectBandwidth(uniform, wave, { dim: 1 }).warnings).includes('sparse-points'));
});
