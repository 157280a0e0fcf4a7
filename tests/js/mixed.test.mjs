// Mixed data (issue 33): categorical and ordered predictors against statsmodels' KernelReg and float64 loops on R's
// ChickWeight, mtcars, ToothGrowth and statsmodels' fair (tests/fixtures/make_mixed.py), statsmodels' two mixed-data
// tests, labels, the bandwidth array's λ, errors, async forms and the heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../web/src/index.js';
import { makeEngine } from '../../web/src/engine.js';
import { makeBandwidth } from '../../web/src/bandwidth.js';
import { makeRegression } from '../../web/src/regression.js';
import { countedModule } from './counted.mjs';
import { initOptions } from './build.mjs';

const ka = await init(initOptions);
// A module whose malloc and free are counted (memory.test.mjs's), for the heap test at the end.
const counted = await countedModule();
const fixtures = JSON.parse(readFileSync(new URL('../fixtures/mixed.json', import.meta.url), 'utf8'));
const TYPES = { c: 'continuous', u: 'unordered', o: 'ordered' };

const range = (y) => Math.max(...y) - Math.min(...y);
function assertClose(got, want, tolerance, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  let worst = 0;
  for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  assert.ok(worst <= tolerance, `${what}: max error ${worst} > ${tolerance}`);
}
const relative = (got, want, tolerance, what) =>
  assert.ok(Math.abs(got - want) <= tolerance * Math.abs(want), `${what}: ${got} against ${want}`);

for (const c of fixtures.cases) {
  const dim = c.types.length;
  const types = c.types.map((t) => TYPES[t]);
  const tolerance = 1e-6 * range(c.y);
  // The criterion runs in double up to 500 points, in float32 above (cpp/core/stats/bandwidth_detail.h).
  const cvTolerance = c.n <= 500 ? 1e-7 : 1e-5;
  c.fixed.forEach((f, k) => {
    test(`${c.name} ${k}: Nadaraya–Watson fits equal statsmodels' KernelReg to 1e-6 of range(y)`, () => {
      const model = ka.kernelRegression(c.x, c.y, { dim, types, bandwidth: f.bandwidth, estimator: 'nadaraya-watson' });
      try {
        assert.deepEqual([...model.bandwidth], f.bandwidth);
        assertClose(model.predict(c.queries), f.nw, tolerance, 'against statsmodels');
        assertClose(model.predict(c.queries), f.nwLoop, tolerance, 'against the float64 loop');
        relative(model.effectiveDegreesOfFreedom, f.traceNw, 1e-5, 'tr L');
      } finally {
        model.dispose();
      }
    });
    test(`${c.name} ${k}: local-linear fits equal a float64 WLS loop (continuous design, product weights)`, () => {
      const model = ka.kernelRegression(c.x, c.y, { dim, types, bandwidth: f.bandwidth });
      try {
        assertClose(model.predict(c.queries), f.ll, tolerance, 'against the loop');
        relative(model.effectiveDegreesOfFreedom, f.traceLl, 1e-5, 'tr L');
      } finally {
        model.dispose();
      }
    });
    test(`${c.name} ${k}: cvScore equals the float64 leave-one-out CV and statsmodels' cv_loo`, () => {
      const options = { dim, types, bandwidth: f.bandwidth };
      relative(ka.cvScore(c.x, c.y, { ...options, estimator: 'nadaraya-watson' }), f.cvNw, cvTolerance, 'NW');
      relative(
        ka.cvScore(c.x, c.y, { ...options, estimator: 'nadaraya-watson' }),
        f.cvNwStatsmodels,
        cvTolerance,
        'sm',
      );
      relative(ka.cvScore(c.x, c.y, options), f.cvLl, cvTolerance, 'LL');
    });
  });
  for (const [reg, estimator] of [
    ['lc', 'nadaraya-watson'],
    ['ll', 'local-linear'],
  ]) {
    test(`${c.name}: the ${estimator} CV choice is no worse than statsmodels' cv_ls bandwidth (in range)`, () => {
      const sm = c.statsmodelsCvLs[reg];
      const s = ka.selectBandwidth(c.x, c.y, { dim, types, estimator });
      // null: statsmodels' choice, λ clipped into range, leaves some held-out fit undefined (e.g. Wang–van Ryzin at
      // λ = 1, where every weight is 0): any finite CV is no worse.
      assert.ok(Number.isFinite(s.score));
      if (sm.cv !== null)
        assert.ok(s.score <= sm.cv * (1 + 1e-6), `CV ${s.score} against statsmodels' ${sm.cv} at ${sm.inRange}`);
      c.types.forEach((t, d) => {
        if (t === 'c') assert.ok(s.bandwidth[d] > 0);
        else assert.ok(s.bandwidth[d] >= 0 && s.bandwidth[d] <= (t === 'u' ? 1 - 1 / c.levels[d] : 1), `λ ${d}`);
      });
      relative(ka.cvScore(c.x, c.y, { dim, types, estimator, bandwidth: s.bandwidth }), s.score, 1e-12, 'rescored');
    });
  }
}

test('labels are coded in sorted order: ToothGrowth with supp as OJ / VC fits as its codes do', () => {
  const c = fixtures.cases.find((k) => k.name === 'ToothGrowth');
  const labels = c.labels['0'];
  const labelled = c.x.map((v, i) => (i % 2 === 0 ? labels[v] : v));
  const options = { dim: 2, types: ['unordered', 'continuous'], bandwidth: c.fixed[0].bandwidth };
  const byCode = ka.kernelRegression(c.x, c.y, options);
  const byLabel = ka.kernelRegression(labelled, c.y, options);
  try {
    const queries = [labels[0], 1, labels[1], 0.5, 1, 2]; // labels or codes, in one query array
    assert.deepEqual(byLabel.predict(queries), byCode.predict([0, 1, 1, 0.5, 1, 2]));
    assert.throws(
      () => byLabel.predict(['XX', 1]),
      (e) => e.code === 'BadArgument' && /labels \(OJ, VC\)/.test(e.message),
    );
  } finally {
    byCode.dispose();
    byLabel.dispose();
  }
});

// statsmodels' test_ordered_lc_cvls: R np's Italy data (gdp ~ ordered(year)), R's bandwidth, fit and R².
const italy = fixtures.italy;
for (const [kernel, key] of [
  ['wang-van-ryzin', 'wangVanRyzin'],
  ['li-racine', 'liRacine'],
]) {
  test(`Italy: the ${kernel} CV score along λ equals the float64 loop`, () => {
    const options = { dim: 1, types: ['ordered'], orderedKernel: kernel, estimator: 'nadaraya-watson' };
    italy.cvGrid.lambda.forEach((lambda, k) => {
      const score = ka.cvScore(italy.codes, italy.gdp, { ...options, bandwidth: [lambda] });
      const want = italy.cvGrid[key][k];
      // null: no held-out fit is defined (Wang–van Ryzin at λ = 1 weighs every key 0); the score is then +inf.
      if (want === null) assert.equal(score, Infinity, `λ ${lambda}`);
      else relative(score, want, 1e-7, `λ ${lambda}`);
    });
  });
}

test("Italy (statsmodels' test_ordered_lc_cvls): λ, the fit and R² as R's np gives them, to statsmodels' 1e-2", () => {
  const model = ka.kernelRegression(italy.codes, italy.gdp, {
    dim: 1,
    types: ['ordered'],
    estimator: 'nadaraya-watson',
  });
  try {
    assert.ok(Math.abs(model.bandwidth[0] - italy.rBandwidth) <= 1e-2, `λ ${model.bandwidth[0]}`);
    const fitted = model.predict(italy.codes);
    for (let i = 0; i < 5; i++) assert.ok(Math.abs(fitted[i] - italy.rMean) <= 1e-2, `fit ${i}: ${fitted[i]}`);
    // statsmodels' r_squared: the squared correlation of y and the fit about the fit's mean.
    const mean = fitted.reduce((a, b) => a + b) / fitted.length;
    let cross = 0;
    let yy = 0;
    let ff = 0;
    italy.gdp.forEach((y, i) => {
      cross += (y - mean) * (fitted[i] - mean);
      yy += (y - mean) ** 2;
      ff += (fitted[i] - mean) ** 2;
    });
    assert.ok(Math.abs((cross * cross) / (yy * ff) - italy.rR2) <= 1e-2);
  } finally {
    model.dispose();
  }
});

// statsmodels' test_mixed_mfx_ll_cvls: local-linear marginal effects of y = 3 + 1.2 C1 + 3.7 C2 + 2.3 o + noise.
const mfx = fixtures.mfx;
test("mfx (statsmodels' test_mixed_mfx_ll_cvls): the continuous slopes, to the float64 loop and to statsmodels' 0.2", () => {
  const types = ['continuous', 'continuous', 'ordered'];
  const model = ka.kernelRegression(mfx.x, mfx.y, { dim: 3, types, bandwidth: mfx.bandwidth });
  try {
    const { gradient } = model.gradient(mfx.x.slice(0, 15));
    mfx.slopes.forEach((slopes, i) => {
      slopes.forEach((s, d) => relative(gradient[i * 3 + d], s, 1e-4, `slope ${d} at ${i}`));
      assert.ok(Number.isNaN(gradient[i * 3 + 2]), 'a discrete column has no derivative');
    });
    for (const d of [0, 1]) {
      const b = mfx.coefficients[d];
      assert.ok(Math.abs(gradient[d] - b) <= 0.2 * b, `∂f/∂C${d + 1} = ${gradient[d]} against ${b}`);
    }
  } finally {
    model.dispose();
  }
});

test(
  "mfx: statsmodels' slope along the ordered column",
  {
    skip:
      'definitional: statsmodels puts the ordered codes in the local-linear design and reports a slope per level; ' +
      'here (Li & Racine 2004, as R np) a discrete column enters through the kernel only and has no derivative',
  },
  () => {},
);

test('every column discrete: local-linear is the pooled cell mean (Nadaraya–Watson), gradients NaN', () => {
  const x = [0, 0, 1, 1, 2, 2, 0, 1, 2];
  const y = [1, 2, 3, 4, 5, 6, 1.5, 3.5, 5.5];
  const options = { dim: 1, types: ['ordered'], bandwidth: [0.2], orderedKernel: 'li-racine' };
  const ll = ka.kernelRegression(x, y, options);
  const nw = ka.kernelRegression(x, y, { ...options, estimator: 'nadaraya-watson' });
  try {
    assert.deepEqual(ll.predict([0, 1, 2]), nw.predict([0, 1, 2]));
    // Level 0: keys at levels 0, 1, 2 weigh 1, 0.2, 0.04.
    const want = (1 * 4.5 + 0.2 * 10.5 + 0.04 * 16.5) / (3 * 1.24);
    assert.ok(Math.abs(nw.predict([0])[0] - want) < 1e-6);
    assert.ok(Number.isNaN(ll.gradient([1]).gradient[0]));
  } finally {
    ll.dispose();
    nw.dispose();
  }
});

test('mixed calls refuse what they cannot do, naming the option', () => {
  const c = fixtures.cases.find((k) => k.name === 'mtcars');
  const types = c.types.map((t) => TYPES[t]);
  const base = { dim: 3, types };
  const refused = (fn, argument, pattern) =>
    assert.throws(fn, (e) => e.argument === argument && pattern.test(e.message), `${argument}: ${pattern}`);
  refused(
    () => ka.kernelRegression(c.x, c.y, { ...base, types: ['continuous'] }),
    'options.types',
    /one type per column/,
  );
  refused(
    () => ka.kernelRegression(c.x, c.y, { ...base, types: ['continuous', 'nominal', 'ordered'] }),
    'options.types',
    /options\.types\[1\].*continuous/,
  );
  refused(
    () => ka.kernelRegression(c.x, c.y, { ...base, bandwidth: [40, 1.5, 0.2] }),
    'options.bandwidth',
    /from 0 to 1/,
  );
  refused(
    () => ka.kernelRegression(c.x, c.y, { ...base, bandwidth: [40, 0.5, 0.6] }),
    'options.bandwidth',
    /from 0 to 0.5/,
  );
  refused(() => ka.kernelRegression(c.x, c.y, { ...base, bandwidth: 'scott' }), 'options.bandwidth', /cannot choose λ/);
  refused(() => ka.selectBandwidth(c.x, c.y, { ...base, rule: 'cv-gradient' }), 'options.rule', /cannot choose λ/);
  // The plug-in rule (dpill) gives no λ: refused before its own checks, which mtcars' one continuous column passes.
  const plugin = /'plugin' cannot choose λ for discrete columns/;
  refused(() => ka.selectBandwidth(c.x, c.y, { ...base, rule: 'plugin' }), 'options.rule', plugin);
  refused(() => ka.kernelRegression(c.x, c.y, { ...base, bandwidth: 'plugin' }), 'options.bandwidth', plugin);
  refused(() => ka.plan('regression', { n: c.y.length, ...base, rule: 'plugin' }), 'options.rule', plugin);
  refused(() => ka.selectBandwidth(c.x, c.y, { ...base, exclude: 10 }), 'options.exclude', /blocked CV/);
  refused(() => ka.kernelRegression(c.x, c.y, { ...base, bandwidth: { span: 0.5 } }), 'options.bandwidth', /span/);
  // The grid serves mixed data with one continuous column (mtcars' x has one): with two, it is refused.
  const two = { dim: 3, types: ['continuous', 'continuous', 'unordered'] };
  const x2 = Array.from({ length: 3 * 40 }, (_, k) => (k % 3 === 2 ? k % 2 : Math.sin(k)));
  const y2 = Array.from({ length: 40 }, (_, i) => Math.cos(i));
  refused(() => ka.kernelRegression(x2, y2, { ...two, method: 'grid' }), 'options.method', /options\.types/);
  refused(
    () => ka.kernelRegression(c.x, c.y, { ...base, orderedKernel: 'gaussian' }),
    'options.orderedKernel',
    /li-racine/,
  );
  const x = [...c.x];
  x[1] = 1.5;
  refused(() => ka.kernelRegression(x, c.y, { ...base, bandwidth: [40, 0.5, 0.2] }), 'x', /x\[1\].*integer code/);
  const model = ka.kernelRegression(c.x, c.y, { ...base, bandwidth: [40, 0.5, 0.2] });
  try {
    refused(() => model.predict([100, 3, 0]), 'xq', /xq\[1\].*from 0 to 2/);
    refused(() => model.withBandwidth([40, -0.1, 0.2]), 'h', /λ of ordered column 1/);
  } finally {
    model.dispose();
  }
  assert.equal(ka.plan('regression', { n: 32, dim: 3, types }).method, 'exact');
  const large = ka.plan('regression', { n: 50000, dim: 3, types });
  assert.equal(large.method, 'grid');
  assert.match(large.reason, /per combination of levels/);
  assert.equal(ka.plan('regression', { n: 50000, ...two }).method, 'exact');
  assert.match(ka.plan('regression', { n: 50000, ...two }).reason, /discrete columns/);
});

test('a mixed model: predictInterval, robust refits, withBandwidth and the local variance', () => {
  const c = fixtures.cases.find((k) => k.name === 'ChickWeight');
  const types = c.types.map((t) => TYPES[t]);
  const bandwidth = c.fixed[0].bandwidth;
  const x = Float64Array.from(c.x);
  const model = ka.kernelRegression(x, c.y, { dim: 2, types, bandwidth });
  const robust = ka.kernelRegression(x, c.y, { dim: 2, types, bandwidth, robust: true });
  try {
    assert.deepEqual(x, Float64Array.from(c.x), 'x is not changed');
    const q = c.queries.slice(0, 20);
    const band = model.predictInterval(q);
    assert.deepEqual(band.mean, model.predict(q));
    assert.ok(band.stderr.every((s) => s > 0));
    const local = model.predictInterval(q, { variance: 'local' });
    assert.ok(local.stderr.every((s) => s > 0) && model.localVariance.bandwidth.length === 2);
    assert.equal(robust.robustnessWeights.length, c.n);
    assert.ok(robust.robustnessWeights.some((w) => w < 1));
    const other = model.withBandwidth(c.fixed[1].bandwidth);
    try {
      assertClose(other.predict(c.queries), c.fixed[1].ll, 1e-6 * range(c.y), 'withBandwidth');
    } finally {
      other.dispose();
    }
    assert.deepEqual(model.types, types);
  } finally {
    model.dispose();
    robust.dispose();
  }
});

test('the async forms give the synchronous bytes', async () => {
  const c = fixtures.cases.find((k) => k.name === 'mtcars');
  const options = { dim: 3, types: c.types.map((t) => TYPES[t]) };
  const sync = ka.selectBandwidth(c.x, c.y, options);
  let reports = 0;
  const async = await ka.selectBandwidthAsync(c.x, c.y, { ...options, onProgress: () => reports++ });
  assert.deepEqual(async.bandwidth, sync.bandwidth);
  assert.deepEqual(async.curve, sync.curve);
  assert.ok(reports > 10);
  const model = await ka.kernelRegressionAsync(c.x, c.y, options);
  try {
    assert.deepEqual(model.bandwidth, sync.bandwidth);
    assert.deepEqual(await model.predictAsync(c.queries), model.predict(c.queries));
  } finally {
    model.dispose();
  }
});

test('mixed fits, selections and scores leave the heap at its baseline', () => {
  const { module, live, stats } = counted;
  const engine = makeEngine(module);
  const { selectBandwidth, cvScore } = makeBandwidth(engine, 1);
  const kernelRegression = makeRegression(engine, 1, selectBandwidth);
  const c = fixtures.cases.find((k) => k.name === 'mtcars');
  const options = { dim: 3, types: c.types.map((t) => TYPES[t]) };
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    const model = kernelRegression(c.x, c.y, { ...options, estimator });
    model.predictInterval(c.queries);
    model.gradient(c.queries);
    assert.equal(live.size, engine.residentUse().blocks, 'only the resident sample stays');
    model.dispose();
    cvScore(c.x, c.y, { ...options, estimator, bandwidth: [40, 0.5, 0.2] });
    assert.throws(() => kernelRegression(c.x, c.y, { ...options, bandwidth: [40, 2, 0.2] }));
  }
  assert.equal(live.size, 0);
  assert.equal(stats.badFrees, 0);
});

test('mixed fits and scores are the same bytes on 1 and 2 threads (groups large enough to run on two)', async () => {
  const [one, two] = [await init({ threads: 1 }), await init({ threads: 2 })];
  let seed = 5;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const n = 3000;
  const x = Array.from({ length: 2 * n }, (_, k) => (k % 2 ? Math.floor(3 * random()) : 10 * random()));
  const y = Array.from({ length: n }, (_, i) => Math.sin(x[2 * i]) + x[2 * i + 1] + random());
  const options = { dim: 2, types: ['continuous', 'unordered'], bandwidth: [0.3, 0.2] };
  const results = [one, two].map((api) => {
    const model = api.kernelRegression(x, y, options);
    try {
      return { fit: model.predictInterval(x), dof: model.effectiveDegreesOfFreedom, cv: api.cvScore(x, y, options) };
    } finally {
      model.dispose();
    }
  });
  assert.deepEqual(results[1], results[0]);
});

test('a mixed model of 20,000 points fits on the grid, within its tolerance of the exact fit', () => {
  const n = 20000;
  let seed = 7;
  const rand = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  const x = new Float64Array(2 * n);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[2 * i] = 1.7e9 + 86400 * 365 * rand(); // timestamps: a year of seconds
    x[2 * i + 1] = Math.floor(3 * rand());
    y[i] = 1e4 + 50 * Math.sin((x[2 * i] - 1.7e9) / 5e6) + 20 * x[2 * i + 1] + 5 * rand();
  }
  const options = { dim: 2, types: ['continuous', 'unordered'], bandwidth: [3e5, 0.2] };
  const grid = ka.kernelRegression(x, y, options);
  const exact = ka.kernelRegression(x, y, { ...options, method: 'exact' });
  try {
    assert.equal(grid.method, 'grid');
    assert.equal(exact.method, 'exact');
    const xq = Array.from({ length: 600 }, (_, k) =>
      k % 2 ? k % 3 : 1.7e9 + (86400 * 365 * (Math.floor(k / 2) + 0.5)) / 300,
    );
    const [a, b] = [grid.predict(xq), exact.predict(xq)];
    let worst = 0;
    for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
    // range(y) ≈ 145: the grid's fits within 1e-3 of it (the plan's tolerance; measured 0.023), not the exact bytes.
    assert.ok(worst < 0.145, `worst ${worst}`);
    assert.ok(worst > 0, 'the grid ran');
    const [s, t] = [grid.residualVariance[0], exact.residualVariance[0]];
    assert.ok(Math.abs(s / t - 1) < 1e-3, `σ̂² ${s} against ${t}`);
  } finally {
    grid.dispose();
    exact.dispose();
  }
});
