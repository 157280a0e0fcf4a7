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
