// LOWESS in the demo (issue 23, item 7): the estimator menu's "LOWESS" choice with its span and robustness
// iterations, in Debian's Chromium under the demo's CSP. Reference: ka.lowess run here in Node on the same data (the
// data sets as web/demo/data/make_data.py wrote them), itself checked against R's lowess() in tests/js and tests/cpp.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../web/src/index.js';
import { DATASETS } from '../../web/demo/data/datasets.js';
import { assertClean, downloadText, launch, openDemo, TIMEOUT_MS, waitForFit } from './demo-page.mjs';

let session;
let ka;
before(async () => {
  session = await launch();
  ka = await init({ threads: 1 });
});
after(async () => {
  await session?.close();
});

const range = (a) => Math.max(...a) - Math.min(...a);

/** The page's LOWESS curve (queries, values, its settings) once a full fit with `condition` is drawn. */
async function lowessFit(page, problems, condition = 'true', arg = null) {
  await waitForFit(page, problems, `s.fit.estimator === 'lowess' && (${condition})`, arg);
  return page.evaluate(() => {
    const { fit, x, y } = window.demoState;
    return {
      queries: Array.from(fit.queries),
      mean: Array.from(fit.mean),
      weights: Array.from(fit.weights),
      frac: fit.frac,
      iterations: fit.iterations,
      x: Array.from(x),
      y: Array.from(y),
      lower: fit.lower,
      status: document.getElementById('fit-status').textContent,
    };
  });
}

/** The curve drawn passes through ka.lowess's fitted values at every observation (within 1e-6 of range(y)). */
function assertMatches(page, x, y, frac, iterations) {
  const { fitted } = ka.lowess(x, y, { frac, iterations });
  assert.equal(page.queries.length, x.length, 'one curve point per observation');
  const tolerance = 1e-6 * range(y);
  // The curve's points are the observations sorted by x; compare each with the fit at that observation.
  const order = x.map((_, i) => i).sort((a, b) => x[a] - x[b] || a - b);
  order.forEach((i, k) => {
    assert.equal(page.queries[k], x[i], `curve point ${k} is at observation ${i}`);
    assert.ok(
      Math.abs(page.mean[k] - fitted[i]) <= tolerance,
      `x = ${x[i]}: page ${page.mean[k]} vs ka.lowess ${fitted[i]}`,
    );
  });
}

test(
  'demo: LOWESS on the Nile data draws the curve ka.lowess computes, follows the span and the iterations, and has no band',
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '#dataset=nile');
    try {
      const set = DATASETS.nile;
      const x = set.rows.map((r) => r[0]);
      const y = set.rows.map((r) => r[1]);
      await page.selectOption('#estimator', 'lowess');
      let fit = await lowessFit(page, problems);
      assert.deepEqual(fit.y, y);
      assert.equal(fit.frac, 0.67);
      assert.equal(fit.iterations, 3);
      assertMatches(fit, x, y, fit.frac, fit.iterations);
      assert.equal(fit.lower, null, 'no band');
      assert.match(
        fit.status,
        /^LOWESS .*span f = 0\.67: each local fit uses the 67 nearest of 100 points; 3 robustness iterations.*No confidence band/,
      );
      // The kernel controls and views give way to the span and the iterations.
      assert.ok((await page.isVisible('#span')) && (await page.isVisible('#iterations')));
      for (const id of ['#bandwidth', '#kernel', '#choose', '#band', '#matrix', '#selection'])
        assert.ok(!(await page.isVisible(id)), `${id} shown`);

      // A narrower span with one robustness iteration (the slider's value set and its events sent, as a drag ends).
      await page.locator('#span').evaluate((el) => {
        el.value = '0.25';
        el.dispatchEvent(new Event('input'));
        el.dispatchEvent(new Event('change'));
      });
      await page.fill('#iterations', '1');
      await page.locator('#iterations').dispatchEvent('change');
      fit = await lowessFit(page, problems, 's.fit.frac === 0.25 && s.fit.iterations === 1');
      assertMatches(fit, x, y, 0.25, 1);
      assert.ok(fit.weights.every((w) => w >= 0 && w <= 1));
      assert.match(new URL(page.url()).hash, /estimator=lowess.*frac=0\.25&iterations=1/);

      // The fit at the observations, in the data's order, with float64 digits.
      const csv = await downloadText(page, '#save-observations');
      const rows = csv.text
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',').map(Number));
      const { fitted } = ka.lowess(x, y, { frac: 0.25, iterations: 1 });
      rows.forEach((r, i) =>
        assert.ok(Math.abs(r[2] - fitted[i]) <= 1e-9 * range(y), `row ${i}: ${r[2]} vs ${fitted[i]}`),
      );

      // The figure says what was drawn: a LOWESS smooth, its span and iterations, no band.
      const svg = await downloadText(page, '#save-plot-svg');
      assert.match(svg.text, /LOWESS smooth of /);
      assert.match(svg.text, /span f = 0\.25, 1 robustness iteration, 100 points, no band/);

      // Back to a kernel estimator: h is chosen for it and the views return.
      await page.selectOption('#estimator', 'local-linear');
      await waitForFit(
        page,
        problems,
        "s.fit.estimator === 'local-linear' && s.selection && s.selection.estimator === 'local-linear'",
      );
      assert.ok((await page.isVisible('#bandwidth')) && !(await page.isVisible('#span')));
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: a LOWESS link opens with its span; every 1-D example takes LOWESS; 2-D data goes back to local-linear',
  { timeout: 6 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '#dataset=co2&estimator=lowess&frac=0.1&iterations=2');
    try {
      const set = DATASETS.co2;
      const fit = await lowessFit(page, problems);
      assert.equal(fit.frac, 0.1);
      assert.equal(fit.iterations, 2);
      assertMatches(
        fit,
        set.rows.map((r) => r[0]),
        set.rows.map((r) => r[1]),
        0.1,
        2,
      );
      for (const value of ['sine', 'step', 'hetero', 'data:engel', 'data:sunspots', 'data:elnino']) {
        const drawnBefore = await page.evaluate(() => window.demoState.fitsDrawn);
        await page.selectOption('#example', value);
        const drawn = await lowessFit(page, problems, 's.fitsDrawn > a', drawnBefore);
        assertMatches(drawn, drawn.x, drawn.y, 0.1, 2);
      }
      await page.selectOption('#example', 'data:stackloss');
      await waitForFit(page, problems, "s.dim === 2 && s.fit.estimator === 'local-linear'");
      assert.equal(await page.locator('#estimator option[value="lowess"]').evaluate((o) => o.disabled), true);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);
