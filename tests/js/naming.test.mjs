// Option and result names (issue 21, item 10): selectBandwidth's bandwidth rule is `rule` and the computation is
// `method` everywhere; the names before 0.2.0 (`approximation`, a rule given as `method`) still work for one minor
// version with one deprecation message per old name per process; results say `rule` and `method`; one default
// estimator (local-linear). The deprecation messages are once per process, so this file is the first (and only)
// user of the old names in its process (node --test runs each file in its own process).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { mulberry32 } from './reference.mjs';

const ka = await init({ threads: 1 });

const rand = mulberry32(21);
const n = 300;
const x = Float64Array.from({ length: n }, rand);
const y = Float64Array.from(x, (t) => Math.sin(6 * t) + 2 * t * t + 0.3 * (rand() - 0.5));

/** Runs `f` with console.warn captured; returns [f's result, the deprecation messages it printed]. */
function capture(f) {
  const messages = [];
  const original = console.warn;
  console.warn = (...args) => messages.push(args.join(' '));
  try {
    return [f(), messages.filter((m) => m.includes('deprecated'))];
  } finally {
    console.warn = original;
  }
}

const same = (a, b, what) => assert.deepEqual(Array.from(a), Array.from(b), what);

test('`approximation` is read as `method`, with exactly one deprecation message over every call', () => {
  const want = ka.selectBandwidth(x, y, { dim: 1, method: 'grid' });
  const wantCv = ka.cvScore(x, y, { dim: 1, bandwidth: 0.05, method: 'grid' });
  const [got, messages] = capture(() => [
    ka.selectBandwidth(x, y, { dim: 1, approximation: 'grid' }),
    ka.selectBandwidth(x, y, { dim: 1, approximation: 'grid' }),
    ka.cvScore(x, y, { dim: 1, bandwidth: 0.05, approximation: 'grid' }),
  ]);
  same(got[0].bandwidth, want.bandwidth, 'selectBandwidth bandwidth');
  assert.equal(got[0].method, 'grid');
  same(got[1].bandwidth, want.bandwidth, 'second call');
  assert.equal(got[2], wantCv);
  assert.equal(messages.length, 1, messages.join('\n'));
  assert.match(messages[0], /`options\.approximation`.*`options\.method`/);
});

test('a rule given as `method` is read as `rule`, with exactly one deprecation message', () => {
  const want = ka.selectBandwidth(x, y, { dim: 1, rule: 'aicc' });
  const [got, messages] = capture(() => [
    ka.selectBandwidth(x, y, { dim: 1, method: 'aicc' }),
    ka.selectBandwidth(x, y, { dim: 1, method: 'scott' }),
    // Both old names at once are two different settings: rule 'cv' computed on the grid.
    ka.selectBandwidth(x, y, { dim: 1, method: 'cv', approximation: 'grid' }),
  ]);
  same(got[0].bandwidth, want.bandwidth, 'aicc');
  assert.deepEqual([got[0].rule, got[1].rule, got[2].rule, got[2].method], ['aicc', 'scott', 'cv', 'grid']);
  same(got[1].bandwidth, ka.selectBandwidth(x, y, { dim: 1, rule: 'scott' }).bandwidth, 'scott');
  same(got[2].bandwidth, ka.selectBandwidth(x, y, { dim: 1, rule: 'cv', method: 'grid' }).bandwidth, 'cv on the grid');
  assert.equal(messages.length, 1, messages.join('\n'));
  assert.match(messages[0], /`options\.rule: 'aicc'`/);
});

test('an old and a new name for the same setting together are a BadArgument naming both', () => {
  const cases = [
    [
      'selectBandwidth approximation + method',
      () => ka.selectBandwidth(x, y, { dim: 1, approximation: 'grid', method: 'exact' }),
      'options.approximation',
      ['options.approximation', 'options.method'],
    ],
    [
      'cvScore approximation + method',
      () => ka.cvScore(x, y, { dim: 1, bandwidth: 0.05, approximation: 'exact', method: 'exact' }),
      'options.approximation',
      ['options.approximation', 'options.method'],
    ],
    [
      'selectBandwidth method (a rule) + rule',
      () => ka.selectBandwidth(x, y, { dim: 1, method: 'cv', rule: 'cv' }),
      'options.method',
      ['options.method', 'options.rule'],
    ],
  ];
  for (const [what, run, argument, names] of cases) {
    assert.throws(run, (e) => {
      assert.ok(e instanceof KernelAttentionError, `${what}: ${e}`);
      assert.equal(e.code, 'BadArgument', what);
      assert.equal(e.argument, argument, what);
      for (const name of names) assert.ok(e.message.includes(`\`${name}\``), `${what}: ${e.message}`);
      return true;
    });
  }
  // `rule` takes rules only, and the unknown value is named under `rule`.
  assert.throws(
    () => ka.selectBandwidth(x, y, { dim: 1, rule: 'grid' }),
    (e) => e.code === 'BadArgument' && e.argument === 'options.rule',
  );
});

test('selections report `rule` and `method`, models `selection.rule`; the old result fields are gone', () => {
  const exact = ka.selectBandwidth(x, y, { dim: 1, method: 'exact' });
  const grid = ka.selectBandwidth(x, y, { dim: 1, rule: 'cv', method: 'grid' });
  const aicc = ka.selectBandwidth(x, y, { dim: 1, rule: 'aicc', method: 'exact' });
  const gradient = ka.selectBandwidth(x, y, { dim: 1, rule: 'cv-gradient' });
  assert.deepEqual([exact.rule, exact.method], ['cv', 'exact']);
  assert.deepEqual([grid.rule, grid.method], ['cv', 'grid']);
  assert.deepEqual([aicc.rule, aicc.method], ['aicc', 'exact']);
  assert.deepEqual([gradient.rule, gradient.method], ['cv-gradient', 'exact']);
  for (const r of [exact, grid, aicc, gradient]) assert.ok(!('approximation' in r));
  assert.match(grid.reason, /^grid/);
  const model = ka.kernelRegression(x, y, { dim: 1, bandwidth: 'aicc' });
  const fixed = ka.kernelRegression(x, y, { dim: 1, bandwidth: 0.05 });
  try {
    assert.equal(model.selection.rule, 'aicc');
    assert.equal(fixed.selection.rule, 'fixed');
    assert.ok(!('method' in model.selection) && !('method' in fixed.selection));
  } finally {
    model.dispose();
    fixed.dispose();
  }
});

test('one default estimator: selectBandwidth, cvScore and kernelRegression choose for local-linear', () => {
  const byDefault = ka.selectBandwidth(x, y, { dim: 1 });
  const ll = ka.selectBandwidth(x, y, { dim: 1, estimator: 'local-linear' });
  const nw = ka.selectBandwidth(x, y, { dim: 1, estimator: 'nadaraya-watson' });
  same(byDefault.bandwidth, ll.bandwidth, 'selectBandwidth default vs explicit local-linear');
  // The two estimators choose different bandwidths here, so the comparison above can fail.
  assert.notEqual(nw.bandwidth[0], ll.bandwidth[0]);
  const model = ka.kernelRegression(x, y, { dim: 1 });
  try {
    // The model searches on its own copy of the sample (the last bits may differ), for the same estimator.
    const [a, b] = [model.bandwidth[0], byDefault.bandwidth[0]];
    assert.ok(Math.abs(a - b) <= 1e-9 * b, `kernelRegression's h ${a} vs selectBandwidth's ${b}`);
    assert.ok(Math.abs(a - nw.bandwidth[0]) > 1e-3 * b);
  } finally {
    model.dispose();
  }
  const h = ll.bandwidth[0];
  assert.equal(
    ka.cvScore(x, y, { dim: 1, bandwidth: h }),
    ka.cvScore(x, y, { dim: 1, bandwidth: h, estimator: 'local-linear' }),
  );
  assert.notEqual(
    ka.cvScore(x, y, { dim: 1, bandwidth: h }),
    ka.cvScore(x, y, { dim: 1, bandwidth: h, estimator: 'nadaraya-watson' }),
  );
  // 'cv-gradient' is Nadaraya–Watson's: its default, and local-linear asked for by name stays an error.
  same(
    ka.selectBandwidth(x, y, { dim: 1, rule: 'cv-gradient' }).bandwidth,
    ka.selectBandwidth(x, y, { dim: 1, rule: 'cv-gradient', estimator: 'nadaraya-watson' }).bandwidth,
    'cv-gradient default',
  );
  assert.throws(
    () => ka.selectBandwidth(x, y, { dim: 1, rule: 'cv-gradient', estimator: 'local-linear' }),
    (e) => e.code === 'BadArgument' && e.argument === 'options.estimator',
  );
});
