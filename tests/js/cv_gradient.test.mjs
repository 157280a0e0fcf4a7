// selectBandwidth(x, y, { rule: 'cv-gradient' }) (issue 9, item 2): learned bandwidths by L-BFGS on the exact CV
// gradient. Judged by an independent float64 leave-one-out CV written here, against the coordinate search of
// method 'cv' with perDimension, and by the async sibling's bytes, progress and abort.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { mulberry32 } from './reference.mjs';

const ka = await init();

/** x uniform on [0, 1]^dim, y = f(x) + 0.2·N(0, 1) (Box–Muller), from a fixed seed. */
function sample(n, dim, seed, f) {
  const rand = mulberry32(seed);
  const x = Float32Array.from({ length: n * dim }, rand);
  const y = Float32Array.from(
    { length: n },
    (_, i) =>
      f(x.subarray(i * dim, (i + 1) * dim)) +
      0.2 * Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand()),
  );
  return { x, y };
}

/** Leave-one-out CV of the Gaussian Nadaraya–Watson estimate in float64, with u = L(q − k) when `transform` is given. */
function looCv(x, y, dim, h, transform) {
  const n = y.length;
  const L =
    transform ?? Float64Array.from({ length: dim * dim }, (_, k) => (k % (dim + 1) === 0 ? 1 / h[k / (dim + 1)] : 0));
  let total = 0;
  for (let i = 0; i < n; i++) {
    let num = 0,
      den = 0;
    for (let j = 0; j < n; j++) {
      if (j === i) continue;
      let u2 = 0;
      for (let r = 0; r < dim; r++) {
        let u = 0;
        for (let d = 0; d < dim; d++) u += L[r * dim + d] * (x[i * dim + d] - x[j * dim + d]);
        u2 += u * u;
      }
      const w = Math.exp(-0.5 * u2);
      num += w * y[j];
      den += w;
    }
    total += (y[i] - num / den) ** 2;
  }
  return total / n;
}

const ard = sample(300, 5, 2026, (p) => Math.sin(2 * Math.PI * p[0]));

test('ARD: with y depending on x1 only, h1 ends at least 10× below h2..h5, and CV is no worse than the coordinate search', () => {
  const start = ka.selectBandwidth(ard.x, ard.y, { dim: 5, rule: 'scott' }).bandwidth;
  const got = ka.selectBandwidth(ard.x, ard.y, { dim: 5, rule: 'cv-gradient' });
  const cd = ka.selectBandwidth(ard.x, ard.y, { dim: 5, rule: 'cv', perDimension: true });
  const h = got.bandwidth;
  for (let d = 1; d < 5; d++) assert.ok(h[d] >= 10 * h[0], `h = ${h}`);
  for (let d = 0; d < 5; d++) {
    // the documented box: within 1e-3 … 1e3 × Scott's rule
    assert.ok(
      h[d] >= (start[d] / 1e3) * (1 - 1e-12) && h[d] <= start[d] * 1e3 * (1 + 1e-12),
      `h${d + 1} = ${h[d]}, start ${start[d]}`,
    );
  }
  // Both judged by the float64 CV written above, not by either search's own figure.
  const ours = looCv(ard.x, ard.y, 5, h),
    theirs = looCv(ard.x, ard.y, 5, cd.bandwidth);
  assert.ok(
    ours <= theirs * (1 + 1e-5),
    `cv-gradient ${ours} (h = ${h}) vs coordinate search ${theirs} (h = ${cd.bandwidth})`,
  );
  assert.ok(Math.abs(got.score - ours) <= 1e-4 * ours, `reported ${got.score} vs float64 ${ours}`);
  assert.equal(got.rule, 'cv-gradient');
  assert.equal(got.method, 'exact');
  assert.equal(got.metric, 'diagonal');
  assert.ok(got.iterations > 0 && got.iterations <= 100);
  // The loss curve: one entry per evaluation (at least one per iteration), its minimum the reported score.
  const evaluations = got.curve.scores.length;
  assert.ok(evaluations > got.iterations);
  assert.equal(got.curve.bandwidths.length, 5 * evaluations);
  assert.equal(Math.min(...got.curve.scores), got.score);
  // It starts at Scott's rule (as exp(log h)).
  got.curve.bandwidths
    .subarray(0, 5)
    .forEach((v, d) => assert.ok(Math.abs(v - start[d]) <= 1e-14 * start[d], `${v} vs ${start[d]}`));
});

test("metric 'full' learns a rotated direction that per-dimension bandwidths cannot express", () => {
  const { x, y } = sample(200, 2, 7, (p) => Math.sin(2 * Math.PI * (p[0] - p[1])));
  const diagonal = ka.selectBandwidth(x, y, { dim: 2, rule: 'cv-gradient' });
  const full = ka.selectBandwidth(x, y, { dim: 2, rule: 'cv-gradient', metric: 'full' });
  assert.equal(full.metric, 'full');
  assert.equal(full.transform.length, 4);
  const L = full.transform;
  const cvFull = looCv(x, y, 2, null, L);
  assert.ok(Math.abs(full.score - cvFull) <= 1e-4 * cvFull, `reported ${full.score} vs float64 ${cvFull}`);
  assert.ok(cvFull < 0.97 * looCv(x, y, 2, diagonal.bandwidth), `full ${cvFull} vs diagonal ${diagonal.score}`);
  // bandwidth: the metric's length scale along each axis, 1/‖L e_d‖; the curve keeps each L.
  for (let d = 0; d < 2; d++)
    assert.ok(Math.abs(full.bandwidth[d] - 1 / Math.hypot(L[d], L[2 + d])) <= 1e-12 * full.bandwidth[d]);
  assert.equal(full.curve.transforms.length, 4 * full.curve.scores.length);
  assert.equal(full.curve.bandwidths.length, 2 * full.curve.scores.length);
});

test('maxIterations bounds the iterations; the compact kernels work from a start with empty neighbourhoods', () => {
  const few = ka.selectBandwidth(ard.x, ard.y, { dim: 5, rule: 'cv-gradient', maxIterations: 2 });
  assert.ok(few.iterations <= 2);
  const { x, y } = sample(60, 2, 11, (p) => p[0]);
  for (const kernel of ['epanechnikov', 'tricube', 'laplacian', 'cauchy']) {
    const got = ka.selectBandwidth(x, y, { dim: 2, rule: 'cv-gradient', kernel });
    assert.ok(
      Number.isFinite(got.score) && got.bandwidth.every((h) => h > 0 && Number.isFinite(h)),
      `${kernel}: ${got.bandwidth}`,
    );
    const exact = ka.cvScore(x, y, {
      dim: 2,
      kernel,
      estimator: 'nadaraya-watson',
      bandwidth: Array.from(got.bandwidth),
    });
    assert.ok(Math.abs(got.score - exact) <= 1e-4 * exact, `${kernel}: ${got.score} vs cvScore ${exact}`);
  }
});

test('bad options give KernelAttentionErrors naming them', () => {
  const { x, y } = sample(20, 2, 3, (p) => p[0]);
  const cases = [
    [{ metric: 'ard' }, 'options.metric'],
    [{ metric: 2 }, 'options.metric'],
    [{ metric: ['full'] }, 'options.metric'],
    [{ maxIterations: 0 }, 'options.maxIterations'],
    [{ maxIterations: 2.5 }, 'options.maxIterations'],
    [{ maxIterations: '10' }, 'options.maxIterations'],
    [{ estimator: 'local-linear' }, 'options.estimator'],
    [{ kernel: 'uniform' }, 'options.kernel'],
    [{ weights: new Float32Array(20).fill(1) }, 'options.weights'],
    [{ method: 'grid' }, 'options.method'],
    [{ rule: 'cv', metric: 'full' }, 'options.metric'],
    [{ rule: 'aicc', maxIterations: 3 }, 'options.maxIterations'],
  ];
  for (const [options, argument] of cases) {
    assert.throws(
      () => ka.selectBandwidth(x, y, { dim: 2, rule: 'cv-gradient', ...options }),
      (e) => {
        assert.ok(e instanceof KernelAttentionError, `${JSON.stringify(options)}: ${e}`);
        assert.equal(e.code, 'BadArgument');
        assert.equal(e.argument, argument, JSON.stringify(options));
        assert.ok(e.message.includes(argument), e.message);
        return true;
      },
    );
  }
});

test('selectBandwidthAsync: the same bytes, one progress report per evaluation, and an abort between them', async () => {
  const { x, y } = sample(150, 3, 5, (p) => Math.sin(4 * p[0]) + p[1]);
  for (const metric of ['diagonal', 'full']) {
    const want = ka.selectBandwidth(x, y, { dim: 3, rule: 'cv-gradient', metric });
    const reports = [];
    const got = await ka.selectBandwidthAsync(x, y, {
      dim: 3,
      rule: 'cv-gradient',
      metric,
      onProgress: (p) => reports.push(p),
    });
    assert.ok(Object.is(got.score, want.score), `${metric}: ${got.score} vs ${want.score}`);
    assert.equal(got.iterations, want.iterations);
    for (const [a, b] of [
      [got.bandwidth, want.bandwidth],
      [got.curve.scores, want.curve.scores],
      [got.curve.bandwidths, want.curve.bandwidths],
    ]) {
      assert.deepEqual(
        new Uint8Array(a.buffer, a.byteOffset, a.byteLength),
        new Uint8Array(b.buffer, b.byteOffset, b.byteLength),
      );
    }
    const evaluations = want.curve.scores.length;
    assert.equal(reports.length, evaluations + 1, `${metric}: one report per evaluation, and the end`);
    reports.forEach((r, i) => assert.equal(r.done, Math.min(i + 1, evaluations)));
    assert.deepEqual(reports.at(-1), { done: evaluations, total: evaluations });
  }
  const controller = new AbortController();
  let seen = 0;
  await assert.rejects(
    ka.selectBandwidthAsync(x, y, {
      dim: 3,
      rule: 'cv-gradient',
      signal: controller.signal,
      onProgress: () => ++seen === 3 && controller.abort(),
    }),
    (e) => e.name === 'AbortError',
  );
  assert.equal(seen, 3);
});
