// plan() against what runs, for every method × every call shape: attention with and without masks, groups, heads and
// dimensions; regression with each estimator, span bandwidths, each criterion, blocked CV, observation weights, 1 to 3
// dimensions, small and large samples. What each method serves is written here from docs/approximations.md and
// docs/regression.md (the test's own table, not the core's), so a plan that refuses or accepts the wrong call fails;
// a plan that is not what runs fails on the result's method, reason and the fields only its method reports.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { initOptions } from './build.mjs';
import { mulberry32, randomFloat32 } from './reference.mjs';

const ka = await init(initOptions);

/** The refusal `run` throws: a BadArgument KernelAttentionError blaming `argument`, its message naming `field`. */
function refused(run, argument, field, what) {
  let error = null;
  try {
    run();
  } catch (e) {
    error = e;
  }
  assert.ok(error instanceof KernelAttentionError, `${what}: refused (${error})`);
  assert.equal(error.code, 'BadArgument', what);
  assert.equal(error.argument, argument, `${what}: ${error.message}`);
  assert.ok(error.message.includes(`\`${field}\``), `${what}: the message names ${field}: ${error.message}`);
  return error;
}

// ---- attention ----

const ATTENTION_METHODS = ['exact', 'sparse', 'top-k', 'random-features', 'nystrom', 'auto'];
// What each kernel has (docs/approximations.md): random features and Nyström map softmax and the exponential-family
// kernels; the sparse method serves every distance kernel.
const LOW_RANK_KERNELS = ['softmax', 'gaussian', 'laplacian', 'cauchy'];

/**
 * The option a method asked for is refused for on this shape (the argument the error blames, and the option its
 * message names), or null where it runs: the rules of docs/approximations.md, written out here.
 */
function attentionRefusal(method, s) {
  const masked = s.mask !== undefined; // causal is not a mask here: every method serves it
  const general = s.mask instanceof Uint8Array && s.mask.length !== s.J;
  if (method === 'sparse') {
    if (s.kernel === 'softmax') return ['options.method', 'options.kernel'];
    if (s.dim / (s.heads ?? 1) > 3) return ['options.dim', 'options.dim'];
    if (general) return ['options.mask', 'options.mask'];
    if (s.groups) return ['options.groups', 'options.groups'];
  }
  if (method === 'random-features' || method === 'nystrom') {
    if (!LOW_RANK_KERNELS.includes(s.kernel)) return ['options.method', 'options.kernel'];
    if (masked) return ['options.mask', 'options.mask'];
    if (s.groups) return ['options.groups', 'options.groups'];
  }
  return null;
}

/** The fields only one method's result has: which runner ran. */
function ranBy(info) {
  if ('features' in info) return 'random-features';
  if ('landmarks' in info) return 'nystrom';
  if ('droppedMass' in info) return info.reason.startsWith('top-k') ? 'top-k' : 'sparse';
  return 'exact';
}

function attentionShapes() {
  const shapes = [];
  const I = 24;
  const J = 40;
  for (const kernel of ['softmax', 'gaussian', 'cauchy', 'epanechnikov', 'uniform']) {
    const base = { kernel, I, J, ...(kernel === 'softmax' ? {} : { bandwidth: 0.6 }) };
    for (const dim of [1, 2, 4]) shapes.push({ ...base, dim });
    shapes.push({ ...base, dim: 4, heads: 2 });
    shapes.push({ ...base, dim: 2, causal: true });
    shapes.push({ ...base, dim: 2, mask: 'loo', I: J });
    shapes.push({ ...base, dim: 2, mask: Uint8Array.from({ length: J }, (_, j) => j % 5 === 0) });
    shapes.push({ ...base, dim: 2, mask: Uint8Array.from({ length: I * J }, (_, n) => n % 7 === 0) });
    const groups = { queries: Int32Array.from({ length: I }, (_, i) => i % 2), keys: new Int32Array(J) };
    shapes.push({ ...base, dim: 2, groups });
  }
  return shapes;
}

test('attention: every method on every shape runs what plan() says, or both refuse naming the field', () => {
  let ran = 0;
  let refusals = 0;
  for (const [n, s] of attentionShapes().entries()) {
    const rand = mulberry32(100 + n);
    const q = randomFloat32(rand, s.I * s.dim);
    const k = randomFloat32(rand, s.J * s.dim);
    const v = randomFloat32(rand, s.J * 2);
    const { I, J, ...shape } = s;
    for (const method of ATTENTION_METHODS) {
      const options = { ...shape, method, ...(method === 'top-k' ? { topK: 5 } : {}) };
      const what = `${method} on ${JSON.stringify({ ...shape, mask: s.mask?.length ?? s.mask, groups: !!s.groups })}`;
      const refusal = method === 'auto' ? null : attentionRefusal(method, s);
      if (refusal) {
        const planned = refused(() => ka.plan('attention', q, k, options), ...refusal, what);
        const asked = refused(() => ka.attentionWithInfo(q, k, v, options), ...refusal, what);
        assert.equal(asked.message, planned.message, what);
        refusals++;
        continue;
      }
      const p = ka.plan('attention', q, k, options);
      if (method !== 'auto') assert.deepEqual(p, { method, reason: `${method}: asked for` }, what);
      const info = ka.attentionWithInfo(q, k, v, options);
      assert.deepEqual([info.method, info.reason], [p.method, p.reason], what);
      assert.equal(ranBy(info), p.method, what);
      ran++;
    }
  }
  assert.ok(ran > 100 && refusals > 40, `${ran} runs, ${refusals} refusals`);
});

test("attention: 'auto' on shapes where it picks sparse runs sparse, with the bytes of asking for it", () => {
  const J = 1024;
  const rand = mulberry32(7);
  for (const [dim, heads, extra] of [
    [1, 1, {}],
    [2, 1, { causal: true }],
    [4, 2, { mask: 'loo' }],
  ]) {
    const k = randomFloat32(rand, J * dim);
    const v = randomFloat32(rand, J * heads);
    const options = { dim, heads, kernel: 'epanechnikov', bandwidth: 0.01, ...extra };
    const p = ka.plan('attention', k, k, options);
    assert.equal(p.method, 'sparse', JSON.stringify(options));
    const auto = ka.attentionWithInfo(k, k, v, options);
    assert.deepEqual([auto.method, auto.reason, ranBy(auto)], [p.method, p.reason, 'sparse']);
    assert.deepEqual(auto.output, ka.attentionWithInfo(k, k, v, { ...options, method: 'sparse' }).output);
  }
});

// ---- regression ----

/**
 * The refusal of `method` for a regression call (docs/regression.md): [field] or null where it runs. The grid: 1 or 2
 * dimensions, degree 0 or 1 (not local-quadratic), a kernel with a finite reach (not Cauchy), one bandwidth for every
 * query, not the CV gradient's search;
 * the sparse method (a model's fits): at most 3 dimensions, Nadaraya–Watson, no observation weights, one bandwidth.
 */
function regressionRefusal(method, s) {
  if (method === 'grid') {
    if (s.span) return 'span';
    if (s.dim > 2) return 'dim';
    if (s.estimator === 'local-quadratic') return 'estimator';
    if (s.kernel === 'cauchy') return 'kernel';
    if (s.rule === 'cv-gradient') return 'rule';
  }
  if (method === 'sparse') {
    if (s.span) return 'span';
    if (s.dim > 3) return 'dim';
    if (s.estimator !== 'nadaraya-watson') return 'estimator';
    if (s.weights) return 'weights';
  }
  return null;
}

/** The option a refused field was given as, and the argument the error blames (the method, but for weights). */
function regressionNames(field, api) {
  const given = {
    span: api === 'plan' ? 'options.span' : 'options.bandwidth',
    dim: 'options.dim',
    kernel: 'options.kernel',
    estimator: 'options.estimator',
    weights: 'options.weights',
    rule: 'options.rule',
  }[field];
  return [field === 'weights' ? 'options.weights' : 'options.method', given];
}

/** What a plan's answer must be for a call it runs: the reason a method asked for, or 'auto''s rules. */
function expectedMethod(method, s) {
  // Blocked CV bins in 1-D only (each point's band left out of its grid moments exactly).
  const exactCriterion = s.rule === 'cv-gradient' || (s.exclude !== undefined && s.dim > 1);
  const grid = s.dim <= 2 && s.kernel !== 'cauchy' && !s.span && s.estimator !== 'local-quadratic';
  if (method === 'sparse') return s.rule === undefined ? 'sparse' : 'exact';
  if (method === 'grid') return exactCriterion ? 'exact' : 'grid';
  if (method === 'exact') return 'exact';
  return grid && s.n >= 20000 && !exactCriterion ? 'grid' : 'exact';
}

function regressionSample(n, dim, seed) {
  const rand = mulberry32(seed);
  const x = randomFloat32(rand, n * dim);
  const y = Float64Array.from({ length: n }, (_, i) => Math.sin(3 * x[i * dim]) + 0.1 * (rand() - 0.5));
  return { x, y, weights: Float64Array.from({ length: n }, (_, i) => 1 + (i % 3)) };
}

function regressionShapes() {
  const shapes = [];
  for (const dim of [1, 2, 3, 4])
    for (const estimator of ['nadaraya-watson', 'local-linear', 'local-quadratic'])
      for (const kernel of ['gaussian', 'cauchy']) {
        const base = { n: 300, dim, kernel, estimator };
        shapes.push(base, { ...base, weights: true }, { ...base, span: true });
        if (dim <= 2) {
          shapes.push({ ...base, rule: 'cv' }, { ...base, rule: 'aicc' }, { ...base, rule: 'scott' });
          shapes.push({ ...base, rule: 'cv', exclude: 0.05 }, { ...base, rule: 'cv', weights: true });
          if (estimator === 'nadaraya-watson') shapes.push({ ...base, rule: 'cv-gradient' });
        }
      }
  // Large samples where 'auto' bins (1-D and 2-D); where it does not (3-D, Cauchy, span), `planOnly`: their exact
  // fits of 20,000 points take 10-20 s each, and the same shapes run at 300 points above.
  for (const dim of [1, 2]) shapes.push({ n: 20000, dim, kernel: 'epanechnikov', estimator: 'nadaraya-watson' });
  shapes.push({ n: 20000, dim: 1, kernel: 'epanechnikov', estimator: 'nadaraya-watson', rule: 'scott' });
  const large = { n: 20000, dim: 1, kernel: 'epanechnikov', estimator: 'nadaraya-watson', planOnly: true };
  shapes.push({ ...large, dim: 3 }, { ...large, kernel: 'cauchy' }, { ...large, span: true });
  shapes.push({ ...large, rule: 'aicc' }, { ...large, rule: 'cv', exclude: 0.01 }, { ...large, rule: 'cv-gradient' });
  // Local-quadratic runs exactly at any size: 'auto' does not bin it, 'grid' asked for is refused.
  for (const dim of [1, 2]) shapes.push({ ...large, dim, estimator: 'local-quadratic' });
  shapes.push({ ...large, estimator: 'local-quadratic', rule: 'cv' });
  return shapes;
}

/** The API call a regression shape stands for: kernelRegression's model, or selectBandwidth's selection. */
function runRegression(s, method, data) {
  const options = { dim: s.dim, kernel: s.kernel, estimator: s.estimator, method };
  if (s.weights) options.weights = data.weights;
  if (s.rule === undefined) {
    // A bandwidth the grid serves (at most 2^18 nodes) and under which no point is empty.
    options.bandwidth = s.span ? { span: 0.3 } : s.kernel === 'cauchy' ? 0.05 : 0.3 / Math.cbrt(s.n / 300);
    const model = ka.kernelRegression(data.x, data.y, options);
    const result = { method: model.method, reason: model.reason };
    model.dispose();
    return result;
  }
  const selection = ka.selectBandwidth(data.x, data.y, {
    ...options,
    rule: s.rule,
    ...(s.exclude !== undefined ? { exclude: s.exclude } : {}),
  });
  return { method: selection.method, reason: selection.reason };
}

test('regression: every method on every shape runs what plan() says, or both refuse naming the field', () => {
  let ran = 0;
  let refusals = 0;
  let binned = 0;
  for (const [n, { planOnly, ...s }] of regressionShapes().entries()) {
    const data = planOnly ? null : regressionSample(s.n, s.dim, 200 + n);
    const methods = s.rule === undefined ? ['auto', 'exact', 'grid', 'sparse'] : ['auto', 'exact', 'grid'];
    for (const method of methods) {
      const what = `${method} on ${JSON.stringify(s)}`;
      const asked = { ...s, method, weights: !!s.weights, span: !!s.span };
      const field = method === 'auto' ? null : regressionRefusal(method, s);
      if (field) {
        refused(() => ka.plan('regression', asked), ...regressionNames(field, 'plan'), what);
        if (!planOnly) refused(() => runRegression(s, method, data), ...regressionNames(field, 'api'), what);
        refusals++;
        continue;
      }
      const p = ka.plan('regression', asked);
      assert.equal(p.method, expectedMethod(method, s), `${what}: ${p.reason}`);
      if (p.method === method) assert.ok(method === 'auto' || p.reason === `${method}: asked for`, what);
      if (planOnly) continue;
      const got = runRegression(s, method, data);
      if (p.method === 'grid' && s.rule === undefined) {
        // A grid model bins per bandwidth, where a grid reaches the tolerance and its convolutions cost less than the
        // exact fit (at 300 points in 2-D they do not), and says on how many nodes; elsewhere it fits exactly.
        if (got.method === 'grid') {
          const nodes = `^grid: ${s.dim}-D ${s.kernel}, ${s.n} points on \\d+ nodes per axis`;
          assert.match(got.reason, new RegExp(nodes), what);
          binned++;
        } else assert.match(got.reason, /^exact: at this bandwidth no grid/, what);
      } else assert.deepEqual(got, p, what);
      ran++;
    }
  }
  assert.ok(ran > 150 && refusals > 50 && binned >= 6, `${ran} runs, ${refusals} refusals, ${binned} grid models`);
});

test('regression: plan() says why a criterion runs exactly on a grid asked for (AICc bins, blocked CV in 1-D)', () => {
  const base = { n: 50000, dim: 1, method: 'grid' };
  for (const dim of [1, 2]) {
    assert.deepEqual(ka.plan('regression', { ...base, dim, rule: 'aicc' }), {
      method: 'grid',
      reason: 'grid: asked for',
    });
  }
  assert.deepEqual(ka.plan('regression', { ...base, rule: 'cv', exclude: 0.1 }), {
    method: 'grid',
    reason: 'grid: asked for',
  });
  assert.deepEqual(ka.plan('regression', { ...base, dim: 2, rule: 'cv', exclude: 0.1 }), {
    method: 'exact',
    reason: 'exact: blocked CV (exclude) runs exactly in 2-D: the grid leaves its band out in 1-D',
  });
  assert.match(
    ka.plan('regression', { ...base, method: 'auto', rule: 'cv', exclude: 0.1 }).reason,
    /^grid: .*blocked CV's band left out exactly$/,
  );
  assert.deepEqual(ka.plan('regression', { ...base, method: 'auto', rule: 'cv-gradient' }), {
    method: 'exact',
    reason: "exact: rule 'cv-gradient' runs exactly",
  });
  assert.equal(ka.plan('regression', { ...base, rule: 'cv' }).method, 'grid');
  // A sparse model's own fits are sparse; 'auto' never picks sparse for a regression.
  const sparse = { n: 50000, dim: 1, estimator: 'nadaraya-watson' };
  assert.deepEqual(ka.plan('regression', { ...sparse, method: 'sparse' }), {
    method: 'sparse',
    reason: 'sparse: asked for',
  });
  assert.equal(ka.plan('regression', { ...sparse, dim: 3 }).method, 'exact');
});
