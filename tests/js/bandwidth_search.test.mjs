// The bandwidth search finds the global minimum of the textbook criterion (engel, tests/fixtures/engel_cv.json made by
// make_engel_cv.py with numpy float64), and results carry warnings (web/src/warnings.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../web/src/index.js';

const ka = await init();
const engel = JSON.parse(readFileSync(new URL('../fixtures/engel_cv.json', import.meta.url), 'utf8'));
const x = Float64Array.from(engel.x),
  y = Float64Array.from(engel.y);

test('engel, local-linear CV: the selected h is within 2 % of the float64 global minimiser', () => {
  const chosen = ka.selectBandwidth(x, y, { dim: 1, estimator: 'local-linear' });
  const h = chosen.bandwidth[0];
  assert.ok(Math.abs(h - engel.bandwidth) <= 0.02 * engel.bandwidth, `h = ${h} against ${engel.bandwidth}`);
  assert.ok(Math.abs(chosen.score - engel.cv) <= 1e-4 * engel.cv, `CV ${chosen.score} against ${engel.cv}`);
  // The curve shows the whole range: from below the median spacing (4.4) to 4 times the range of x, where the
  // fit is the straight line.
  const hs = Array.from(chosen.curve.bandwidths);
  const range = Math.max(...x) - Math.min(...x);
  assert.ok(
    Math.min(...hs) < 4 && Math.max(...hs) >= 3.99 * range,
    `curve spans ${Math.min(...hs)} … ${Math.max(...hs)}`,
  );
  assert.ok(hs.length < 60, `${hs.length} evaluations`);
  assert.deepEqual(chosen.warnings, []);
});

test('engel, local-linear CV equals the textbook value where defined and is +inf where a held-out design is singular', () => {
  for (const { bandwidth, cv } of engel.at) {
    const got = ka.cvScore(x, y, { dim: 1, estimator: 'local-linear', bandwidth });
    if (cv === null) assert.equal(got, Infinity, `h = ${bandwidth}`);
    else assert.ok(Math.abs(got - cv) <= 1e-4 * cv, `h = ${bandwidth}: ${got} against ${cv}`);
  }
});

test('the async search resumes its replayed curve to the same result, warnings included', async () => {
  let steps = 0;
  const sync = ka.selectBandwidth(x, y, { dim: 1, estimator: 'local-linear' });
  const got = await ka.selectBandwidthAsync(x, y, { dim: 1, estimator: 'local-linear', onProgress: () => steps++ });
  assert.deepEqual(got, sync);
  assert.ok(steps >= sync.curve.scores.length);
});

test("yearly sunspots with the defaults: the model and the selection say 'interpolating'", () => {
  const sx = Float64Array.from(engel.sunspots.x),
    sy = Float64Array.from(engel.sunspots.y);
  const model = ka.kernelRegression(sx, sy, { dim: 1 });
  try {
    assert.ok(
      model.warnings.some((w) => w.code === 'interpolating'),
      JSON.stringify(model.warnings),
    );
    assert.ok(model.bandwidth[0] < 1 || model.effectiveDegreesOfFreedom >= 0.9 * sx.length);
  } finally {
    model.dispose();
  }
  const chosen = ka.selectBandwidth(sx, sy, { dim: 1 });
  assert.ok(chosen.warnings.some((w) => w.code === 'interpolating'));
  for (const w of chosen.warnings) assert.ok(typeof w.message === 'string' && w.message.length > 20);
});

test('a smooth, well-sampled fit has no warnings', () => {
  // A fixed pseudo-random design (mulberry32), a sine and small noise: nothing interpolates, nothing is near-singular.
  let s = 12345;
  const rand = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const n = 400;
  const sx = new Float64Array(n),
    sy = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    sx[i] = rand();
    sy[i] = Math.sin(2 * Math.PI * sx[i]) + 0.3 * (rand() - 0.5);
  }
  for (const estimator of ['local-linear', 'nadaraya-watson']) {
    const model = ka.kernelRegression(sx, sy, { dim: 1, estimator });
    try {
      assert.deepEqual(model.warnings, [], `${estimator}: ${JSON.stringify(model.warnings)}`);
    } finally {
      model.dispose();
    }
  }
});

test("inputs stored in float32 that vary by less than 1e-5 of their magnitude get 'precision'; float64 ones are centred and do not", () => {
  const n = 200;
  const sx = new Float64Array(n),
    sy = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    sx[i] = 1.7e12 + 1000 * i; // Date.now()-like milliseconds, 1 s apart: spread 2e5 against 1.7e12
    sy[i] = Math.cos(i / 20);
  }
  for (const [x, warned] of [
    [Float32Array.from(sx), true],
    [sx, false],
    [Array.from(sx), false],
  ]) {
    const model = ka.kernelRegression(x, sy, { dim: 1, bandwidth: 2e4 });
    try {
      const w = model.warnings.find((v) => v.code === 'precision');
      const what = `${x.constructor.name}: ${JSON.stringify(model.warnings)}`;
      if (warned) assert.ok(w && /\bx\b/.test(w.message), what);
      else assert.equal(w, undefined, what);
    } finally {
      model.dispose();
    }
  }
});

test('from 2,000 points the wide scan is scored on a fine grid: the result is still an exact evaluation, no worse than the exact CV anywhere on the curve', async () => {
  // A fixed pseudo-random design (mulberry32), skewed x on [0, 10], y a line plus noise: local-linear's minimum lies
  // at large h, where the scan is screened.
  let s = 777;
  const rand = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const n = 3000;
  const sx = Float32Array.from({ length: n }, () => 10 * rand() * rand());
  const sy = Float32Array.from(sx, (t) => 0.3 * t + 0.4 * (rand() - 0.5));
  const rangeY = Math.max(...sy) - Math.min(...sy);
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    const chosen = ka.selectBandwidth(sx, sy, { dim: 1, estimator });
    const h = chosen.bandwidth[0];
    assert.equal(
      chosen.score,
      ka.cvScore(sx, sy, { dim: 1, estimator, bandwidth: h }),
      `${estimator}: the returned score`,
    );
    let screened = 0;
    const hs = chosen.curve.bandwidths,
      scores = chosen.curve.scores;
    for (let k = 0; k < hs.length; k++) {
      const exact = ka.cvScore(sx, sy, { dim: 1, estimator, bandwidth: hs[k] });
      if (exact === Infinity) continue;
      assert.ok(
        chosen.score <= exact * (1 + 1e-5),
        `${estimator}: ${chosen.score} at ${h} against ${exact} at ${hs[k]}`,
      );
      // The grid's scores: within what fits off by 5e-6 of range(y) give, a tenth of the margin the search allows.
      const margin = 2 * Math.sqrt(exact) * 5e-6 * rangeY;
      assert.ok(Math.abs(scores[k] - exact) <= margin, `${estimator}: curve ${scores[k]} against ${exact} at ${hs[k]}`);
      if (scores[k] !== exact) screened++;
    }
    assert.ok(screened > 0, `${estimator}: the premise, some scan points on the grid`);
    // The async search replays to the same bytes.
    assert.deepEqual(await ka.selectBandwidthAsync(sx, sy, { dim: 1, estimator }), chosen);
  }
});
