// method 'sparse' (certified sparsity, issue 5 item 4) through the public API, against the independent float64
// reference: compact kernels equal exact attention, exponential kernels stay within each row's reported bound, the
// error shrinks with the tolerance, masks and empty rows follow the exact engine, kernelRegression's sparse
// Nadaraya–Watson model; bad options are typed errors naming the option, inputs stay untouched, memory is freed.
import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { makeEngine } from '../../web/src/engine.js';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { makeAttentionWithInfo } from '../../web/src/attention.js';
import { initOptions } from './build.mjs';
import { countedModule } from './counted.mjs';
import { maxAbsDiff, mulberry32, randomFloat32, referenceAttention, referenceLocalFit } from './reference.mjs';

const ka = await init(initOptions);

function problem({ I, J, dim, D, seed }) {
  const rand = mulberry32(seed);
  return { q: randomFloat32(rand, I * dim), k: randomFloat32(rand, J * dim), v: randomFloat32(rand, J * D) };
}

const COMPACT = ['epanechnikov', 'tricube', 'uniform'];
const EXPONENTIAL = ['gaussian', 'laplacian', 'cauchy'];

test('compact kernels: sparse equals exact attention (dims 1–3, heads, causal, leave-one-out, key padding)', () => {
  for (const kernel of COMPACT) {
    for (const [dim, heads] of [
      [1, 1],
      [2, 1],
      [3, 1],
      [4, 2],
      [6, 2],
    ]) {
      for (const masks of [{}, { causal: true }, { mask: 'loo' }, { mask: 'padding' }]) {
        const J = 70;
        const I = masks.mask === 'loo' ? J : 37;
        const { q, k, v } = problem({ I, J, dim, D: 2 * heads, seed: dim * 10 + heads });
        const mask = masks.mask === 'padding' ? Uint8Array.from({ length: J }, (_, j) => j % 3 === 0) : masks.mask;
        const options = {
          dim,
          heads,
          kernel,
          bandwidth: 0.4,
          causal: masks.causal ?? false,
          ...(mask ? { mask } : {}),
          empty: 'zero',
        };
        const exact = ka.attention(q, k, v, options);
        const sparse = ka.attentionWithInfo(q, k, v, { ...options, method: 'sparse' });
        const label = `${kernel}, dim ${dim}, heads ${heads}, ${JSON.stringify(masks)}`;
        // Both sum the same float32 weights, in a different order: a few float32 ulps of values in [-1, 1].
        assert.ok(maxAbsDiff(sparse.output, exact) <= 2e-6, `${label}: ${maxAbsDiff(sparse.output, exact)}`);
        assert.ok(maxAbsDiff(sparse.output, referenceAttention(q, k, v, options)) <= 1e-5, label);
        assert.equal(sparse.method, 'sparse');
        assert.equal(sparse.errorEstimate, 0);
        assert.equal(sparse.droppedMass.length, I * heads);
        assert.ok(
          sparse.droppedMass.every((d) => d === 0 || Number.isNaN(d)),
          label,
        );
        assert.equal(sparse.keptKeys + sparse.skippedKeys, I * J * heads);
      }
    }
  }
});

test("exponential kernels: every output is within its row's bound of the float64 reference; the bound shrinks with the tolerance", () => {
  for (const kernel of EXPONENTIAL) {
    for (const dim of [1, 2, 3]) {
      const { q, k, v } = problem({ I: 60, J: 800, dim, D: 2, seed: 40 + dim });
      const options = { dim, kernel, bandwidth: kernel === 'cauchy' ? 0.02 : 0.08 };
      const want = referenceAttention(q, k, v, options);
      let previous = { estimate: Infinity };
      for (const tolerance of [1e-2, 1e-3, 1e-5]) {
        const run = ka.attentionWithInfo(q, k, v, { ...options, method: 'sparse', tolerance });
        const label = `${kernel}, dim ${dim}, tolerance ${tolerance}`;
        let worst = 0;
        let estimate = 0;
        for (let i = 0; i < 60; i++) {
          const b = run.droppedMass[i];
          assert.ok(b >= 0 && b <= tolerance, `${label}: row ${i} bound ${b}`); // widened until within it
          estimate = Math.max(estimate, b / (1 + b));
          for (let d = 0; d < 2; d++) {
            const err = Math.abs(run.output[i * 2 + d] - want[i * 2 + d]) / 2; // values span about 2
            assert.ok(err <= b / (1 + b) + 1e-5, `${label}: row ${i} error ${err} above its bound ${b / (1 + b)}`);
            worst = Math.max(worst, err);
          }
        }
        assert.ok(
          Math.abs(run.errorEstimate - estimate) <= 1e-12 * (1 + estimate),
          `${label}: ${run.errorEstimate} vs ${estimate}`,
        );
        // The guarantee tightens with the tolerance (the error itself need not fall monotonically: a widened radius
        // at a loose tolerance can keep more keys for some rows than the first radius of a tighter one).
        assert.ok(
          run.errorEstimate <= tolerance && worst <= run.errorEstimate + 1e-5,
          `${label}: ${worst}, ${run.errorEstimate}`,
        );
        assert.ok(run.errorEstimate <= previous.estimate, `${label}: ${run.errorEstimate} after ${previous.estimate}`);
        previous = { estimate: run.errorEstimate };
      }
    }
  }
});

test('sparse skips most keys for narrow bandwidths and none for wide ones', () => {
  const { q, k, v } = problem({ I: 50, J: 4000, dim: 2, D: 1, seed: 5 });
  const narrow = ka.attentionWithInfo(q, k, v, { dim: 2, kernel: 'gaussian', bandwidth: 0.02, method: 'sparse' });
  assert.ok(narrow.skippedKeys > 0.9 * 50 * 4000, `skipped ${narrow.skippedKeys}`);
  const wide = ka.attentionWithInfo(q, k, v, { dim: 2, kernel: 'gaussian', bandwidth: 50, method: 'sparse' });
  assert.equal(wide.skippedKeys, 0);
  assert.equal(wide.errorEstimate, 0);
  assert.ok(maxAbsDiff(wide.output, ka.attention(q, k, v, { dim: 2, kernel: 'gaussian', bandwidth: 50 })) <= 2e-6);
});

test("method 'auto', the default, runs sparse where few keys are in reach of a query and the call is large, else exact, and says which", () => {
  // I·J = 2²⁰, the smallest call 'auto' indexes; keys span about 2 per dimension.
  const { q, k, v } = problem({ I: 1024, J: 1024, dim: 2, D: 2, seed: 60 });
  const sparseCases = [
    [{ dim: 2, kernel: 'gaussian', bandwidth: 0.02 }, 1e-3],
    [{ dim: 2, kernel: 'laplacian', bandwidth: [0.01, 0.03] }, 1e-5],
    [{ dim: 2, heads: 2, kernel: 'epanechnikov', bandwidth: 0.1 }, undefined], // 1 dimension per head: a share of 0.1
    [{ dim: 1, kernel: 'gaussian', bandwidth: 0.005, causal: true }, 1e-2],
  ];
  for (const [options, tolerance] of sparseCases) {
    const qq = options.dim === 1 ? q.subarray(0, 1024) : q;
    const kk = options.dim === 1 ? k.subarray(0, 1024) : k;
    const run = ka.attentionWithInfo(qq, kk, v, { ...options, method: 'auto', ...(tolerance ? { tolerance } : {}) });
    const label = JSON.stringify(options);
    assert.equal(run.method, 'sparse', label);
    // Within the guarantee against the float64 reference (values span about 2), at the default 1e-3 when not given.
    const bound = run.errorEstimate;
    assert.ok(bound <= (tolerance ?? 1e-3), `${label}: ${bound}`);
    const err = maxAbsDiff(run.output, referenceAttention(qq, kk, v, options)) / 2;
    assert.ok(err <= bound + 1e-5, `${label}: error ${err} above the bound ${bound}`);
    // No method is 'auto'.
    assert.deepEqual(ka.attention(qq, kk, v, { ...options, ...(tolerance ? { tolerance } : {}) }), run.output, label);
  }
  const exactCases = [
    { dim: 2 }, // softmax: no certificate
    { dim: 2, kernel: 'cauchy', bandwidth: 0.001 }, // its tail reaches every key
    { dim: 2, kernel: 'gaussian', bandwidth: 0.5 }, // most keys within reach
    {
      dim: 2,
      kernel: 'gaussian',
      bandwidth: 0.02,
      mask: Uint8Array.from({ length: 1024 * 1024 }, (_, n) => n % 7 === 0),
    },
  ];
  for (const options of exactCases) {
    const run = ka.attentionWithInfo(q, k, v, { ...options, method: 'auto' });
    assert.equal(run.method, 'exact', JSON.stringify(options).slice(0, 80));
    assert.deepEqual(run.output, ka.attention(q, k, v, { ...options, method: 'exact' }));
  }
  // Fewer pairs than 2²⁰: exact, whatever the bandwidth.
  const few = ka.attentionWithInfo(q.subarray(0, 2 * 1000), k, v, {
    dim: 2,
    kernel: 'gaussian',
    bandwidth: 0.02,
    method: 'auto',
  });
  assert.equal(few.method, 'exact');
});

test('empty rows follow options.empty as in the exact engine; error names options.empty', () => {
  const k = [0, 1, 2, 3];
  const v = [1, 2, 3, 4];
  const q = [0.1, 10, 2.2];
  for (const empty of ['nan', 'zero', 'nearest']) {
    const options = { dim: 1, kernel: 'epanechnikov', bandwidth: 0.3, empty };
    const got = ka.attentionWithInfo(q, k, v, { ...options, method: 'sparse' });
    assert.deepEqual(Array.from(got.output), Array.from(ka.attention(q, k, v, options)), empty);
    assert.ok(Number.isNaN(got.droppedMass[1]));
  }
  assert.throws(
    () => ka.attention(q, k, v, { dim: 1, kernel: 'epanechnikov', bandwidth: 0.3, empty: 'error', method: 'sparse' }),
    (e) =>
      e instanceof KernelAttentionError &&
      e.code === 'EmptyRow' &&
      e.argument === 'options.empty' &&
      /query 1/.test(e.message),
  );
});

test('refusals name their option; inputs are not mutated', () => {
  const { q, k, v } = problem({ I: 4, J: 5, dim: 4, D: 2, seed: 9 });
  const copies = [q, k, v].map((a) => a.slice());
  const cases = [
    [{ dim: 4, kernel: 'gaussian', bandwidth: 1, method: 'sparse' }, 'options.dim'],
    [{ dim: 4, heads: 2, method: 'sparse' }, 'options.method'], // softmax
    [
      { dim: 4, heads: 2, kernel: 'gaussian', bandwidth: 1, method: 'sparse', mask: new Uint8Array(20) },
      'options.mask',
    ],
    [
      {
        dim: 4,
        heads: 2,
        kernel: 'gaussian',
        bandwidth: 1,
        method: 'sparse',
        groups: { queries: [0, 0, 0, 0], keys: [0, 0, 0, 0, 0] },
      },
      'options.groups',
    ],
    [{ dim: 4, heads: 2, kernel: 'gaussian', bandwidth: 1, method: 'sparse', tolerance: 0 }, 'options.tolerance'],
    [{ dim: 4, heads: 2, kernel: 'gaussian', bandwidth: 1, method: 'sparse', features: 8 }, 'options.features'],
  ];
  for (const [options, argument] of cases) {
    assert.throws(
      () => ka.attention(q, k, v, options),
      (e) => e instanceof KernelAttentionError && e.argument === argument,
      argument,
    );
  }
  ka.attention(q, k, v, { dim: 4, heads: 2, kernel: 'gaussian', bandwidth: 1, method: 'sparse', causal: true });
  [q, k, v].forEach((a, n) => assert.deepEqual(a, copies[n]));
});

test('kernelRegression with method sparse: Nadaraya–Watson within the reported bound, model.method, refusals', () => {
  const rand = mulberry32(17);
  for (const dim of [1, 2]) {
    const n = 3000;
    const x = randomFloat32(rand, n * dim, 0, 1);
    const y = Float32Array.from(
      { length: n },
      (_, i) => Math.sin(6 * x[i * dim]) + (dim === 2 ? Math.cos(4 * x[i * dim + 1]) : 0),
    );
    const xq = randomFloat32(rand, 40 * dim, 0, 1);
    for (const kernel of ['gaussian', 'tricube']) {
      const options = { dim, kernel, bandwidth: 0.03, estimator: 'nadaraya-watson' };
      const model = ka.kernelRegression(x, y, { ...options, method: 'sparse', tolerance: 1e-4 });
      assert.equal(model.method, 'sparse');
      const band = model.predictInterval(xq);
      const want = referenceLocalFit(x, y, xq, options);
      let lo = Infinity;
      let hi = -Infinity;
      for (const t of y) [lo, hi] = [Math.min(lo, t), Math.max(hi, t)];
      const err = maxAbsDiff(band.mean, want.mean) / (hi - lo);
      assert.ok(err <= band.errorEstimate + 1e-5, `dim ${dim} ${kernel}: error ${err}, estimate ${band.errorEstimate}`);
      if (kernel === 'tricube') assert.equal(band.errorEstimate, 0);
      // Σℓ² and the effective keys over the kept points: those of the reference within the skipped share.
      for (let i = 0; i < 40; i++) {
        assert.ok(Math.abs(band.effectiveKeys[i] / want.effectiveKeys[i] - 1) <= 1e-3, `row ${i}`);
        assert.ok(Math.abs(band.logDenominator[i] - want.logDenominator[i]) <= 1e-3, `row ${i}`);
      }
      assert.deepEqual(model.predict(xq), band.mean);
      model.dispose();
    }
  }
  const x = [0, 0.5, 1, 1.5];
  const y = [1, 2, 3, 4];
  for (const [options, argument] of [
    [{ dim: 1, method: 'sparse' }, 'options.method'], // local-linear, the default
    [{ dim: 4, method: 'sparse', estimator: 'nadaraya-watson', bandwidth: 1 }, 'options.method'],
    [{ dim: 1, method: 'sparse', estimator: 'nadaraya-watson', weights: [1, 1, 1, 1] }, 'options.weights'],
    [{ dim: 1, method: 'sparse', estimator: 'nadaraya-watson', tolerance: 2 }, 'options.tolerance'],
  ]) {
    const xs = options.dim === 4 ? [...x, ...x] : x;
    const ys = options.dim === 4 ? [1, 2] : y;
    assert.throws(
      () => ka.kernelRegression(xs, ys, options),
      (e) => e instanceof KernelAttentionError && e.argument === argument,
      JSON.stringify(options),
    );
  }
});

test('sparse calls free everything they allocate (success and refusal)', async () => {
  const { module, live, stats } = await countedModule();
  const withInfo = makeAttentionWithInfo(makeEngine(module));
  const { q, k, v } = problem({ I: 40, J: 60, dim: 2, D: 2, seed: 8 });
  const before = module.HEAPU8.length;
  for (let n = 0; n < 40; n++) {
    withInfo(q, k, v, {
      dim: 2,
      heads: 1 + (n % 2),
      kernel: n % 2 ? 'gaussian' : 'uniform',
      bandwidth: 0.3,
      causal: n % 3 === 0,
      method: 'sparse',
    });
    assert.throws(
      () => withInfo(q, k, v, { dim: 2, kernel: 'uniform', bandwidth: 0.01, empty: 'error', method: 'sparse' }),
      KernelAttentionError,
    );
  }
  assert.equal(live.size, 0);
  assert.equal(stats.badFrees, 0, 'free of a pointer not allocated');
  assert.equal(module.HEAPU8.length, before, 'wasm memory grew across small sparse calls: a leak in the core?');
});

test('docs/approximations.md shows examples/sparse.mjs verbatim, and it runs with every measured error within its guarantee', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const example = readFileSync(root + 'examples/sparse.mjs', 'utf8');
  assert.ok(
    readFileSync(root + 'docs/approximations.md', 'utf8').includes('```js\n' + example.trimEnd() + '\n```'),
    'stale copy',
  );
  const output = execFileSync(process.execPath, [root + 'examples/sparse.mjs'], { encoding: 'utf8' });
  const rows = [
    ...output.matchAll(
      /^(\w+): ([\d.]+) % of the pairs visited, guaranteed error ≤ (\S+), measured (\S+) \(of the range\)$/gm,
    ),
  ];
  assert.deepEqual(
    rows.map((r) => r[1]),
    ['gaussian', 'epanechnikov'],
    output,
  );
  for (const [, kernel, visited, bound, measured] of rows) {
    assert.ok(Number(visited) < 5, `${kernel}: ${visited} % visited`);
    assert.ok(Number(measured) <= Number(bound) + 1e-5, `${kernel}: measured ${measured} above the guarantee ${bound}`);
  }
  assert.equal(Number(rows[1][3]), 0);
});
