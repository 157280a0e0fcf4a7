// loess() through the JS API against R's loess() (tests/fixtures/loess_r.json, made by tests/fixtures/make_loess.R):
// fitted values, predictions, standard errors, intervals and statistics on every case; then argument errors, the
// inputs left untouched, the memory given back, and a disposed model refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { makeLoess } from '../../web/src/loess.js';
import { makeEngine } from '../../web/src/engine.js';
import { initOptions } from './build.mjs';
import { countedModule } from './counted.mjs';

const ka = await init(initOptions);
const fixture = JSON.parse(readFileSync(new URL('../fixtures/loess_r.json', import.meta.url), 'utf8'));
const sets = new Map(fixture.datasets.map((s) => [s.name, s]));

const optionsOf = (c, set) => ({
  dim: set.dims,
  span: c.span,
  degree: c.degree,
  family: c.family,
  surface: c.surface,
  statistics: c.statistics,
  ...(c.weights ? { weights: c.weights } : {}),
});
const rangeOf = (v) => Math.max(...v) - Math.min(...v);
const relative = (a, b) => Math.abs(a - b) / Math.abs(b);

function checkStatistics(model, want, withScale, what) {
  // The target is 1e-6 relative; R's 9-10 digits allow a bound 10 times tighter.
  for (const [got, key] of [
    [model.enp, 'enp'],
    [model.oneDelta, 'oneDelta'],
    [model.twoDelta, 'twoDelta'],
    [model.traceHat, 'traceHat'],
    ...(withScale ? [[model.residualScale, 's']] : []),
  ]) {
    assert.ok(relative(got, want[key]) <= 1e-7, `${what}: ${key} = ${got}, R ${want[key]}`);
  }
}

test("loess matches R's loess on every fixture case", () => {
  for (const c of fixture.cases) {
    const set = sets.get(c.dataset);
    const what = `${c.dataset} span ${c.span} degree ${c.degree} ${c.family} ${c.surface} ${c.statistics}${c.weights ? ' weighted' : ''}`;
    const model = ka.loess(set.x, set.y, optionsOf(c, set));
    try {
      // Fits whose residuals are rounding noise get noise robustness weights in R and here alike (the generator
      // says which): only the first fit's statistics compare.
      checkStatistics(model, c, !c.roundingResiduals, what);
      if (c.roundingResiduals) continue;
      const tol = 1e-7 * rangeOf(set.y); // the target is 1e-6 of range(y)
      c.fittedIndex.forEach((i, j) => {
        assert.ok(
          Math.abs(model.fitted[i] - c.fitted[j]) <= tol,
          `${what}: fitted[${i}] ${model.fitted[i]}, R ${c.fitted[j]}`,
        );
        assert.equal(model.residuals[i], set.y[i] - model.fitted[i]);
      });
      const { mean, stderr, lower, upper, degreesOfFreedom, quantile } = model.predictInterval(set.queries);
      c.predict.forEach((want, j) => {
        if (want === null) {
          assert.ok(Number.isNaN(mean[j]) && Number.isNaN(stderr[j]), `${what}: query ${j} is outside: NaN as R's NA`);
          return;
        }
        assert.ok(Math.abs(mean[j] - want) <= tol, `${what}: predict[${j}] ${mean[j]}, R ${want}`);
        assert.ok(relative(stderr[j], c.se[j]) <= 1e-7, `${what}: se[${j}] ${stderr[j]}, R ${c.se[j]}`);
        // The band is mean ∓ quantile·stderr, each checked against R (the quantile below).
        assert.equal(upper[j], mean[j] + quantile * stderr[j], `${what}: upper[${j}]`);
        assert.equal(lower[j], mean[j] - quantile * stderr[j], `${what}: lower[${j}]`);
      });
      assert.ok(relative(degreesOfFreedom, c.df) <= 1e-7, `${what}: df`);
      if (c.qt975 !== null) assert.ok(relative(quantile, c.qt975) <= 1e-8, `${what}: t quantile`);
      else assert.ok(Number.isNaN(quantile), `${what}: R's qt is NaN for df ${c.df}`);
      assert.deepEqual(model.predict(set.queries), mean);
      if (c.approximate) {
        const approx = ka.loess(set.x, set.y, { ...optionsOf(c, set), traceHat: 'approximate' });
        checkStatistics(approx, { ...c.approximate, s: c.approximate.s }, true, `${what} (trace.hat approximate)`);
        approx.dispose();
      }
    } finally {
      model.dispose();
    }
  }
});

test("loess defaults are R's: span 0.75, degree 2, gaussian, interpolate, exact trace", () => {
  const c = fixture.cases.find(
    (k) =>
      k.dataset === 'faithful' &&
      k.span === 0.75 &&
      k.degree === 2 &&
      k.family === 'gaussian' &&
      k.surface === 'interpolate',
  );
  const set = sets.get('faithful');
  const model = ka.loess(set.x, set.y);
  assert.deepEqual(model.options, {
    dim: 1,
    span: 0.75,
    degree: 2,
    family: 'gaussian',
    surface: 'interpolate',
    normalize: true,
    iterations: 4,
    cell: 0.2,
    statistics: 'approximate',
    traceHat: 'exact',
  });
  assert.ok(relative(model.traceHat, c.traceHat) <= 1e-7);
  c.fittedIndex.forEach((i, j) => assert.ok(Math.abs(model.fitted[i] - c.fitted[j]) <= 1e-7 * rangeOf(set.y)));
  model.dispose();
});

test('loess names the argument at fault', () => {
  const x = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  const y = [1, 3, 2, 5, 4, 6, 8, 7, 9, 10];
  const cases = [
    [() => ka.loess('x', y), 'BadArgument', 'x'],
    [() => ka.loess(x, y.slice(1)), 'BadShape', 'y'],
    [() => ka.loess(x, y, { dim: 5 }), 'BadArgument', 'options.dim'],
    [() => ka.loess(x, y, { dim: 3 }), 'BadShape', 'x'],
    [() => ka.loess(x, y, { span: 0 }), 'BadArgument', 'options.span'],
    [() => ka.loess(x, y, { span: 0.3 }), 'BadArgument', 'options.span'],
    [() => ka.loess(x, y, { degree: 3 }), 'BadArgument', 'options.degree'],
    [() => ka.loess(x, y, { family: 'robust' }), 'BadArgument', 'options.family'],
    [() => ka.loess(x, y, { surface: 'exact' }), 'BadArgument', 'options.surface'],
    [() => ka.loess(x, y, { iterations: 0 }), 'BadArgument', 'options.iterations'],
    [() => ka.loess(x, y, { cell: -1 }), 'BadArgument', 'options.cell'],
    [() => ka.loess(x, y, { statistics: 'full' }), 'BadArgument', 'options.statistics'],
    [() => ka.loess(x, y, { traceHat: 'fast' }), 'BadArgument', 'options.traceHat'],
    [() => ka.loess(x, y, { normalize: 1 }), 'BadArgument', 'options.normalize'],
    [() => ka.loess(x, y, { weights: [1, 2] }), 'BadShape', 'options.weights'],
    [() => ka.loess(x, y, { weights: x.map((_, i) => (i === 4 ? -1 : 1)) }), 'BadArgument', 'options.weights'],
    [() => ka.loess(x, y, { weights: x.map(() => 0) }), 'BadArgument', 'options.weights'],
    [() => ka.loess(x, y, { spn: 0.5 }), 'BadArgument', 'options.spn'],
    [() => ka.loess([1, 1, 1, 1, 1, 1, 1, 1, 2, 3], y, { span: 0.5 }), 'BadArgument', 'options.span'],
    [() => ka.loess(x, [1, 2, NaN, 4, 5, 6, 7, 8, 9, 10]), 'NonFinite', 'y'],
  ];
  for (const [call, code, argument] of cases) {
    assert.throws(call, (e) => {
      assert.ok(e instanceof KernelAttentionError, String(e));
      assert.equal(e.code, code, e.message);
      assert.equal(e.argument, argument, e.message);
      assert.ok(e.message.includes(argument), e.message);
      return true;
    });
  }
  assert.throws(
    () => ka.loess(x, y, { span: 0.3 }),
    /at least 4 points per fit for degree 2 in 1-D \(3 coefficients\)/,
  );
  const model = ka.loess(x, y, { statistics: 'none' });
  assert.throws(() => model.predictInterval([5]), { code: 'BadArgument', argument: 'options.statistics' });
  assert.throws(() => model.predictInterval([5], { level: 1 }), {
    code: 'BadArgument',
    argument: 'intervalOptions.level',
  });
  assert.throws(() => model.predict([5, Infinity]), { code: 'NonFinite', argument: 'xq' });
  assert.ok(Number.isFinite(model.predict([5])[0]));
  model.dispose();
});

test('loess leaves its inputs untouched and refuses a disposed model', () => {
  const set = sets.get('airquality2');
  const x = Float64Array.from(set.x);
  const y = Array.from(set.y);
  const weights = new Float64Array(y.length).fill(2);
  const q = Float64Array.from(set.queries);
  const model = ka.loess(x, y, { dim: 2, family: 'symmetric', weights });
  model.predictInterval(q);
  assert.deepEqual(Array.from(x), set.x);
  assert.deepEqual(y, set.y);
  assert.ok(weights.every((w) => w === 2));
  assert.deepEqual(Array.from(q), set.queries);
  model.dispose();
  model.dispose(); // idempotent
  assert.throws(() => model.predict(q), { code: 'Disposed', argument: 'model' });
  assert.throws(() => model.predictInterval(q), { code: 'Disposed', argument: 'model' });
  assert.equal(model.fitted.length, set.y.length); // what was read stays readable
});

test('loess gives back every allocation, on success, on error and at dispose()', async () => {
  const { module, live, stats } = await countedModule();
  const engine = makeEngine(module);
  const loess = makeLoess(engine);
  const set = sets.get('quakes');
  for (const surface of ['interpolate', 'direct']) {
    const model = loess(set.x, set.y, { dim: 2, span: 0.3, surface, family: 'symmetric' });
    model.predictInterval(set.queries);
    model.predict(set.queries);
    assert.equal(live.size, 0, `${surface}: scoped heap blocks outstanding`);
    assert.equal(engine.loessLiveModels(), 1);
    model.dispose();
    assert.equal(engine.loessLiveModels(), 0);
  }
  // A refusal after validation (zero-width neighbourhoods) frees the model it made.
  assert.throws(() => loess([1, 1, 1, 1, 1, 1, 1, 1, 2, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], { span: 0.5 }));
  assert.equal(engine.loessLiveModels(), 0);
  assert.equal(live.size, 0);
  // A failed allocation of the scoped heap frees the model too.
  stats.failNext = 2;
  assert.throws(() => loess(set.x, set.y, { dim: 2 }), { code: 'OutOfMemory' });
  assert.equal(engine.loessLiveModels(), 0);
  assert.equal(live.size, 0);
  assert.equal(stats.badFrees, 0);
});
