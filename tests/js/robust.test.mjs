// kernelRegression's options.robust: Cleveland's bisquare reweighting against the float64 loop of reference.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { makeEngine } from '../../web/src/engine.js';
import { makeBandwidth } from '../../web/src/bandwidth.js';
import { makeRegression } from '../../web/src/regression.js';
import { countedModule } from './counted.mjs';
import { maxAbsDiff, mulberry32, referenceRobustFit } from './reference.mjs';

const ka = await init({ threads: 1 });

/** n points in [0, 1]^dim, y = a smooth surface + small noise, with every 9th point moved up by 8 (gross outliers). */
function withOutliers(seed, n, dim) {
  const rand = mulberry32(seed);
  const x = Float64Array.from({ length: n * dim }, () => Math.fround(rand()));
  const y = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    let s = 0;
    for (let d = 0; d < dim; d++) s += Math.sin(3 * x[j * dim + d] + d);
    y[j] = Math.fround(s + 0.1 * (rand() - 0.5) + (j % 9 === 4 ? 8 : 0));
  }
  const xq = Float64Array.from({ length: 25 * dim }, () => Math.fround(0.1 + 0.8 * rand()));
  return { x, y, xq };
}

const rangeOf = (a) => a.reduce((m, v) => Math.max(m, v), -Infinity) - a.reduce((m, v) => Math.min(m, v), Infinity);

for (const dim of [1, 2]) {
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    for (const kernel of ['gaussian', 'tricube']) {
      test(`robust ${estimator}, ${kernel}, ${dim}-D with gross outliers: within 1e-4 of range(y) of the float64 bisquare loop; the plain fit is not`, () => {
        const n = dim === 1 ? 120 : 160;
        const { x, y, xq } = withOutliers(10 * dim + (estimator === 'local-linear'), n, dim);
        const bandwidth = kernel === 'tricube' ? 0.3 : 0.12;
        const options = { dim, estimator, kernel, bandwidth };
        const model = ka.kernelRegression(x, y, { ...options, robust: { iterations: 3 } });
        const ref = referenceRobustFit(x, y, xq, options, 3);
        assert.equal(ref.iterations, 3);
        const tolerance = 1e-4 * rangeOf(y);
        const err = maxAbsDiff(model.predict(xq), ref.mean);
        assert.ok(err <= tolerance, `robust fit off the reference by ${err} (tolerance ${tolerance})`);
        // The robustness weights are bounded by a weight's sensitivity to float32 fitted values (|dw/dr| <= 4/s).
        assert.ok(model.robustnessWeights instanceof Float64Array && model.robustnessWeights.length === n);
        assert.ok(maxAbsDiff(model.robustnessWeights, ref.robustnessWeights) < 1e-3);
        for (let j = 4; j < n; j += 9)
          assert.equal(model.robustnessWeights[j], 0, `outlier ${j} keeps weight ${model.robustnessWeights[j]}`);
        const plain = ka.kernelRegression(x, y, options);
        assert.equal(plain.robustnessWeights, null);
        const plainErr = maxAbsDiff(plain.predict(xq), ref.mean);
        assert.ok(plainErr > 100 * tolerance, `the non-robust fit is only ${plainErr} from the robust reference`);
        model.dispose();
        plain.dispose();
      });
    }
  }
}

test('robustness combines with observation weights (zeros left out of the median) and iterations count', () => {
  const { x, y, xq } = withOutliers(5, 90, 1);
  const rand = mulberry32(6);
  const weights = Float64Array.from({ length: 90 }, (_, j) => (j % 11 === 0 ? 0 : Math.fround(0.5 + rand())));
  for (const iterations of [1, 2, 5]) {
    const options = { dim: 1, bandwidth: 0.1, weights };
    const model = ka.kernelRegression(x, y, { ...options, robust: { iterations } });
    const ref = referenceRobustFit(x, y, xq, options, iterations);
    assert.ok(maxAbsDiff(model.predict(xq), ref.mean) <= 1e-4 * rangeOf(y), `iterations ${iterations}`);
    assert.ok(maxAbsDiff(model.robustnessWeights, ref.robustnessWeights) < 1e-3);
    model.dispose();
  }
});

test('robust: true is { iterations: 3 }; a CV bandwidth is chosen once, on the data without robustness weights', () => {
  const { x, y, xq } = withOutliers(7, 100, 1);
  const a = ka.kernelRegression(x, y, { dim: 1, bandwidth: 0.1, robust: true });
  const b = ka.kernelRegression(x, y, { dim: 1, bandwidth: 0.1, robust: { iterations: 3 } });
  assert.deepEqual(a.predict(xq), b.predict(xq));
  assert.deepEqual(a.robustnessWeights, b.robustnessWeights);
  const plain = ka.kernelRegression(x, y, { dim: 1 });
  const robust = ka.kernelRegression(x, y, { dim: 1, robust: true });
  assert.deepEqual(robust.bandwidth, plain.bandwidth);
  const ref = referenceRobustFit(x, y, xq, { dim: 1, bandwidth: Array.from(plain.bandwidth, Math.fround) }, 3);
  assert.ok(maxAbsDiff(robust.predict(xq), ref.mean) <= 1e-4 * rangeOf(y));
  for (const m of [a, b, plain, robust]) m.dispose();
});

test('an exact fit stops the iteration (s = 0): every robustness weight stays 1', () => {
  const x = Float64Array.from({ length: 50 }, (_, j) => j / 49);
  const y = x.map((v) => 2 * v - 1);
  const model = ka.kernelRegression(x, y, { dim: 1, bandwidth: 0.2, estimator: 'local-linear', robust: true });
  assert.ok(model.robustnessWeights.every((w) => w === 1));
  model.dispose();
});

test('kernelRegressionAsync gives the robust fit of kernelRegression, bytes for bytes; inputs are not changed', async () => {
  const { x, y, xq } = withOutliers(8, 80, 2);
  const [x0, y0] = [x.slice(), y.slice()];
  const sync = ka.kernelRegression(x, y, { dim: 2, robust: { iterations: 2 } });
  const progress = [];
  const async_ = await ka.kernelRegressionAsync(x, y, {
    dim: 2,
    robust: { iterations: 2 },
    onProgress: (p) => progress.push(p),
  });
  assert.deepEqual(async_.predict(xq), sync.predict(xq));
  assert.deepEqual(async_.robustnessWeights, sync.robustnessWeights);
  assert.equal(progress.at(-1).done, progress.at(-1).total);
  assert.deepEqual(x, x0);
  assert.deepEqual(y, y0);
  sync.dispose();
  async_.dispose();
});

test('a bad options.robust is a typed error naming it', () => {
  const x = [0, 1, 2, 3];
  const y = [0, 1, 0, 1];
  const cases = [
    [{ robust: 'yes' }, 'BadArgument', 'options.robust'],
    [{ robust: null }, 'BadArgument', 'options.robust'],
    [{ robust: 3 }, 'BadArgument', 'options.robust'],
    [{ robust: { iterations: 0 } }, 'BadArgument', 'options.robust.iterations'],
    [{ robust: { iterations: 1.5 } }, 'BadArgument', 'options.robust.iterations'],
    [{ robust: { iters: 2 } }, 'BadArgument', 'options.robust.iters'],
  ];
  for (const [extra, code, argument] of cases) {
    assert.throws(
      () => ka.kernelRegression(x, y, { dim: 1, bandwidth: 1, ...extra }),
      (e) => e instanceof KernelAttentionError && e.code === code && e.argument === argument,
      JSON.stringify(extra),
    );
  }
  assert.throws(() => ka.kernelRegression(x, [0, 0, 1, 1, 0, 0, 1, 1], { dim: 1, bandwidth: 1, robust: true }), {
    code: 'BadShape',
    argument: 'options.robust',
  });
  const model = ka.kernelRegression(x, y, { dim: 1, bandwidth: 1, robust: false });
  assert.equal(model.robustnessWeights, null);
  model.dispose();
});

test('robust fits give back every allocation, including when validation fails', async () => {
  const { module, live } = await countedModule();
  const engine = makeEngine(module);
  const { selectBandwidth, selectBandwidthAsync } = makeBandwidth(engine, 1);
  const kernelRegression = makeRegression(engine, 1, selectBandwidth, selectBandwidthAsync);
  const { x, y, xq } = withOutliers(9, 60, 1);
  for (const bandwidth of [0.1, 'cv', 'aicc']) {
    const model = kernelRegression(x, y, { dim: 1, bandwidth, robust: true });
    model.predictInterval(xq);
    model.dispose();
    assert.equal(live.size, 0, `bandwidth ${bandwidth}`);
  }
  assert.throws(() => kernelRegression(x, y, { dim: 1, robust: { iterations: -1 } }));
  assert.equal(live.size, 0);
});

test('kernelRegressionAsync reports each robustness fit as a step and stops between them on abort', async () => {
  const { x, y } = withOutliers(12, 80, 1);
  const progress = [];
  const model = await ka.kernelRegressionAsync(x, y, {
    dim: 1,
    bandwidth: 0.1,
    robust: { iterations: 4 },
    onProgress: (p) => progress.push(p),
  });
  assert.deepEqual(
    progress,
    [1, 2, 3, 4, 5].map((done) => ({ done, total: 5 })),
  );
  model.dispose();
  const controller = new AbortController();
  let reports = 0;
  await assert.rejects(
    ka.kernelRegressionAsync(x, y, {
      dim: 1,
      bandwidth: 0.1,
      robust: { iterations: 4 },
      signal: controller.signal,
      onProgress: () => {
        if (++reports === 2) controller.abort();
      },
    }),
    { name: 'AbortError' },
  );
  assert.equal(reports, 2);
});
