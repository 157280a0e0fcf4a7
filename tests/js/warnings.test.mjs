// medianSpacing (warnings.js), which the 'interpolating' warning compares bandwidths with: the median gap between
// sorted distinct values, against a plain sort-everything reference on random samples with ties and repeats.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { medianSpacing } from '../../web/src/warnings.js';
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

test('medianSpacing is the median gap between sorted distinct values (ties, repeats, 2-D columns)', () => {
  const rand = mulberry32(41);
  for (let t = 0; t < 2000; t++) {
    const n = 1 + Math.floor(rand() * 80);
    const dim = 1 + (t % 2);
    const levels = 1 + (t % 25);
    const x = Float64Array.from({ length: n * dim }, () => Math.floor(rand() * levels) * 0.37 + (t % 3 ? rand() : 0));
    for (let c = 0; c < dim; c++) assert.equal(medianSpacing(x, n, dim, c), reference(x, n, dim, c), `case ${t}`);
  }
  assert.equal(medianSpacing([5, 5, 5], 3, 1, 0), 0);
  assert.equal(medianSpacing([0, 1, 3, 6], 4, 1, 0), 2);
});
