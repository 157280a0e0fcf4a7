// The demo's "Learn h" mode in Debian's Chromium: gradient descent (attentionPooling, Adam on log h) on the
// leave-one-out loss, animated. Every loss the page reports is checked against a float64 leave-one-out loop at the
// bandwidth it reports, the run must end near the minimum of a float64 scan of the same loss, and the fit and the
// attention matrix must have been redrawn while it ran.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { assertClean, launch, openDemo as open, TIMEOUT_MS, waitForFit } from './demo-page.mjs';

const OUT_DIR = fileURLToPath(new URL('./out/', import.meta.url));

let session;
before(async () => {
  session = await launch();
});
after(async () => {
  await session?.close();
});
const openDemo = (hash) => open(session, hash);

/** Nadaraya–Watson's leave-one-out loss (mean squared error) at bandwidth h, in float64; kernel Gaussian. */
function looLoss(x, y, h) {
  let loss = 0;
  for (let i = 0; i < y.length; i++) {
    let s = 0;
    let t = 0;
    for (let j = 0; j < y.length; j++) {
      if (j === i) continue;
      const w = Math.exp(-0.5 * ((x[i] - x[j]) / h) ** 2);
      s += w;
      t += w * y[j];
    }
    loss += (t / s - y[i]) ** 2;
  }
  return loss / y.length;
}

test(
  'demo: "Learn h" descends the leave-one-out loss from a poor bandwidth, animating the fit and the matrix',
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    // Oversmoothed on purpose: h = 2 on the sine example averages away most of the curve.
    const { page, problems } = await openDemo('#example=sine&n=300&h=2&kernel=gaussian');
    try {
      const drawnBefore = await page.evaluate(() => window.demoState.fitsDrawn);
      await page.click('#learn');
      await page.waitForFunction(() => window.demoState.learning, null, { timeout: TIMEOUT_MS });
      assert.equal(await page.textContent('#learn'), 'Stop');
      await waitForFit(page, problems, '!s.learning && s.selection && s.selection.method === "learn"', null, {
        timeout: 3 * TIMEOUT_MS,
      });
      const s = await page.evaluate(() => {
        const { selection, x, y, fit, fitsDrawn } = window.demoState;
        return {
          x: Array.from(x),
          y: Array.from(y),
          fitH: fit.h[0],
          fitsDrawn,
          n: selection.n,
          bandwidths: Array.from(selection.curve.bandwidths),
          losses: Array.from(selection.curve.scores),
          caption: document.getElementById('selection-caption').textContent,
          button: document.getElementById('learn').textContent,
        };
      });
      assert.equal(s.button, 'Learn h');
      assert.equal(s.n, s.y.length); // 300 points: the draft sample is all of them
      assert.ok(s.losses.length >= 10, `only ${s.losses.length} steps`);
      assert.equal(s.bandwidths[0], 2);
      // Each reported loss is the float64 leave-one-out loss at the reported bandwidth (float32 engine: 1e-4).
      s.losses.forEach((loss, k) => {
        const want = looLoss(s.x, s.y, s.bandwidths[k]);
        assert.ok(
          Math.abs(loss - want) <= 1e-4 * want,
          `step ${k + 1}: loss ${loss} at h = ${s.bandwidths[k]}, float64 ${want}`,
        );
      });
      // It ends near the minimum of the same loss over a fine float64 scan of h, far below where it started.
      let best = Infinity;
      // (Bandwidths so small that a point's every neighbour underflows give 0/0 here, and are skipped.)
      for (let e = -2.5; e <= 0.5; e += 0.01) {
        const loss = looLoss(s.x, s.y, 10 ** e);
        if (Number.isFinite(loss)) best = Math.min(best, loss);
      }
      const last = s.losses.at(-1);
      assert.ok(last <= 1.02 * best, `learned loss ${last} at h = ${s.bandwidths.at(-1)}; the scan's minimum ${best}`);
      assert.ok(last <= 0.5 * s.losses[0], `loss ${s.losses[0]} → ${last}`);
      // The slider holds the last step's h (within one Adam step of the last reported one), and the page redrew.
      assert.ok(
        Math.abs(Math.log(s.fitH / s.bandwidths.at(-1))) < 0.15,
        `fit at h = ${s.fitH}, last step at ${s.bandwidths.at(-1)}`,
      );
      assert.ok(s.fitsDrawn - drawnBefore >= 3, `${s.fitsDrawn - drawnBefore} fits drawn while learning`);
      assert.match(
        s.caption,
        /^Gradient descent \(Adam on log h\) on the leave-one-out loss of Gaussian attention pooling \(Nadaraya–Watson\) on 300 points: step \d+, loss/,
      );
      console.log(
        `# learned h ${s.bandwidths.at(-1).toPrecision(4)} in ${s.losses.length} steps: loss ${s.losses[0].toPrecision(4)} → ${last.toPrecision(4)} (scan minimum ${best.toPrecision(4)})`,
      );
      mkdirSync(OUT_DIR, { recursive: true });
      await page.screenshot({ path: `${OUT_DIR}demo-learn.png`, fullPage: true });
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: "Learn h" stops on a second click, and reports a kernel without a gradient instead of failing',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo('#example=sine&n=300&h=2&kernel=uniform');
    try {
      await page.click('#learn');
      await page.waitForFunction(
        () =>
          !window.demoState.learning &&
          /uniform|gradient/i.test(document.getElementById('selection-caption').textContent),
      );
      assert.equal(await page.textContent('#learn'), 'Learn h');
      await page.selectOption('#kernel', 'gaussian');
      await waitForFit(page, problems, 's.fit.kernel === "gaussian"');
      await page.click('#learn');
      await page.waitForFunction(
        () => window.demoState.selection?.method === 'learn' && window.demoState.selection.curve.scores.length >= 2,
      );
      await page.click('#learn'); // stop
      await waitForFit(page, problems, '!s.learning');
      const steps = await page.evaluate(() => window.demoState.selection.curve.scores.length);
      assert.ok(steps < 60, `${steps} steps: the run did not stop`);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);
