// Span bandwidths against R's loess(surface = "direct") (tests/fixtures/loess_r.json, made by
// tests/fixtures/make_loess.R): kernelRegression with the tricube kernel and `bandwidth: { span }` is R's direct loess
// of degree 0 (nadaraya-watson) and 1 (local-linear) in 1-D, where a product kernel and R's radial one are the same:
// the same ⌊f·n⌋-th neighbour, the radius grown by √f above f = 1, and for the symmetric family R's three robustness
// iterations. Fitted values and predictions (two queries beyond the data) to 1e-6 of range(y).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../web/src/index.js';
import { initOptions } from './build.mjs';

const ka = await init(initOptions);
const fixture = JSON.parse(readFileSync(new URL('../fixtures/loess_r.json', import.meta.url), 'utf8'));
const sets = new Map(fixture.datasets.map((s) => [s.name, s]));
const ESTIMATORS = ['nadaraya-watson', 'local-linear'];

const cases = fixture.cases.filter(
  (c) => c.surface === 'direct' && c.degree <= 1 && !c.weights && sets.get(c.dataset).dims === 1,
);

function worst(got, want) {
  let w = 0;
  for (let k = 0; k < want.length; k++) w = Math.max(w, Math.abs(got[k] - want[k]));
  return w;
}

test('1-D span fits are R\'s loess(surface = "direct") of degrees 0 and 1 on eight data sets', () => {
  const seen = new Set();
  for (const c of cases) {
    const set = sets.get(c.dataset);
    const what = `${c.dataset} degree ${c.degree} span ${c.span} ${c.family}`;
    const range = Math.max(...set.y) - Math.min(...set.y);
    const model = ka.kernelRegression(set.x, set.y, {
      dim: 1,
      kernel: 'tricube',
      estimator: ESTIMATORS[c.degree],
      bandwidth: { span: c.span },
      ...(c.family === 'symmetric' ? { robust: { iterations: 3 } } : {}),
    });
    const n = set.y.length;
    assert.equal(model.bandwidth.neighbours, Math.min(n, Math.floor(c.span * n)), `${what}: R's ⌊f·n⌋`);
    const fitted = model.predict(Float64Array.from(c.fittedIndex, (i) => set.x[i]));
    const errFit = worst(fitted, c.fitted);
    assert.ok(errFit <= 1e-6 * range, `${what}: fitted values off by ${errFit / range} of range(y)`);
    const errPredict = worst(model.predict(set.queries), c.predict);
    assert.ok(errPredict <= 1e-6 * range, `${what}: predictions off by ${errPredict / range} of range(y)`);
    model.dispose();
    seen.add(`${c.degree} ${c.span} ${c.family}`);
  }
  // Both degrees at every span (one at 0.3, below and above the old ⌈f·n⌉; one above 1), and robust fits.
  for (const key of ['0 0.3 gaussian', '1 0.3 gaussian', '0 1.2 gaussian', '1 1.2 gaussian', '1 0.75 symmetric'])
    assert.ok(seen.has(key), `cases cover ${key}`);
  assert.ok(cases.length >= 8 * 6, `${cases.length} cases`);
});

/** R's direct loess at q with radius r (scaled units): radial tricube weights, degree 0 or 1, in float64. */
function radialFit(x, y, dim, scale, q, r, degree) {
  const p = degree === 0 ? 1 : dim + 1;
  const a = Array.from({ length: p }, () => new Float64Array(p));
  const t = new Float64Array(p);
  for (let j = 0; j < y.length; j++) {
    const z = [1];
    let d2 = 0;
    for (let d = 0; d < dim; d++) {
      d2 += ((x[j * dim + d] - q[d]) / scale[d]) ** 2;
      z.push(x[j * dim + d] - q[d]);
    }
    const u = Math.sqrt(d2) / r;
    if (!(u < 1)) continue;
    const w = (1 - u ** 3) ** 3;
    for (let m = 0; m < p; m++) {
      t[m] += w * z[m] * y[j];
      for (let l = 0; l < p; l++) a[m][l] += w * z[m] * z[l];
    }
  }
  for (let c = 0; c < p; c++)
    // Gaussian elimination; the intercept is the fit
    for (let m = c + 1; m < p; m++) {
      const f = a[m][c] / a[c][c];
      for (let l = c; l < p; l++) a[m][l] -= f * a[c][l];
      t[m] -= f * t[c];
    }
  const b = new Float64Array(p);
  for (let m = p - 1; m >= 0; m--) {
    let s = t[m];
    for (let l = m + 1; l < p; l++) s -= a[m][l] * b[l];
    b[m] = s / a[m][m];
  }
  return b[0];
}

test("2-D spans find R's radius: a radial tricube loop at the model's per-query bandwidths gives R's direct fits", () => {
  // kernelRegression's compact kernels are products over the dimensions (docs/regression.md), R's tricube is of the
  // Euclidean distance: the fits differ by about 1e-2 of range(y). The radius is the shared part: the k-th neighbour's
  // distance after R's normalize, which the model reports as bandwidths = d(q) · scale.
  const planar = fixture.cases.filter(
    (c) => c.surface === 'direct' && c.degree <= 1 && c.family === 'gaussian' && sets.get(c.dataset).dims === 2,
  );
  assert.ok(planar.length >= 3 * 5, `${planar.length} cases`);
  for (const c of planar) {
    const set = sets.get(c.dataset);
    const what = `${c.dataset} degree ${c.degree} span ${c.span}`;
    const range = Math.max(...set.y) - Math.min(...set.y);
    const model = ka.kernelRegression(set.x, set.y, {
      dim: 2,
      kernel: 'tricube',
      estimator: ESTIMATORS[c.degree],
      bandwidth: { span: c.span },
    });
    const scale = model.bandwidth.scale;
    const { bandwidths } = model.predictInterval(set.queries);
    model.dispose();
    const got = c.predict.map((_, i) => {
      const q = set.queries.slice(2 * i, 2 * i + 2);
      return radialFit(set.x, set.y, 2, scale, q, bandwidths[2 * i] / scale[0], c.degree);
    });
    const err = worst(got, c.predict);
    assert.ok(err <= 1e-6 * range, `${what}: off by ${err / range} of range(y)`);
  }
});
