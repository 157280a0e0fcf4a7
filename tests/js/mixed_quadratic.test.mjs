// Mixed data with estimator 'local-quadratic': the quadratic in the continuous columns only, the discrete columns in
// the weights (docs/regression.md, "Mixed data"). Checked against float64 loops: per query, reference.mjs's weighted
// least squares on the continuous offsets (designRow: 1, u, u²) with observation weights set to the discrete factors
// of the query's levels, written out here from the kernels' definitions (Aitchison–Aitken, Wang–van Ryzin). On
// mtcars and ChickWeight (tests/fixtures/mixed.json): fits, slopes, tr L, leave-one-out CV, the (h, λ) search, and
// the stand-in column (every column discrete: Nadaraya–Watson).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../web/src/index.js';
import { initOptions } from './build.mjs';
import { referenceLocalFit, referenceLocalSlope } from './reference.mjs';

const ka = await init(initOptions);
const fixtures = JSON.parse(readFileSync(new URL('../fixtures/mixed.json', import.meta.url), 'utf8'));
const TYPES = { c: 'continuous', u: 'unordered', o: 'ordered' };
const LQ = 'local-quadratic';
const range = (y) => Math.max(...y) - Math.min(...y);

/** The discrete kernel's factor between levels a and b of a column with `levels` levels at λ. */
function discreteFactor(type, levels, lambda, a, b) {
  if (type === 'u') return a === b ? 1 - lambda : lambda / (levels - 1);
  return a === b ? 1 - lambda : ((1 - lambda) / 2) * lambda ** Math.abs(a - b); // Wang–van Ryzin (ordered default)
}

/** The case's sample split: continuous columns (n × cols) and, per point, its levels. */
function split(c, x) {
  const dim = c.types.length;
  const n = x.length / dim;
  const cont = [];
  const levels = [];
  for (let i = 0; i < n; i++) {
    const row = [];
    for (let d = 0; d < dim; d++) (c.types[d] === 'c' ? cont : row).push(x[i * dim + d]);
    levels.push(row);
  }
  return { cont, levels, cols: cont.length / n };
}

/**
 * The float64 mixed local-quadratic loop at each query: reference.mjs's fit of the continuous part with observation
 * weights ω_j = Π_discrete L(query's level, x_j's level) (0 for `heldOut`, the leave-one-out point).
 */
function referenceMixed(c, bandwidth, queries, { heldOut = -1, slope = false } = {}) {
  const s = split(c, c.x);
  const q = split(c, queries);
  const h = bandwidth.filter((_, d) => c.types[d] === 'c');
  const discrete = c.types.map((t, d) => [t, d]).filter(([t]) => t !== 'c');
  const out = [];
  for (let i = 0; i < q.levels.length; i++) {
    const weights = s.levels.map((lv, j) =>
      j === heldOut
        ? 0
        : discrete.reduce((w, [t, d], k) => w * discreteFactor(t, c.levels[d], bandwidth[d], q.levels[i][k], lv[k]), 1),
    );
    const xq = q.cont.slice(i * s.cols, (i + 1) * s.cols);
    const options = { dim: s.cols, bandwidth: h, estimator: LQ, weights };
    out.push(slope ? referenceLocalSlope(s.cont, c.y, xq, options) : referenceLocalFit(s.cont, c.y, xq, options));
  }
  return out;
}

function assertClose(got, want, tolerance, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  assert.ok(worst <= tolerance, `${what}: max error ${worst} > ${tolerance}`);
}

for (const name of ['mtcars', 'ChickWeight']) {
  const c = fixtures.cases.find((k) => k.name === name);
  const dim = c.types.length;
  const types = c.types.map((t) => TYPES[t]);
  // local_quadratic.test.mjs's bound: the moments are float32 sums, and mtcars' second bandwidth (λ = 0 for cyl)
  // extrapolates a cell's quadratic far from its points (hp 93 among the 8-cylinder cars' 150-335; the slope pivot ratio
  // 1.3e-2, just above the guard's floor), where they lose 1.2e-5 of range(y).
  const tolerance = 2e-5 * range(c.y);
  c.fixed.forEach((f, k) => {
    test(`${name} ${k}: local-quadratic fits, slopes and tr L equal the float64 loop (quadratic in h only)`, () => {
      const model = ka.kernelRegression(c.x, c.y, { dim, types, bandwidth: f.bandwidth, estimator: LQ });
      try {
        const queries = c.queries.slice(0, 40 * dim);
        const want = referenceMixed(c, f.bandwidth, queries).map((r) => r.mean[0]);
        assertClose(model.predict(queries), want, tolerance, 'fit');
        // Local-linear on the same data differs: the test can tell the degrees apart.
        const linear = ka.kernelRegression(c.x, c.y, { dim, types, bandwidth: f.bandwidth });
        try {
          const worst = Math.max(...linear.predict(queries).map((v, i) => Math.abs(v - want[i])));
          assert.ok(worst > 20 * tolerance, `local-linear is ${worst} from the quadratic loop`);
        } finally {
          linear.dispose();
        }
        const h = f.bandwidth[c.types.indexOf('c')];
        const slopes = referenceMixed(c, f.bandwidth, queries, { slope: true }).map((r) => r.slope[0]);
        const g = model.gradient(queries).gradient;
        const along = c.types.indexOf('c');
        const got = slopes.map((_, i) => g[i * dim + along]);
        assertClose(got, slopes, (1e-4 * range(c.y)) / h, 'slope along the continuous column');
        const trace = referenceMixed(c, f.bandwidth, c.x).reduce((t, r, i) => t + r.ell[i], 0);
        assert.ok(Math.abs(model.effectiveDegreesOfFreedom - trace) <= 1e-5 * trace, `tr L ${trace}`);
      } finally {
        model.dispose();
      }
    });
  });
  test(`${name}: local-quadratic leave-one-out CV equals the float64 loop; the (h, λ) search finds no worse`, () => {
    const bandwidth = c.fixed[0].bandwidth;
    let sum = 0;
    for (let i = 0; i < c.n; i++) {
      const [fit] = referenceMixed(c, bandwidth, c.x.slice(i * dim, (i + 1) * dim), { heldOut: i });
      sum += (c.y[i] - fit.mean[0]) ** 2;
    }
    const want = sum / c.n;
    const got = ka.cvScore(c.x, c.y, { dim, types, bandwidth, estimator: LQ });
    // The criterion runs in double up to 500 points, in float32 above (as mixed.test.mjs says).
    assert.ok(Math.abs(got - want) <= (c.n <= 500 ? 1e-7 : 1e-5) * want, `CV ${got} against ${want}`);
    const s = ka.selectBandwidth(c.x, c.y, { dim, types, estimator: LQ });
    assert.ok(Number.isFinite(s.score) && s.score <= got * (1 + 1e-9), `search ${s.score} against ${got}`);
  });
}

test('every column discrete: local-quadratic is Nadaraya–Watson (the stand-in column has no spread)', () => {
  const x = [0, 0, 1, 1, 2, 2, 0, 1, 2];
  const y = [1, 2, 3, 4, 5, 6, 1.5, 3.5, 5.5];
  const options = { dim: 1, types: ['unordered'], bandwidth: [0.3] };
  const lq = ka.kernelRegression(x, y, { ...options, estimator: LQ });
  const nw = ka.kernelRegression(x, y, { ...options, estimator: 'nadaraya-watson' });
  try {
    assert.deepEqual(lq.predict([0, 1, 2]), nw.predict([0, 1, 2]));
  } finally {
    lq.dispose();
    nw.dispose();
  }
});
