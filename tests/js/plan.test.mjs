// plan() and the `reason` every result carries: the core's method table (cpp/core/methods/plan.h) chooses for 'auto'
// what docs/approximations.md ("How 'auto' chooses") says, checked here against those rules computed independently
// (the share of keys within reach in float64 from the keys' extent), at both sides of each threshold; the method a
// plan names is the one that runs (its bytes are those of asking for it); every method says why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { initOptions } from './build.mjs';
import { mulberry32, randomFloat32 } from './reference.mjs';

const ka = await init(initOptions);

/** Keys spread over [-1, 1]^dim with both ends present, so the extent along each axis is exactly 2. */
function spread(rows, dim, seed) {
  const x = randomFloat32(mulberry32(seed), rows * dim);
  for (let d = 0; d < dim; d++) {
    x[d] = -1;
    x[dim + d] = 1;
  }
  return x;
}

const gaussianReach = (tolerance) => Math.sqrt(-2 * Math.log(tolerance));

test('softmax attention runs exactly, and says why', () => {
  const q = spread(64, 8, 1);
  const p = ka.plan('attention', q, q, { dim: 8 });
  assert.equal(p.method, 'exact');
  assert.match(p.reason, /^exact: softmax/);
  const info = ka.attentionWithInfo(q, q, q, { dim: 8 });
  assert.deepEqual([info.method, info.reason], [p.method, p.reason]);
});

test("'auto' runs sparse from 2^20 pairs when few keys are within reach, and the bytes are those of method 'sparse'", () => {
  const k = spread(1024, 2, 2);
  const v = randomFloat32(mulberry32(3), 1024);
  const o = { dim: 2, kernel: 'gaussian', bandwidth: 0.02 };
  const p = ka.plan('attention', k, k, o);
  assert.equal(p.method, 'sparse');
  assert.match(p.reason, /^sparse: 2-D gaussian, 1048576 pairs/);
  const auto = ka.attentionWithInfo(k, k, v, o);
  const asked = ka.attentionWithInfo(k, k, v, { ...o, method: 'sparse' });
  assert.equal(auto.method, 'sparse');
  assert.equal(auto.reason, p.reason);
  assert.equal(asked.reason, 'sparse: asked for');
  assert.deepEqual(auto.output, asked.output);
  // One query fewer: 1023 × 1024 pairs, below 2^20, runs exactly.
  const fewer = ka.plan('attention', k.subarray(0, 1023 * 2), k, o);
  assert.equal(fewer.method, 'exact');
  assert.match(fewer.reason, /^exact: 1047552 pairs: below 2\^20/);
});

test("'auto' runs sparse up to 15 % of keys within reach, exactly above (the share computed here from the keys' extent)", () => {
  const J = 1024;
  const k = spread(J, 1, 4);
  for (const tolerance of [1e-3, 1e-6]) {
    const reach = gaussianReach(tolerance);
    for (const [share, want] of [
      [0.145, 'sparse'],
      [0.155, 'exact'],
    ]) {
      const h = (share * 2) / (2 * reach); // share = 2·reach·h / extent, extent 2
      const p = ka.plan('attention', k, k, { dim: 1, kernel: 'gaussian', bandwidth: h, tolerance });
      assert.equal(p.method, want, `tolerance ${tolerance}, share ${share}`);
      assert.match(p.reason, new RegExp(`${(100 * share).toFixed(1)} % of keys within reach`));
    }
  }
  // 2-D: the shares of the axes multiply.
  const k2 = spread(J, 2, 5);
  const side = Math.sqrt(0.14);
  const h2 = side / gaussianReach(1e-3);
  assert.equal(ka.plan('attention', k2, k2, { dim: 2, kernel: 'gaussian', bandwidth: h2 }).method, 'sparse');
  assert.equal(ka.plan('attention', k2, k2, { dim: 2, kernel: 'gaussian', bandwidth: [h2, 1.3 * h2] }).method, 'exact');
});

test("what 'auto' never runs sparse: a heavy tail, more than 3 dimensions per head, a general mask, groups", () => {
  const J = 1024;
  const cases = [
    [{ dim: 1, kernel: 'cauchy' }, /^exact: cauchy's heavy tail/],
    [{ dim: 4, kernel: 'gaussian' }, /^exact: 4 dimensions per head: the sparse index serves at most 3/],
    [{ dim: 2, kernel: 'gaussian', mask: new Uint8Array(J * J) }, /^exact: a general mask/],
    [{ dim: 2, kernel: 'gaussian', groups: { queries: new Int32Array(J), keys: new Int32Array(J) } }, /^exact: groups/],
  ];
  for (const [o, reason] of cases) {
    const k = spread(J, o.dim, 6);
    const p = ka.plan('attention', k, k, { ...o, bandwidth: 0.01 });
    assert.equal(p.method, 'exact', JSON.stringify(o));
    assert.match(p.reason, reason);
  }
  // 4 dimensions in 2 heads are 2 per head; causal, leave-one-out and key padding are served.
  const k = spread(J, 4, 7);
  assert.equal(ka.plan('attention', k, k, { dim: 4, heads: 2, kernel: 'gaussian', bandwidth: 0.01 }).method, 'sparse');
  for (const extra of [{ causal: true }, { mask: 'loo' }, { mask: new Uint8Array(J) }]) {
    assert.equal(
      ka.plan('attention', k, k, { dim: 4, heads: 2, kernel: 'epanechnikov', bandwidth: 0.01, ...extra }).method,
      'sparse',
    );
  }
});

test('a method asked for runs, and says so', () => {
  const q = spread(32, 2, 8);
  const v = randomFloat32(mulberry32(9), 32);
  for (const [method, extra] of [
    ['exact', {}],
    ['random-features', {}],
    ['nystrom', {}],
    ['top-k', { topK: 4 }],
    ['sparse', {}],
  ]) {
    const o = { dim: 2, kernel: 'gaussian', bandwidth: 0.5, method, ...extra };
    assert.deepEqual(ka.plan('attention', q, q, o), { method, reason: `${method}: asked for` });
    const info = ka.attentionWithInfo(q, q, v, o);
    assert.deepEqual([info.method, info.reason], [method, `${method}: asked for`]);
  }
});

test("regression: 'auto' bins a CV search from 5,000 points in 1-D and 2-D, its model from 20,000", () => {
  const search = (n, dim = 1, extra = {}) => ka.plan('regression', { n, dim, rule: 'cv', ...extra });
  assert.equal(search(4999).method, 'exact');
  assert.match(search(4999).reason, /^exact: 1-D gaussian, 4999 points: below 5,000 a CV search runs exactly/);
  assert.equal(search(5000).method, 'grid');
  assert.match(search(5000).reason, /^grid: 1-D gaussian, 5000 points: a CV search binned within 0\.001 \(from 5,000/);
  assert.equal(search(19999).method, 'grid');
  assert.equal(search(4999, 2).method, 'exact');
  assert.equal(search(10000, 2).method, 'grid');
  assert.match(search(10000, 2).reason, /^grid: 2-D gaussian, 10000 points: a CV search binned within 0\.001/);
  // AICc searches as CV's; not 3-D searches, blocked CV, nor the model's own fit.
  assert.match(
    ka.plan('regression', { n: 10000, dim: 1, rule: 'aicc' }).reason,
    /^grid: 1-D gaussian, 10000 points: an AICc search binned within 0\.001 \(from 5,000/,
  );
  assert.equal(ka.plan('regression', { n: 4999, dim: 1, rule: 'aicc' }).method, 'exact');
  assert.equal(ka.plan('regression', { n: 10000, dim: 2, rule: 'aicc' }).method, 'grid');
  assert.equal(search(10000, 3).method, 'exact');
  assert.equal(search(10000, 1, { exclude: 0.01 }).method, 'exact');
  assert.equal(search(10000, 2, { exclude: 0.01 }).method, 'exact');
  assert.equal(ka.plan('regression', { n: 10000, dim: 1 }).method, 'exact');
});

test("regression: 'auto' bins from 20,000 points in 1-D and 2-D for kernels with a grid, and says why", () => {
  assert.equal(ka.plan('regression', { n: 19999, dim: 1 }).method, 'exact');
  assert.match(ka.plan('regression', { n: 19999, dim: 1 }).reason, /^exact: 1-D gaussian, 19999 points: below 20,000/);
  for (const dim of [1, 2]) {
    const p = ka.plan('regression', { n: 20000, dim, kernel: 'epanechnikov' });
    assert.equal(p.method, 'grid');
    assert.match(p.reason, new RegExp(`^grid: ${dim}-D epanechnikov, 20000 points`));
  }
  assert.match(ka.plan('regression', { n: 50000, dim: 3 }).reason, /^exact: 3 dimensions: the grid serves 1 or 2/);
  assert.match(ka.plan('regression', { n: 50000, dim: 1, kernel: 'cauchy' }).reason, /^exact: cauchy has no grid/);
  assert.deepEqual(ka.plan('regression', { n: 50000, dim: 1, method: 'exact' }), {
    method: 'exact',
    reason: 'exact: asked for',
  });
});

test('models and selections report the method that ran and why', () => {
  const n = 20000;
  const x = spread(n, 1, 10);
  const y = x.map((t) => Math.sin(3 * t));
  const grid = ka.kernelRegression(x, y, { dim: 1, bandwidth: 0.05 });
  assert.equal(grid.method, 'grid');
  assert.match(grid.reason, /^grid: 1-D gaussian, 20000 points on \d+ nodes per axis/);
  grid.dispose();
  // A bandwidth so narrow that no grid of at most 2^18 nodes reaches the tolerance: the model fits exactly.
  const narrow = ka.kernelRegression(x, y, { dim: 1, bandwidth: 1e-6, estimator: 'nadaraya-watson', empty: 'zero' });
  assert.equal(narrow.method, 'exact');
  assert.match(narrow.reason, /^exact: at this bandwidth no grid/);
  narrow.dispose();
  const small = ka.kernelRegression(x.subarray(0, 500), y.subarray(0, 500), { dim: 1, bandwidth: 0.1 });
  assert.deepEqual([small.method, small.reason.startsWith('exact: 1-D gaussian, 500 points')], ['exact', true]);
  small.dispose();
  const rule = ka.selectBandwidth(x, y, { dim: 1, rule: 'scott' });
  assert.equal(rule.method, 'grid');
  assert.match(rule.reason, /^grid: /);
  const aicc = ka.selectBandwidth(x.subarray(0, 300), y.subarray(0, 300), { dim: 1, rule: 'aicc', method: 'grid' });
  assert.deepEqual([aicc.method, aicc.reason], ['grid', 'grid: asked for']);
});

test('plan() refuses bad arguments with a typed error naming them', () => {
  const q = spread(8, 1, 11);
  const cases = [
    [() => ka.plan('smoothing', {}), 'task'],
    [() => ka.plan('regression'), 'options'],
    [() => ka.plan('regression', { n: 0, dim: 1 }), 'options.n'],
    [() => ka.plan('regression', { n: 10, dim: 1, kernel: 'softmax' }), 'options.kernel'],
    [() => ka.plan('regression', { n: 10, dim: 3, method: 'grid' }), 'options.method'],
    [() => ka.plan('regression', { n: 10, dim: 1, tolerance: 2 }), 'options.tolerance'],
    [() => ka.plan('attention', q, q, { dim: 1, method: 'fast' }), 'options.method'],
    [() => ka.plan('attention', q, q, { dim: 1, tolerance: 0 }), 'options.tolerance'],
  ];
  for (const [run, argument] of cases) {
    assert.throws(run, (e) => e instanceof KernelAttentionError && e.argument === argument, argument);
  }
});
