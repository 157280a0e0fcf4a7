// Nearest-neighbour span bandwidths (bandwidth: { span }): fits against a float64 naive k-NN loop in 1-D and 2-D
// (tests/js/reference.mjs, referenceSpanFit), agreement with ka.lowess (tricube, local-linear, no robustness: the
// same smoother), coincident points, the model's report and validation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { mulberry32, randomFloat32, referenceLocalFit, referenceLocalSlope, referenceSpanFit } from './reference.mjs';

const ka = await init();

const range = (v) => Math.max(...v) - Math.min(...v);
function maxError(got, want) {
  assert.equal(got.length, want.length, 'length');
  let worst = 0;
  for (let k = 0; k < want.length; k++) {
    const err = Math.abs(got[k] - want[k]);
    worst = Math.max(worst, Number.isNaN(err) ? Infinity : err);
  }
  return worst;
}

/** n seeded points in [0, 4] × [−1, 3] (float32), with the second column stretched so that scaling matters. */
function sample(seed, n, dim) {
  const rand = mulberry32(seed);
  const x = randomFloat32(rand, n * dim, 0, 4);
  for (let i = 0; i < n && dim > 1; i++) x[i * dim + 1] = Math.fround(x[i * dim + 1] * 25 - 10);
  const y = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    y[i] = Math.fround(Math.sin(2 * x[i * dim]) + (dim > 1 ? Math.cos(x[i * dim + 1] / 20) : 0) + 0.3 * (rand() - 0.5));
  }
  const xq = randomFloat32(rand, 20 * dim, 0.2, 3.8);
  for (let i = 0; i < 20 && dim > 1; i++) xq[i * dim + 1] = Math.fround(xq[i * dim + 1] * 25 - 10);
  return { x, y, xq };
}

test('span fits match a float64 naive k-NN loop (1-D, 2-D; several kernels, both estimators)', () => {
  for (const dim of [1, 2]) {
    const { x, y, xq } = sample(3 + dim, 160, dim);
    for (const kernel of ['tricube', 'gaussian', 'epanechnikov', 'cauchy']) {
      for (const estimator of ['local-linear', 'nadaraya-watson']) {
        for (const span of [0.1, 0.45]) {
          const model = ka.kernelRegression(x, y, { dim, kernel, estimator, bandwidth: { span } });
          const want = referenceSpanFit(x, y, xq, { dim, kernel, estimator, span });
          const what = `${dim}-D ${kernel} ${estimator} span ${span}`;
          const err = maxError(model.predict(xq), want.mean);
          assert.ok(err <= 1e-4 * range(y), `${what}: ${err}`);
          const band = model.predictInterval(xq);
          assert.ok(maxError(band.mean, want.mean) <= 1e-4 * range(y), `${what}: predictInterval's mean`);
          assert.equal(band.bandwidths.length, xq.length, `${what}: per-query bandwidths`);
          for (let k = 0; k < xq.length; k++) {
            assert.ok(
              Math.abs(band.bandwidths[k] - want.bandwidths[k]) <= 1e-6 * want.bandwidths[k],
              `${what}: bandwidth ${k}: ${band.bandwidths[k]} vs ${want.bandwidths[k]}`,
            );
          }
          // The fit at the sample itself (the summary's fit) is the same smoother: its trace is the model's
          // effective degrees of freedom.
          if (kernel === 'tricube') {
            const own = referenceSpanFit(x, y, x, { dim, kernel, estimator, span }).bandwidths;
            let trace = 0;
            for (let i = 0; i < x.length / dim; i++) {
              trace += referenceLocalFit(x, y, x.subarray(i * dim, (i + 1) * dim), {
                dim,
                kernel,
                estimator,
                bandwidth: own.subarray(i * dim, (i + 1) * dim),
              }).ell[i];
            }
            assert.ok(
              Math.abs(model.effectiveDegreesOfFreedom - trace) <= 1e-4 * trace,
              `${what}: trace ${model.effectiveDegreesOfFreedom} vs ${trace}`,
            );
          }
          const atSample = referenceSpanFit(x, y, x.subarray(0, 10 * dim), { dim, kernel, estimator, span });
          assert.ok(
            maxError(model.predict(x.subarray(0, 10 * dim)), atSample.mean) <= 1e-4 * range(y),
            `${what}: at the sample`,
          );
        }
      }
    }
  }
});

test('tricube local-linear with span f and no robustness is ka.lowess(x, y, { frac: f, iterations: 0, delta: 0 })', () => {
  const rand = mulberry32(99);
  const n = 200;
  // Distinct x (a jittered grid, no ties), noisy y.
  const x = Float64Array.from({ length: n }, (_, i) => Math.fround(i * 0.05 + 0.02 * rand()));
  const y = Float64Array.from(x, (v) => Math.fround(Math.sin(v) * 2 + 0.5 * (rand() - 0.5)));
  // Both count ⌊f·n⌋ neighbours here (lowess: R's lowess's ⌊f·n + 1e-7⌋, at least 2; a span: R's loess's ⌊f·n⌋).
  for (const frac of [0.1, 0.3, 0.65, 0.333]) {
    const model = ka.kernelRegression(x, y, { dim: 1, kernel: 'tricube', bandwidth: { span: frac } });
    const lowess = ka.lowess(x, y, { frac, iterations: 0, delta: 0 });
    const fitted = lowess.fitted ?? lowess;
    const err = maxError(model.predict(x), fitted);
    assert.ok(err <= 1e-4 * range(y), `frac ${frac}: ${err}`);
  }
});

test('with robust, the span fit is LOWESS itself: ka.lowess(x, y, { frac: f, iterations: 3, delta: 0 }) on data with outliers', () => {
  // lowess follows R's lowess() (tests/js/lowess.test.mjs checks it against R's own numbers), so a span fit with
  // bisquare robustness, tricube and local-linear must give its values: an independent check of spans and robustness
  // together (R's 0.001/0.999 cut-offs of the robustness weights move the fit by less than 1e-5 of range(y) here).
  const rand = mulberry32(7);
  const n = 300;
  const x = Float64Array.from({ length: n }, (_, i) => i / n + 0.002 * rand());
  const y = Float64Array.from(x, (v, i) => Math.sin(6 * v) + 0.1 * (rand() - 0.5) + (i % 37 === 0 ? 5 : 0));
  for (const frac of [0.3, 0.5]) {
    const model = ka.kernelRegression(x, y, {
      dim: 1,
      kernel: 'tricube',
      bandwidth: { span: frac },
      robust: { iterations: 3 },
    });
    const err = maxError(model.predict(x), ka.lowess(x, y, { frac, iterations: 3, delta: 0 }).fitted);
    assert.ok(err <= 1e-5 * range(y), `frac ${frac}: ${err}`);
    assert.ok(
      maxError(
        ka.kernelRegression(x, y, { dim: 1, kernel: 'tricube', bandwidth: { span: frac } }).predict(x),
        ka.lowess(x, y, { frac, iterations: 3, delta: 0 }).fitted,
      ) >
        1e-3 * range(y),
      'the outliers must matter without robust',
    );
  }
});

test("span gradients are the local-linear slopes at each query's own bandwidth", () => {
  const { x, y, xq } = sample(8, 120, 2);
  const model = ka.kernelRegression(x, y, { dim: 2, kernel: 'gaussian', bandwidth: { span: 0.3 } });
  const got = model.gradient(xq);
  const { bandwidths } = referenceSpanFit(x, y, xq, { dim: 2, kernel: 'gaussian', span: 0.3 });
  for (let i = 0; i < xq.length / 2; i++) {
    const want = referenceLocalSlope(x, y, xq.slice(2 * i, 2 * i + 2), {
      dim: 2,
      kernel: 'gaussian',
      bandwidth: bandwidths.slice(2 * i, 2 * i + 2),
    });
    for (let d = 0; d < 2; d++) {
      const w = want.slope[d];
      assert.ok(Math.abs(got.gradient[2 * i + d] - w) <= 1e-4 * Math.abs(w) + 1e-6, `query ${i}, dimension ${d}`);
    }
  }
});

test('a span model reports { span, scale, neighbours }, runs exactly, and fits coincident points by their mean', () => {
  const x = [0, 0, 0, 1, 2, 3, 4, 5, 6, 7];
  const y = [1, 2, 6, 0, 0, 0, 0, 0, 0, 0];
  const model = ka.kernelRegression(x, y, { dim: 1, kernel: 'tricube', bandwidth: { span: 0.3 } });
  assert.equal(model.bandwidth.span, 0.3);
  assert.deepEqual(model.bandwidth.scale, new Float64Array([1]));
  assert.equal(model.bandwidth.neighbours, 3);
  assert.equal(model.method, 'exact');
  assert.equal(model.selection.rule, 'span');
  const at0 = model.predictInterval([0]);
  assert.equal(at0.bandwidths[0], 0); // three points coincide with the query: the 3rd neighbour is at distance 0
  assert.ok(Math.abs(at0.mean[0] - 3) <= 1e-6, `mean of the coincident points: ${at0.mean[0]}`);
  const big = sample(1, 3000, 1);
  const auto = ka.kernelRegression(big.x, big.y, { dim: 1, bandwidth: { span: 0.2 } });
  assert.equal(auto.method, 'exact');
  assert.match(auto.reason, /span/);
});

test("the neighbour count is R's loess's: ⌊f·n⌋, at least the design's columns + 1, every point above f = 1", () => {
  // R's loess (lowesd) takes q = min(n, ⌊n·f⌋) with f·n in double, refuses q ≤ the columns of the local design (1;
  // dim + 1), and above f = 1 multiplies the squared radius by f (so the distance by √f, in any dimension).
  const { x, y, xq } = sample(21, 50, 1);
  const count = (span, estimator = 'local-linear', data = { x, dim: 1 }) =>
    ka.kernelRegression(data.x, y, { dim: data.dim, kernel: 'tricube', estimator, bandwidth: { span } }).bandwidth
      .neighbours;
  assert.equal(count(0.3), 15);
  assert.equal(count(0.29), 14); // 0.29 · 50 = 14.499…: no rounding up
  assert.equal(count(0.58), 28); // 0.58 · 50 = 28.999999999999996 in double: R takes 28 too
  assert.equal(count(0.02), 3); // ⌊1⌋ raised to local-linear's 2 columns + 1 in 1-D
  assert.equal(count(0.02, 'nadaraya-watson'), 2);
  const flat = sample(22, 50, 2);
  assert.equal(count(0.02, 'local-linear', { x: flat.x, dim: 2 }), 4);
  assert.equal(count(1), 50);
  assert.equal(count(3), 50);
  // (Local-linear at the minimum fits a line through the 2 points of positive weight: the guard for singular designs
  // acts there, so the fits are compared from 5 neighbours up; Nadaraya–Watson at its minimum too.)
  for (const [span, estimators] of [
    [0.02, ['nadaraya-watson']],
    [0.1, ['local-linear', 'nadaraya-watson']],
    [1.5, ['local-linear', 'nadaraya-watson']],
    [4, ['local-linear', 'nadaraya-watson']],
  ]) {
    for (const estimator of estimators) {
      const model = ka.kernelRegression(x, y, { dim: 1, kernel: 'tricube', estimator, bandwidth: { span } });
      const want = referenceSpanFit(x, y, xq, { dim: 1, kernel: 'tricube', estimator, span });
      const band = model.predictInterval(xq);
      assert.ok(maxError(band.mean, want.mean) <= 1e-4 * range(y), `span ${span} ${estimator}`);
      for (let k = 0; k < xq.length; k++)
        assert.ok(Math.abs(band.bandwidths[k] - want.bandwidths[k]) <= 1e-6 * want.bandwidths[k], `h ${k}`);
    }
  }
  // Above 1 the radius keeps growing: the farthest point's distance times √f.
  const far = ka.kernelRegression(x, y, { dim: 1, kernel: 'tricube', bandwidth: { span: 4 } });
  const one = ka.kernelRegression(x, y, { dim: 1, kernel: 'tricube', bandwidth: { span: 1 } });
  const [h4, h1] = [far.predictInterval(xq).bandwidths, one.predictInterval(xq).bandwidths];
  for (let k = 0; k < xq.length; k++) assert.ok(Math.abs(h4[k] - 2 * h1[k]) <= 1e-12 * h4[k], `√4 at query ${k}`);
});

test('1-D span predictions over windows of 1,024 keys and more (block moments) match the float64 loop', () => {
  // Predictions at windows this large take their sums from moments of blocks of sorted keys (engine/window_blocks.h);
  // the summary and predictInterval sum point by point. Both against the float64 k-NN loop, with and without
  // observation weights, with queries beyond the data, and at 1,500 coincident points (a window of width 0).
  const rand = mulberry32(31);
  const n = 5000;
  const x = Float32Array.from({ length: n }, (_, i) => (i < 1500 ? 2 : Math.fround(40 * rand() - 10)));
  const y = Float32Array.from(x, (v) => Math.fround(Math.sin(v / 3) + 0.3 * (rand() - 0.5)));
  const weights = Float64Array.from({ length: n }, (_, i) => (i % 7 === 0 ? 0 : 0.5 + (i % 3)));
  const xq = Float32Array.from([-12, -10, -3.3, 0, 1.5, 7.5, 19, 29.99, 35]);
  for (const span of [0.25, 0.6, 1.3]) {
    for (const estimator of ['local-linear', 'nadaraya-watson']) {
      for (const w of [undefined, weights]) {
        const what = `span ${span} ${estimator}${w ? ' weighted' : ''}`;
        const options = { dim: 1, kernel: 'tricube', estimator, bandwidth: { span }, weights: w };
        const model = ka.kernelRegression(x, y, options);
        const { bandwidths } = referenceSpanFit(x, y, xq, { dim: 1, kernel: 'tricube', estimator, span });
        const want = Float64Array.from(
          xq,
          (q, i) =>
            referenceLocalFit(x, y, Float32Array.of(q), {
              dim: 1,
              kernel: 'tricube',
              estimator,
              bandwidth: [bandwidths[i]],
              weights: w,
            }).mean[0],
        );
        const got = model.predict(xq);
        assert.ok(maxError(got, want) <= 1e-5 * range(y), `${what}: ${maxError(got, want)}`);
        assert.ok(maxError(got, model.predictInterval(xq).mean) <= 1e-6 * range(y), `${what}: predictInterval`);
        if (span < 0.3) {
          // At x = 2 the k-th neighbour is one of the 1,500 coincident points: h = 0, their (weighted) mean.
          let [sw, swy] = [0, 0];
          for (let i = 0; i < 1500; i++) [sw, swy] = [sw + (w ? w[i] : 1), swy + (w ? w[i] : 1) * y[i]];
          const at2 = model.predict([2])[0];
          assert.ok(Math.abs(at2 - swy / sw) <= 1e-6 * range(y), `${what}: at the coincident points ${at2}`);
        }
        model.dispose();
      }
    }
  }
});

test('span validation names the argument', () => {
  const { x, y } = sample(2, 30, 1);
  const fails = (bandwidth, argument, extra = {}) =>
    assert.throws(
      () => ka.kernelRegression(x, y, { dim: 1, bandwidth, ...extra }),
      (e) => e instanceof KernelAttentionError && e.argument === argument,
      JSON.stringify(bandwidth),
    );
  fails({ span: 0 }, 'options.bandwidth.span');
  fails({ span: -0.5 }, 'options.bandwidth.span');
  fails({ span: Infinity }, 'options.bandwidth.span');
  fails({ span: '0.5' }, 'options.bandwidth.span');
  fails({ span: NaN }, 'options.bandwidth.span');
  fails({}, 'options.bandwidth'); // no span: not a span bandwidth at all
  fails({ span: 0.5, frac: 0.5 }, 'options.bandwidth.frac');
  fails({ span: 0.5 }, 'options.method', { method: 'grid' });
  fails({ span: 0.5 }, 'options.method', { method: 'sparse', estimator: 'nadaraya-watson' });
  const input = { span: 0.5 };
  ka.kernelRegression(x, y, { dim: 1, bandwidth: input });
  assert.deepEqual(input, { span: 0.5 });
});

test("span fits and gradients: predictAsync gives predict()'s bytes, and two threads give one thread's", async () => {
  const { x, y, xq } = sample(12, 700, 2);
  const options = { dim: 2, kernel: 'tricube', bandwidth: { span: 0.2 } };
  const model = ka.kernelRegression(x, y, options);
  const mean = model.predict(xq);
  assert.deepEqual(await model.predictAsync(xq), mean);
  const threaded = await init({ threads: 2 });
  const other = threaded.kernelRegression(x, y, options);
  assert.deepEqual(other.predict(xq), mean);
  assert.deepEqual(other.gradient(xq), model.gradient(xq));
  assert.equal(other.effectiveDegreesOfFreedom, model.effectiveDegreesOfFreedom);
});
