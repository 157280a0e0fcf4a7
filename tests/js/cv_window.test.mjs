// The windowed 1-D criterion (cpp/core/stats/cv_window.h): above 500 points, leave-one-out and blocked CV at bandwidths
// where few keys are in reach of each row run in float64 over each row's window of sorted keys. Judged by a float64
// loop written here over every key (no window, no sorting): the held-out Nadaraya–Watson or local-linear fit in closed
// form, +inf where a held-out design is empty or its slope pivot is at most 1e-10 of its diagonal (bandwidth.h).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../web/src/index.js';
import { mulberry32 } from './reference.mjs';

const ka = await init();

/** Σ ω_i (y_i − f_{−i}(x_i))² / Σ ω_i in float64 over every key, Gaussian; keys within r of x_i left out too. */
function windowFreeCv(x, y, h, estimator, r = 0, omega = null) {
  const n = x.length;
  let sum = 0;
  let total = 0;
  for (let i = 0; i < n; i++) {
    const wi = omega ? omega[i] : 1;
    total += wi;
    if (!(wi > 0)) continue;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let t0 = 0;
    let t1 = 0;
    for (let j = 0; j < n; j++) {
      const dx = x[j] - x[i];
      if (j === i || Math.abs(dx) <= r || (omega && omega[j] === 0)) continue;
      const u = dx / h;
      const w = Math.exp((-u * u) / 2) * (omega ? omega[j] : 1);
      s0 += w;
      s1 += w * u;
      s2 += w * u * u;
      t0 += w * y[j];
      t1 += w * u * y[j];
    }
    if (!(s0 > 0)) return Infinity;
    let fit = t0 / s0;
    if (estimator === 'local-linear') {
      const pivot = s2 - (s1 * s1) / s0;
      if (!(pivot > 1e-10 * s2)) return Infinity;
      fit = (s2 * t0 - s1 * t1) / (s0 * s2 - s1 * s1);
    }
    sum += wi * (y[i] - fit) ** 2;
  }
  return sum / total;
}

/** n points unsorted on [0, 10], y = sin x + uniform noise, in float32 (what the engine reads). */
function sample(n, seed) {
  const rand = mulberry32(seed);
  const x = Float32Array.from({ length: n }, () => 10 * rand());
  const y = Float32Array.from(x, (t) => Math.sin(t) + 0.3 * (rand() - 0.5));
  return { x, y };
}

/**
 * n points at x = (k + (k mod 3)/4)·δ, δ = 10/n, k = 0 … n − 1 in shuffled order: every pair's distance is a multiple
 * of δ/4, so a radius of (m + 1/8)·δ lies δ/8 from any of them (no rounding moves a point across the band).
 */
function lattice(n, seed) {
  const rand = mulberry32(seed);
  const k = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [k[i], k[j]] = [k[j], k[i]];
  }
  const delta = 10 / n;
  const x = Float32Array.from(k, (v) => (v + (v % 3) / 4) * delta);
  const y = Float32Array.from(x, (t) => Math.sin(t) + 0.3 * (rand() - 0.5));
  return { x, y, delta };
}

const close = (got, want) => (Number.isFinite(want) ? Math.abs(got - want) <= 1e-7 * want : got === want);

for (const estimator of ['nadaraya-watson', 'local-linear']) {
  test(`windowed CV equals the float64 loop over every key: ${estimator}, 1,500 points, small h (1e-7 relative)`, () => {
    const { x, y } = sample(1500, 31);
    for (const h of [0.01, 0.015, 0.02]) {
      const want = windowFreeCv(x, y, h, estimator);
      const got = ka.cvScore(x, y, { dim: 1, bandwidth: h, estimator, method: 'exact' });
      assert.ok(close(got, want), `h = ${h}: ${got} vs ${want}`);
    }
  });

  test(`windowed blocked CV (exclude) and observation weights equal the float64 loop: ${estimator} (1e-7 relative)`, () => {
    const { x, y, delta } = lattice(1200, 32);
    const rand = mulberry32(33);
    const omega = Float64Array.from({ length: 1200 }, (_, i) => (i % 97 === 0 ? 0 : 0.2 + rand()));
    const r = 1.125 * delta;
    for (const h of [0.008, 0.015]) {
      const blocked = windowFreeCv(x, y, h, estimator, r);
      assert.ok(close(ka.cvScore(x, y, { dim: 1, bandwidth: h, estimator, exclude: r }), blocked), `exclude, h = ${h}`);
      const weighted = windowFreeCv(x, y, h, estimator, 0, omega);
      const got = ka.cvScore(x, y, { dim: 1, bandwidth: h, estimator, weights: omega, method: 'exact' });
      assert.ok(close(got, weighted), `weights, h = ${h}: ${got} vs ${weighted}`);
    }
  });
}

test('windowed local-linear CV is +inf where a held-out design is singular, as the float64 loop says', () => {
  const { x, y } = sample(800, 34);
  const h = 2e-4; // far below the spacing (1/80): some held-out point has one neighbour outweighing the rest by 1e10
  assert.equal(windowFreeCv(x, y, h, 'local-linear'), Infinity);
  assert.equal(ka.cvScore(x, y, { dim: 1, bandwidth: h, estimator: 'local-linear', method: 'exact' }), Infinity);
});
