// lowess() through the JS API against R's lowess() outputs and the step-by-step float64 reference
// (tests/fixtures/lowess_r.json, made by tests/fixtures/make_lowess.py); input order, input kinds, argument errors,
// inputs left untouched, and the heap given back on every path.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { makeLowess } from '../../web/src/lowess.js';
import { makeEngine } from '../../web/src/engine.js';
import { initOptions } from './build.mjs';
import { countedModule } from './counted.mjs';

const ka = await init(initOptions);
const { cases } = JSON.parse(readFileSync(new URL('../fixtures/lowess_r.json', import.meta.url), 'utf8'));

function rangeOf(v) {
  return Math.max(...v) - Math.min(...v);
}

test('lowess matches R and the reference on every fixture case', () => {
  for (const c of cases) {
    const { fitted, weights } = ka.lowess(c.x, c.y, { frac: c.frac, iterations: c.iterations, delta: c.delta });
    assert.ok(fitted instanceof Float64Array && weights instanceof Float64Array, c.name);
    // The target is 1e-5 of range(y); the bound is lowess_test.cpp's (both follow R's branch decisions).
    const tol = 1e-7 * Math.max(rangeOf(c.y), 1);
    for (let j = 0; j < c.x.length; j++) {
      assert.ok(
        Math.abs(fitted[j] - c.fitted[j]) <= tol,
        `${c.name}: fitted[${j}] = ${fitted[j]}, want ${c.fitted[j]}`,
      );
      if (c.weights) assert.ok(Math.abs(weights[j] - c.weights[j]) <= 1e-7, `${c.name}: weights[${j}]`);
    }
  }
});

test("lowess defaults are R's: frac 2/3, 3 iterations, delta 1 % of the range of x", () => {
  const c = cases.find((k) => k.name === 'R mcycle delta default');
  const { fitted } = ka.lowess(c.x, c.y, { frac: 0.1 });
  for (let j = 0; j < c.x.length; j++)
    assert.ok(Math.abs(fitted[j] - c.fitted[j]) <= 1e-7 * rangeOf(c.y), `fitted[${j}]`);
  const s = cases.find((k) => k.name === 'R simple'); // x = 0 … 19: the default delta 0.19 skips nothing
  const d = ka.lowess(s.x, s.y).fitted;
  for (let j = 0; j < s.x.length; j++) assert.ok(Math.abs(d[j] - s.fitted[j]) <= 1e-7 * rangeOf(s.y), `simple[${j}]`);
});

test('lowess returns each point its own fit whatever the input order, ties included', () => {
  // Unsorted input with many ties: the fixture's reference sorts stably (R's order()) and puts results back.
  const c = cases.find((k) => k.name.startsWith('ties n=401 f=0.25 default'));
  const xs = new Float64Array(c.x),
    ys = new Float64Array(c.y);
  const { fitted } = ka.lowess(xs, ys, { frac: c.frac, delta: c.delta });
  for (let j = 0; j < xs.length; j++) {
    assert.ok(Math.abs(fitted[j] - c.fitted[j]) <= 1e-7 * rangeOf(c.y), `fitted[${j}]`);
    // tied x share one fit
    const first = c.x.indexOf(c.x[j]);
    assert.equal(fitted[j], fitted[first], `tie at x = ${c.x[j]}`);
  }
  // Distinct x: reversing the input reverses the output, bit for bit.
  const u = cases.find((k) => k.name === 'uniform n=1000 f=0.1');
  const opts = { frac: u.frac, iterations: u.iterations, delta: 0 };
  const a = ka.lowess(u.x, u.y, opts);
  const b = ka.lowess([...u.x].reverse(), [...u.y].reverse(), opts);
  assert.deepEqual(b.fitted.reverse(), a.fitted);
  assert.deepEqual(b.weights.reverse(), a.weights);
});

test('lowess takes Float32Array, Float64Array and plain arrays, and leaves them untouched', () => {
  const c = cases.find((k) => k.name === 'uniform n=300 f=0.3');
  const x32 = new Float32Array(c.x),
    y32 = new Float32Array(c.y);
  const x32copy = x32.slice(),
    y32copy = y32.slice();
  const viaF32 = ka.lowess(x32, y32, { frac: 0.3 });
  const viaF64 = ka.lowess(new Float64Array(x32), new Float64Array(y32), { frac: 0.3 });
  const viaArray = ka.lowess(Array.from(x32), Array.from(y32), { frac: 0.3 });
  assert.deepEqual(viaF32, viaF64);
  assert.deepEqual(viaArray, viaF64);
  assert.deepEqual(x32, x32copy);
  assert.deepEqual(y32, y32copy);
  const xa = [...c.x],
    ya = [...c.y];
  ka.lowess(xa, ya);
  assert.deepEqual(xa, c.x);
  assert.deepEqual(ya, c.y);
});

test('lowess with one point returns it; iterations 0 gives weights of 1', () => {
  assert.deepEqual(ka.lowess([3], [7]), { fitted: new Float64Array([7]), weights: new Float64Array([1]) });
  const c = cases.find((k) => k.name === 'R iter 0');
  const { weights } = ka.lowess(c.x, c.y, { iterations: 0, delta: 0 });
  assert.ok(weights.every((w) => w === 1));
});

test('lowess rejects bad arguments with a KernelAttentionError naming them', () => {
  const x = [0, 1, 2, 3],
    y = [1, 2, 3, 4];
  const bad = [
    [() => ka.lowess('abc', y), 'x', 'BadArgument'],
    [() => ka.lowess(x, null), 'y', 'BadArgument'],
    [() => ka.lowess([], []), 'x', 'BadShape'],
    [() => ka.lowess(x, [1, 2, 3]), 'y', 'BadShape'],
    [() => ka.lowess([0, NaN, 2, 3], y), 'x', 'NonFinite'],
    [() => ka.lowess(x, [1, 2, Infinity, 4]), 'y', 'NonFinite'],
    [() => ka.lowess(x, [1, 2, '3', 4]), 'y', 'BadArgument'],
    [() => ka.lowess(x, y, { frac: 0 }), 'options.frac', 'BadArgument'],
    [() => ka.lowess(x, y, { frac: 1.5 }), 'options.frac', 'BadArgument'],
    [() => ka.lowess(x, y, { frac: '0.5' }), 'options.frac', 'BadArgument'],
    [() => ka.lowess(x, y, { iterations: -1 }), 'options.iterations', 'BadArgument'],
    [() => ka.lowess(x, y, { iterations: 1.5 }), 'options.iterations', 'BadArgument'],
    [() => ka.lowess(x, y, { delta: -0.1 }), 'options.delta', 'BadArgument'],
    [() => ka.lowess(x, y, { delta: Infinity }), 'options.delta', 'BadArgument'],
    [() => ka.lowess(x, y, { span: 0.5 }), 'options.span', 'BadArgument'],
    [() => ka.lowess(x, y, 0.5), 'options', 'BadArgument'],
  ];
  for (const [call, argument, code] of bad) {
    assert.throws(
      call,
      (e) => e instanceof KernelAttentionError && e.argument === argument && e.code === code,
      `${argument} (${code})`,
    );
  }
});

test('lowess gives back all the memory it takes, and allocates nothing before a validation error', async () => {
  const { module, live, stats } = await countedModule();
  const lowess = makeLowess(makeEngine(module));
  const c = cases.find((k) => k.name === 'uniform n=300 f=0.3');
  const want = ka.lowess(c.x, c.y, { frac: 0.3 });
  assert.deepEqual(lowess(c.x, c.y, { frac: 0.3 }), want);
  assert.equal(live.size, 0);
  const before = stats.mallocs;
  assert.throws(() => lowess(c.x, c.y, { frac: 2 }), KernelAttentionError);
  assert.equal(stats.mallocs, before);
  stats.failNext = 3; // the third allocation (the fitted values) fails
  assert.throws(
    () => lowess(c.x, c.y),
    (e) => e.code === 'OutOfMemory',
  );
  assert.equal(live.size, 0);
  assert.equal(stats.badFrees, 0);
  // Memory growth during the call (10⁶ points need about 100 MB) must not spoil the copies out.
  const n = 1_000_000,
    big = new Float64Array(n),
    yb = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    big[j] = j / n;
    yb[j] = 2 * big[j] + 1;
  }
  const { fitted } = lowess(big, yb, { frac: 0.1, iterations: 0 });
  for (const j of [0, 12_345, n >> 1, n - 1]) assert.ok(Math.abs(fitted[j] - yb[j]) < 1e-9, `fitted[${j}]`); // a line is fitted exactly
  assert.equal(live.size, 0);
});
