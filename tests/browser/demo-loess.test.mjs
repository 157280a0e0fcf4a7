// loess in the demo (issue 30, item 6): the estimator menu's "loess" with R's span, degree and family, on every
// point, and R's band, in Debian's Chromium under the demo's CSP. Reference: R's loess() and predict(se = TRUE) at
// the page's own queries on the page's built-in data sets (tests/fixtures/loess_demo_r.json, made by
// tests/fixtures/make_loess_demo.R); axe-core at 1366 × 800 and 390 × 844 with loess's controls shown.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DATASETS } from '../../web/demo/data/datasets.js';
import { assertClean, downloadText, launch, openDemo, TIMEOUT_MS, waitForFit } from './demo-page.mjs';

const fixture = JSON.parse(readFileSync(new URL('../fixtures/loess_demo_r.json', import.meta.url), 'utf8'));
const caseOf = (dataset, span, degree, family) =>
  fixture.cases.find((c) => c.dataset === dataset && c.span === span && c.degree === degree && c.family === family);

let session;
before(async () => {
  session = await launch();
});
after(async () => {
  await session?.close();
});

const range = (a) => Math.max(...a) - Math.min(...a);
const relative = (a, b) => Math.abs(a - b) / Math.abs(b);

/** The page's loess fit once a full one with `condition` is drawn: the published numbers and the status line. */
async function loessFit(page, problems, condition = 'true', arg = null) {
  await waitForFit(page, problems, `s.fit.estimator === 'loess' && (${condition})`, arg);
  return page.evaluate(() => {
    const { fit } = window.demoState;
    const list = (v) => (v ? Array.from(v) : null);
    return {
      ...fit,
      queries: list(fit.queries),
      mean: list(fit.mean),
      lower: list(fit.lower),
      upper: list(fit.upper),
      stderr: list(fit.stderr),
      matrix: null,
      status: document.getElementById('fit-status').textContent,
    };
  });
}

/** The page's fit (its queries, curve or surface, band and statistics) is R's for case `c`. */
function assertR(fit, c) {
  const what = `${c.dataset} span ${c.span} degree ${c.degree} ${c.family}`;
  const y = DATASETS[c.dataset].rows.map((r) => r[c.dim]);
  const tol = 1e-7 * range(y); // R's 12 digits; the issue's target is 1e-6 of range(y)
  assert.equal(fit.n, y.length, `${what}: every point`);
  assert.deepEqual(fit.queries, c.queries, `${what}: the page's queries are the fixture's`);
  c.fit.forEach((want, i) =>
    assert.ok(Math.abs(fit.mean[i] - want) <= tol, `${what}: fit[${i}] ${fit.mean[i]}, R ${want}`),
  );
  for (const [key, want] of [
    ['enp', c.enp],
    ['residualScale', c.s],
    ['degreesOfFreedom', c.df],
  ])
    assert.ok(relative(fit[key], want) <= 1e-9, `${what}: ${key} ${fit[key]}, R ${want}`);
  if (c.dim !== 1) {
    assert.equal(fit.lower, null, `${what}: no band on a surface`);
    return;
  }
  c.se.forEach((want, i) => {
    assert.ok(relative(fit.stderr[i], want) <= 1e-7, `${what}: se[${i}] ${fit.stderr[i]}, R ${want}`);
    assert.ok(Math.abs(fit.lower[i] - c.lower[i]) <= tol, `${what}: lower[${i}] ${fit.lower[i]}, R ${c.lower[i]}`);
    assert.ok(Math.abs(fit.upper[i] - c.upper[i]) <= tol, `${what}: upper[${i}] ${fit.upper[i]}, R ${c.upper[i]}`);
  });
}

/** Sets a range input's value and sends its events, as a drag that ends there. */
const slide = (page, selector, value) =>
  page.locator(selector).evaluate((el, v) => {
    el.value = v;
    el.dispatchEvent(new Event('input'));
    el.dispatchEvent(new Event('change'));
  }, value);

test(
  "demo: loess on the Nile data draws R's curve and band (predict(se = TRUE)), follows span, degree, family and level",
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '#dataset=nile');
    try {
      await page.selectOption('#estimator', 'loess');
      let fit = await loessFit(page, problems);
      assert.deepEqual([fit.loessSpan, fit.degree, fit.family, fit.level], [0.75, 2, 'gaussian', 0.95]); // R's
      assertR(fit, caseOf('nile', 0.75, 2, 'gaussian'));
      assert.match(
        fit.status,
        /^loess \(as R's loess\(\): local quadratic fits, tricube-weighted over the nearest ⌊f·n⌋ = 75 of 100 points/,
      );
      assert.match(fit.status, /equivalent number of parameters 4\.\d\d, residual standard error \d/);
      assert.match(fit.status, /Band: R's predict\(se = TRUE\), the fit ± t·se with t = \d\.\d{3} \(\d+\.\d degrees/);
      // loess's controls and the band replace the kernel's; the attention views and the choice of h go.
      for (const id of ['#loess-span', '#degree', '#family', '#band', '#level'])
        assert.ok(await page.isVisible(id), `${id} hidden`);
      for (const id of ['#bandwidth', '#kernel', '#choose', '#span', '#matrix', '#selection', '#derivative'])
        assert.ok(!(await page.isVisible(id)), `${id} shown`);

      // Local-linear, span 0.3, the symmetric family, a 90 % band.
      await page.selectOption('#degree', '1');
      await page.selectOption('#family', 'symmetric');
      await page.selectOption('#level', '0.9');
      await slide(page, '#loess-span', '0.3');
      fit = await loessFit(
        page,
        problems,
        "s.fit.loessSpan === 0.3 && s.fit.degree === 1 && s.fit.level === 0.9 && s.fit.family === 'symmetric'",
      );
      assertR(fit, caseOf('nile', 0.3, 1, 'symmetric'));
      assert.match(
        fit.status,
        /Symmetric family: 4 fits, the last three with bisquare robustness weights, which gave \d+ of 100/,
      );
      assert.match(new URL(page.url()).hash, /estimator=loess.*loessSpan=0\.3&degree=1&family=symmetric/);

      // The fit at the observations: R's fitted values in the data's order, with the band.
      const csv = await downloadText(page, '#save-observations');
      const [head, ...rows] = csv.text.trim().split('\n');
      assert.equal(head, 'year,volume (10⁸ m³),fit,residual,lower_0.9,upper_0.9');
      const c = caseOf('nile', 0.3, 1, 'symmetric');
      rows.forEach((line, i) => {
        const f = Number(line.split(',')[2]);
        assert.ok(Math.abs(f - c.fitted[i]) <= 1e-7 * range(c.fitted), `row ${i}: ${f} vs R ${c.fitted[i]}`);
      });
      // The grid CSV carries R's standard errors, and the figure says what was drawn.
      const grid = await downloadText(page, '#save-fit');
      assert.match(grid.text, /^year,fit,lower_0\.9,upper_0\.9,stderr\n/);
      const svg = await downloadText(page, '#save-plot-svg');
      assert.match(svg.text, /loess fit of /);
      assert.match(svg.text, /span 0\.30, degree 1, symmetric family, 100 points, enp \d/);

      // Back to a kernel estimator: h is chosen for it and its controls return.
      await page.selectOption('#estimator', 'local-linear');
      await waitForFit(page, problems, "s.fit.estimator === 'local-linear' && s.selection");
      assert.ok((await page.isVisible('#bandwidth')) && !(await page.isVisible('#loess-span')));
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  "demo: a loess link opens with its settings (engel, symmetric); a 2-D surface (stackloss) is R's",
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(
      session,
      '#dataset=engel&estimator=loess&loessSpan=0.5&degree=2&family=symmetric',
    );
    try {
      let fit = await loessFit(page, problems);
      assertR(fit, caseOf('engel', 0.5, 2, 'symmetric'));
      assert.equal(await page.inputValue('#loess-span'), '0.5');
      const drawn = await page.evaluate(() => window.demoState.fitsDrawn);
      await page.selectOption('#example', 'data:stackloss');
      await page.selectOption('#family', 'gaussian');
      await slide(page, '#loess-span', '0.75');
      fit = await loessFit(
        page,
        problems,
        "s.dim === 2 && s.fitsDrawn > a && s.fit.family === 'gaussian' && s.fit.loessSpan === 0.75",
        drawn,
      );
      assertR(fit, caseOf('stackloss', 0.75, 2, 'gaussian'));
      assert.match(fit.status, /No band on the surface\./);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

/** axe-core's violations on the page as it is (axe.min.js served from node_modules, as the demo's CSP allows). */
async function axeViolations(page) {
  if (!(await page.evaluate(() => 'axe' in window)))
    await page.addScriptTag({ url: '/node_modules/axe-core/axe.min.js' });
  return page.evaluate(async () =>
    (await window.axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.map((n) => n.target.join(' ')),
    })),
  );
}

for (const [width, height] of [
  [1366, 800],
  [390, 844],
]) {
  test(
    `demo at ${width} × ${height}: loess's controls, band and statistics shown, axe-core finds no violation`,
    { timeout: 3 * TIMEOUT_MS },
    async () => {
      const phone = width < 640;
      const { page, problems } = await openDemo(session, '#dataset=nile&estimator=loess&family=symmetric', {
        pageOptions: { viewport: { width, height }, ...(phone ? { hasTouch: true, isMobile: true } : {}) },
      });
      try {
        const fit = await loessFit(page, problems);
        assert.equal(fit.family, 'symmetric');
        assert.ok(await page.isVisible('#loess-span'));
        // No setting overflows the page sideways.
        assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
        assert.deepEqual(await axeViolations(page), []);
        await assertClean(page, problems);
      } finally {
        await page.close();
      }
    },
  );
}
