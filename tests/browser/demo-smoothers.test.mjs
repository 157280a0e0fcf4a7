// The library's smoother options in the demo (issue 20 item 2, issue 23): the "robust" box (bisquare robustness
// weights) against a float64 reweighting loop written here, and the "band σ" menu's local σ(x) on the
// heteroscedastic example, whose noise sd is known (0.05 + 0.06·x).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { assertClean, downloadText, launch, openDemo, TIMEOUT_MS, waitForFit } from './demo-page.mjs';

let session;
before(async () => {
  session = await launch();
});
after(async () => {
  await session?.close();
});

/** Gaussian Nadaraya–Watson at `at` with observation weights `w`, in float64. */
function nadarayaWatson(x, y, w, h, at) {
  let sw = 0;
  let swy = 0;
  for (let j = 0; j < x.length; j++) {
    const k = w[j] * Math.exp(-0.5 * ((x[j] - at) / h) ** 2);
    sw += k;
    swy += k * y[j];
  }
  return swy / sw;
}

/**
 * Cleveland's bisquare iteration at a fixed h, in float64: fit, then `rounds` times weights (1 − (r/6m)²)² from the
 * residuals r (m = median |r|) and a weighted refit. Returns the final weights.
 */
function robustWeights(x, y, h, rounds) {
  let w = x.map(() => 1);
  for (let k = 0; k < rounds; k++) {
    const r = x.map((xi, i) => y[i] - nadarayaWatson(x, y, w, h, xi));
    const abs = r.map(Math.abs).sort((a, b) => a - b);
    const n = abs.length;
    const s = 6 * (n % 2 ? abs[(n - 1) / 2] : (abs[n / 2 - 1] + abs[n / 2]) / 2);
    w = r.map((ri) => (Math.abs(ri) < s ? (1 - (ri / s) ** 2) ** 2 : 0));
  }
  return w;
}

test(
  'demo: "robust" refits with bisquare weights as a float64 loop does and counts the points it set aside',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      await page.selectOption('#estimator', 'nadaraya-watson');
      await page.selectOption('#fit-method', 'exact');
      await waitForFit(page, problems, 's.fit.estimator === "nadaraya-watson"');
      // A smooth curve with every 13th point 4 above it: the outliers a robust fit should set aside.
      const xs = Array.from({ length: 200 }, (_, i) => i / 20);
      const ys = xs.map((x, i) => Number((Math.sin(x) + 0.1 * Math.sin(37 * i) + (i % 13 === 0 ? 4 : 0)).toFixed(4)));
      if (!(await page.locator('#paste-box').evaluate((d) => d.open))) await page.click('#paste-box summary');
      await page.locator('#paste').evaluate(
        (area, value) => {
          area.value = value;
        },
        ['x,y', ...xs.map((x, i) => `${x},${ys[i]}`)].join('\n'),
      );
      await page.click('#use-paste');
      await waitForFit(page, problems, 's.n === 200 && !s.fit.robust');
      await page.check('#robust');
      await waitForFit(page, problems, 's.fit.robust !== null');
      const s = await page.evaluate(() => ({
        h: window.demoState.fit.h[0],
        queries: Array.from(window.demoState.fit.queries),
        robust: {
          ...window.demoState.fit.robust,
          ringX: Array.from(window.demoState.fit.robust.ringX),
          ringY: Array.from(window.demoState.fit.robust.ringY),
        },
        mean: Array.from(window.demoState.fit.mean),
        status: document.getElementById('fit-status').textContent,
      }));
      const w = robustWeights(xs, ys, s.h, 3);
      const range = Math.max(...ys) - Math.min(...ys);
      let worst = 0;
      s.queries.forEach((q, i) => {
        worst = Math.max(worst, Math.abs(s.mean[i] - nadarayaWatson(xs, ys, w, s.h, q)));
      });
      assert.ok(worst < 1e-4 * range, `largest difference from the float64 robust fit ${worst}`);
      const low = w.filter((v) => v < 0.5).length;
      assert.ok(low >= 15, `the reference set aside only ${low} points`);
      const { ringX, ringY, ...counts } = s.robust;
      assert.deepEqual(counts, { iterations: 3, low, n: 200 });
      // The ringed points are those the reference set below ½, in x order.
      assert.deepEqual(
        ringX,
        xs.filter((_, i) => w[i] < 0.5),
      );
      assert.deepEqual(
        ringY,
        ys.filter((_, i) => w[i] < 0.5),
      );
      assert.match(
        s.status,
        new RegExp(
          `Robust: 3 rounds of bisquare weights gave ${low} of 200 points a weight below 0\\.5 \\(ringed\\)\\.`,
        ),
      );
      assert.match(new URL(page.url()).hash, /robust=on/);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: "band σ: local σ(x)" widens the band where the heteroscedastic example is noisy; the global band does not',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '#example=hetero&n=400&variance=local');
    try {
      const halfWidths = () =>
        page.evaluate(() => {
          const { queries, lower, upper, variance, localVariance } = window.demoState.fit;
          // Half-widths averaged over x in [0.5, 2] and [8, 9.5], away from the ends.
          const mean = (a, b) => {
            let sum = 0;
            let count = 0;
            queries.forEach((q, i) => {
              if (q >= a && q <= b) {
                sum += (upper[i] - lower[i]) / 2;
                count++;
              }
            });
            return sum / count;
          };
          return {
            quiet: mean(0.5, 2),
            noisy: mean(8, 9.5),
            variance,
            localVariance,
            status: document.getElementById('fit-status').textContent,
          };
        });
      const local = await halfWidths();
      assert.equal(local.variance, 'local');
      assert.ok(local.localVariance && local.localVariance.bandwidth[0] > 0);
      assert.match(local.status, /Band from a local σ\(x\)/);
      // The noise sd grows from about 0.1 to 0.6 across these stretches (× 5.4): the local band follows much of that.
      assert.ok(local.noisy / local.quiet > 2.5, `local band: ${local.noisy} / ${local.quiet}`);
      await page.selectOption('#variance', 'global');
      await waitForFit(page, problems, 's.fit.variance === "global"');
      const global = await halfWidths();
      assert.ok(global.noisy / global.quiet < 1.5, `global band: ${global.noisy} / ${global.quiet}`);
      assert.doesNotMatch(new URL(page.url()).hash, /variance=/);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

/** Blocked CV's score at h (Gaussian Nadaraya–Watson, float64): each x_i fitted from the points with |x_j − x_i| > r. */
function blockedCv(x, y, h, r) {
  let sum = 0;
  for (let i = 0; i < x.length; i++) {
    let sw = 0;
    let swy = 0;
    for (let j = 0; j < x.length; j++) {
      if (!(Math.abs(x[j] - x[i]) > r)) continue;
      const w = Math.exp(-0.5 * ((x[j] - x[i]) / h) ** 2);
      sw += w;
      swy += w * y[j];
    }
    sum += (y[i] - swy / sw) ** 2;
  }
  return sum / x.length;
}

test(
  'demo: "leave out ±" runs blocked CV: its scores and chosen h are those of a float64 blocked-CV loop',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      await page.selectOption('#estimator', 'nadaraya-watson');
      await waitForFit(page, problems, 's.fit.estimator === "nadaraya-watson"');
      // A slow curve plus AR(1) noise (φ = 0.8) from a fixed LCG: serial data, on which leave-one-out CV follows the noise.
      let s = 12345;
      const uniform = () => {
        s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
        return s / 2 ** 32 - 0.5;
      };
      let e = 0;
      const xs = Array.from({ length: 150 }, (_, i) => i);
      const ys = xs.map((x) => {
        e = 0.8 * e + 0.6 * uniform();
        return Number((Math.sin(x / 15) + e).toFixed(4));
      });
      if (!(await page.locator('#paste-box').evaluate((d) => d.open))) await page.click('#paste-box summary');
      await page.locator('#paste').evaluate(
        (area, value) => {
          area.value = value;
        },
        ['t,y', ...xs.map((x, i) => `${x},${ys[i]}`)].join('\n'),
      );
      await page.click('#use-paste');
      await waitForFit(page, problems, 's.n === 150');
      await page.fill('#exclude', '5');
      await page.locator('#exclude').dispatchEvent('change');
      await waitForFit(
        page,
        problems,
        's.selection && s.selection.exclude === 5 && s.fit.h[0] === s.selection.bandwidth[0]',
      );
      const chosen = await page.evaluate(() => {
        const { selection } = window.demoState;
        return {
          h: selection.bandwidth[0],
          hs: Array.from(selection.curve.bandwidths),
          scores: Array.from(selection.curve.scores),
          caption: document.getElementById('selection-caption').textContent,
        };
      });
      assert.ok(chosen.scores.length >= 5, `${chosen.scores.length} evaluations`);
      chosen.hs.forEach((h, k) => {
        const want = blockedCv(xs, ys, h, 5);
        assert.ok(Math.abs(chosen.scores[k] - want) <= 1e-3 * want, `h = ${h}: ${chosen.scores[k]} vs ${want}`);
      });
      const best = Math.min(...chosen.hs.map((h) => blockedCv(xs, ys, h, 5)));
      assert.ok(blockedCv(xs, ys, chosen.h, 5) <= best * (1 + 1e-3), `h = ${chosen.h} is not the curve's minimum`);
      assert.match(chosen.caption, /^blocked cross-validation \(each point's neighbours within ±5(\.0+)? left out\)/);
      assert.match(new URL(page.url()).hash, /exclude=5/);
      assert.match((await downloadText(page, '#save-plot-svg')).text, /chosen by blocked CV \(±5(\.0+)? left out\)/);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

/** The derivative of the Gaussian Nadaraya–Watson fit at q, in float64: Σ w'_j (y_j − f) / Σ w_j, w'_j = w_j (x_j − q)/h². */
function nadarayaWatsonSlope(x, y, h, q) {
  let sw = 0;
  let swy = 0;
  for (let j = 0; j < x.length; j++) {
    const w = Math.exp(-0.5 * ((x[j] - q) / h) ** 2);
    sw += w;
    swy += w * y[j];
  }
  const f = swy / sw;
  let s = 0;
  for (let j = 0; j < x.length; j++) s += Math.exp(-0.5 * ((x[j] - q) / h) ** 2) * ((x[j] - q) / h ** 2) * (y[j] - f);
  return s / sw;
}

test(
  'demo: "derivative" draws the slope that a float64 loop gives, with a band around it',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(
      session,
      '#example=sine&n=300&kernel=gaussian&estimator=nadaraya-watson&h=0.4',
    );
    try {
      await page.check('#derivative');
      await waitForFit(page, problems, 's.fit.slope !== null');
      const s = await page.evaluate(() => {
        const { x, y, fit } = window.demoState;
        return {
          x: Array.from(x),
          y: Array.from(y),
          h: fit.h[0],
          queries: Array.from(fit.queries),
          slope: Array.from(fit.slope),
          lower: Array.from(fit.slopeLower),
          upper: Array.from(fit.slopeUpper),
          shown: !document.getElementById('slope').hidden,
        };
      });
      assert.ok(s.shown);
      assert.match(new URL(page.url()).hash, /derivative=on/);
      const want = s.queries.map((q) => nadarayaWatsonSlope(s.x, s.y, s.h, q));
      const range = Math.max(...want) - Math.min(...want);
      s.slope.forEach((g, i) => {
        assert.ok(Math.abs(g - want[i]) <= 1e-4 * range, `at ${s.queries[i]}: ${g} vs ${want[i]}`);
        assert.ok(s.lower[i] < g && g < s.upper[i], `band at ${s.queries[i]}`);
      });
      await page.uncheck('#derivative');
      await waitForFit(page, problems, 's.fit.slope === null');
      assert.ok(await page.locator('#slope').isHidden());
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);
