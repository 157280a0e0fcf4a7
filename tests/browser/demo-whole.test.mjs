// The demo on the whole sample (issue 31, item 5; issue 30, item 6), in Debian's Chromium under the demo's CSP: a
// 120,000-row file (beyond every cap it lifts: 100,000 for the search and drafts, 50,000 for LOWESS) is fitted on
// every point (the grid), its bandwidth searched on every point, by LOWESS on every point, and dragged with the curve
// drawn alone from every point; the busy sign shows while the search and a fit run. References: the library run here in Node on the same rows
// (kernelRegression, lowess), as the file's text reads. Then a 2-D example of 30,000 points: its CV search on 20,000.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { init } from '../../web/src/index.js';
import { curvePoints } from '../../web/demo/sampling.js';
import { assertClean, launch, openDemo, TIMEOUT_MS, waitForFit } from './demo-page.mjs';

const ROWS = 120_000;
let session;
let ka;
before(async () => {
  session = await launch();
  ka = await init({ threads: 1 });
});
after(async () => {
  await session?.close();
});

/** The file's text and its rows as the page reads them: x uniform on [0, 10], y = sin x + noise, 5 decimals. */
function makeRows() {
  let seed = 2024;
  const next = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const lines = ['x,y'];
  for (let i = 0; i < ROWS; i++) {
    const x = 10 * next();
    lines.push(`${x.toFixed(5)},${(Math.sin(x) + 0.3 * (next() + next() + next() - 1.5)).toFixed(5)}`);
  }
  const x = new Float64Array(ROWS);
  const y = new Float64Array(ROWS);
  lines.slice(1).forEach((line, i) => ([x[i], y[i]] = line.split(',').map(Number)));
  return { text: lines.join('\n'), x, y };
}

const range = (a) => a.reduce((m, v) => Math.max(m, v), -Infinity) - a.reduce((m, v) => Math.min(m, v), Infinity);

/** Every value of `page` within `tolerance` of `reference`, naming the first that is not. */
function assertClose(page, reference, tolerance, what) {
  assert.equal(page.length, reference.length, `${what}: length`);
  for (let i = 0; i < page.length; i++)
    assert.ok(Math.abs(page[i] - reference[i]) <= tolerance, `${what} ${i}: page ${page[i]} vs ${reference[i]}`);
}

/** Records every state of the busy sign (its text, whether shown) from now on, in window.busySeen. */
const watchBusySign = (page) =>
  page.evaluate(() => {
    window.busySeen = [];
    const sign = document.getElementById('busy');
    new MutationObserver(() =>
      window.busySeen.push({ shown: !sign.hidden, text: document.getElementById('busy-text').textContent }),
    ).observe(sign, { attributes: true, subtree: true, childList: true, characterData: true });
  });

const signsShown = (page) =>
  page.evaluate(() =>
    window.busySeen
      .splice(0)
      .filter((s) => s.shown)
      .map((s) => s.text),
  );

/** Records each live fit drawn while a slider moves (h, n, its curve) in window.draftsSeen, once a frame. */
const watchDrafts = (page) =>
  page.evaluate(() => {
    window.draftsSeen = [];
    let last = null;
    const look = () => {
      const { fit } = window.demoState;
      if (fit && fit.draft && fit.mean !== last) {
        last = fit.mean;
        window.draftsSeen.push({ h: fit.h, n: fit.n, curveOnly: fit.curveOnly, mean: Array.from(fit.mean) });
      }
      requestAnimationFrame(look);
    };
    look();
  });

test(
  `demo: a ${ROWS.toLocaleString('en')}-row file is fitted, smoothed by LOWESS and dragged on every point, with a busy sign`,
  { timeout: 12 * TIMEOUT_MS },
  async () => {
    // The sign at once (busy.js's ?busy-after): the search of 100,000 points can end within the usual 250 ms.
    const { page, problems } = await openDemo(session, '?busy-after=0');
    const dir = mkdtempSync(path.join(tmpdir(), 'ka-whole-'));
    try {
      const { text, x, y } = makeRows();
      const file = path.join(dir, 'whole.csv');
      writeFileSync(file, text);
      await watchBusySign(page);
      await page.setInputFiles('#file', file);
      await waitForFit(page, problems, 's.n === a && s.fit.n === a && s.selection', ROWS, { timeout: 6 * TIMEOUT_MS });
      const tolerance = 1e-6 * range(y);

      // The kernel fit (local-linear, Gaussian, h chosen by CV): on the grid, on every point; its curve and band are
      // the library's on all the rows at the page's h.
      const fit = await page.evaluate(() => {
        const { fit: f, selection } = window.demoState;
        return {
          n: f.n,
          h: f.h,
          method: f.method,
          queries: Array.from(f.queries),
          mean: Array.from(f.mean),
          lower: Array.from(f.lower),
          status: document.getElementById('fit-status').textContent,
          searched: selection.n,
        };
      });
      assert.deepEqual([fit.n, fit.method], [ROWS, 'grid']);
      assert.ok(fit.status.includes(`on ${ROWS.toLocaleString('en')} points`), fit.status);
      // The search's plan is the grid: it takes every point (up to 100,000 before; 4,000 where it runs exactly).
      assert.equal(fit.searched, ROWS);
      const model = ka.kernelRegression(x, y, { dim: 1, bandwidth: fit.h });
      const band = model.predictInterval(Float64Array.from(fit.queries), { level: 0.95 });
      model.dispose();
      assertClose(fit.mean, band.mean, tolerance, 'curve');
      assertClose(fit.lower, band.lower, 10 * tolerance, 'band');
      let shown = await signsShown(page);
      assert.ok(
        shown.some((t) => /^Choosing h by cross-validation… evaluation \d+ of \d+/.test(t)),
        JSON.stringify(shown),
      );
      assert.equal(await page.isVisible('#busy'), false, 'the sign stayed after the fit');

      // An exact fit (50,000 of the points, about n² kernel terms in reach: seconds here) shows the sign with its
      // stage.
      await page.selectOption('#fit-method', 'exact');
      await waitForFit(page, problems, "s.fit.method === 'exact'", null, { timeout: 4 * TIMEOUT_MS });
      shown = await signsShown(page);
      assert.ok(
        shown.some((t) => /^Fitting: the model…/.test(t)),
        JSON.stringify(shown),
      );
      assert.equal(await page.isVisible('#busy'), false);
      assert.equal(await page.getAttribute('#plot-box', 'aria-busy'), 'false');
      await page.selectOption('#fit-method', 'auto');
      await waitForFit(page, problems, "s.fit.method === 'grid'", null, { timeout: 4 * TIMEOUT_MS });

      // Dragging the slider: over 100,000 points each live fit draws the curve alone, from every point, and that
      // curve is the library's at the dragged h.
      await watchDrafts(page);
      const box = await page.locator('#bandwidth').boundingBox();
      const at = box.y + box.height / 2;
      await page.mouse.move(box.x + box.width * 0.4, at);
      await page.mouse.down();
      for (let step = 0; step <= 20; step++) {
        await page.mouse.move(box.x + box.width * (0.4 + (0.1 * step) / 20), at);
        await page.waitForTimeout(40);
      }
      await page.mouse.up();
      await waitForFit(page, problems, '!s.fit.draft', null, { timeout: 4 * TIMEOUT_MS });
      const drafts = await page.evaluate(() => window.draftsSeen);
      assert.ok(drafts.length >= 1, 'no live fit was drawn during the drag');
      for (const d of drafts) assert.deepEqual([d.n, d.curveOnly], [ROWS, true]);
      // The curve is the grid's at the dragged h: within 2·10⁻³ of the range of y of the exact fit at that h (the
      // grid's error at the data's edges, measured up to 1.0·10⁻³ of the range here, 1.1·10⁻⁴ at the middle query).
      const draft = drafts.at(-1);
      const exact = ka.kernelRegression(x, y, { dim: 1, bandwidth: draft.h, method: 'exact' });
      const middle = exact.predict(Float64Array.from([fit.queries[150]]))[0];
      console.log(
        `# dragged curve at h = ${draft.h[0].toPrecision(3)}: middle query ${draft.mean[150]} vs exact ${middle}`,
      );
      assertClose(draft.mean, exact.predict(Float64Array.from(fit.queries)), 2e-3 * range(y), 'dragged curve');
      exact.dispose();

      // LOWESS on every point: the curve passes through ka.lowess's fitted values at 20,000 of the observations in
      // x order, and the status line counts the points its weights set below ½ among all of them.
      await page.selectOption('#estimator', 'lowess');
      await waitForFit(page, problems, "s.fit.estimator === 'lowess'", null, { timeout: 4 * TIMEOUT_MS });
      const lowess = await page.evaluate(() => ({
        n: window.demoState.fit.n,
        queries: Array.from(window.demoState.fit.queries),
        mean: Array.from(window.demoState.fit.mean),
        status: document.getElementById('fit-status').textContent,
      }));
      const { fitted, weights } = ka.lowess(x, y, { frac: 0.67, iterations: 3 });
      const order = Array.from(x, (_, i) => i).sort((a, b) => x[a] - x[b] || a - b);
      const drawn = curvePoints(ROWS);
      assert.equal(lowess.n, ROWS);
      assert.deepEqual(
        lowess.queries,
        Array.from(drawn, (k) => x[order[k]]),
      );
      assertClose(
        lowess.mean,
        Array.from(drawn, (k) => fitted[order[k]]),
        tolerance,
        'LOWESS curve',
      );
      const low = weights.filter((w) => w < 0.5).length;
      assert.ok(lowess.status.includes(`gave ${low.toLocaleString('en')} points a weight below 0.5`), lowess.status);
      assert.ok(lowess.status.includes(`of ${ROWS.toLocaleString('en')} points;`), lowess.status);
      await assertClean(page, problems);
    } finally {
      rmSync(dir, { recursive: true });
      await page.close();
    }
  },
);

test(
  'demo: a 2-D CV search takes 20,000 points of 30,000 (not 4,000), the fit every point',
  { timeout: 6 * TIMEOUT_MS },
  async () => {
    // sampling.js's PLANAR_SEARCH_MAX: the 2-D local-linear search costs about what the 1-D one does at 10⁵ points.
    const { page, problems } = await openDemo(session, '#example=surface&n=30000');
    try {
      await waitForFit(page, problems, 's.n === 30000 && s.fit && s.fit.n === 30000 && s.selection', null, {
        timeout: 4 * TIMEOUT_MS,
      });
      const got = await page.evaluate(() => {
        const { fit, selection } = window.demoState;
        return { searched: selection.n, fitted: fit.n, method: fit.method };
      });
      assert.deepEqual(got, { searched: 20_000, fitted: 30_000, method: 'grid' });
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);
