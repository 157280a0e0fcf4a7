// Nearest-neighbour spans for kernel fits in the demo (issue 20's leftovers, issue 23 item 7): the "Bandwidth" menu's
// "span" choice and its slider, in Debian's Chromium under the demo's CSP. Reference: kernelRegression with
// `bandwidth: { span }` run here in Node on the same data (the built-in sets as web/demo/data/make_data.py wrote
// them), itself checked against a float64 k-NN loop in tests/js/span.test.mjs.
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
const median = (a) => Float64Array.from(a).sort()[a.length >> 1];

/** The page's fit once a full one for which `condition` holds is drawn: its numbers and the text under it. */
async function pageFit(page, problems, condition = 'true', arg = null) {
  await waitForFit(page, problems, condition, arg);
  return page.evaluate(() => {
    const { fit, x, y, dim } = window.demoState;
    return {
      dim,
      x: Array.from(x),
      y: Array.from(y),
      h: fit.h,
      kernel: fit.kernel,
      estimator: fit.estimator,
      queries: Array.from(fit.queries),
      mean: Array.from(fit.mean),
      upper: Array.from(fit.upper ?? []),
      span: fit.spanBandwidth,
      bandwidths: fit.bandwidths && Array.from(fit.bandwidths),
      status: document.getElementById('fit-status').textContent,
      hash: location.hash,
    };
  });
}

/** The library's span fit on the page's data at the page's queries (mean, band and each query's h). */
function librarySpanFit(fit, f, level = 0.95) {
  const model = ka.kernelRegression(fit.x, fit.y, {
    dim: fit.dim,
    kernel: fit.kernel,
    estimator: fit.estimator,
    bandwidth: { span: f },
  });
  try {
    return model.predictInterval(fit.queries, { level });
  } finally {
    model.dispose();
  }
}

/** The page's curve equals the library's span fit within 10⁻⁵ of range(y) (a pixel is about 1/500 of it). */
function assertSpanFit(fit, f) {
  const ref = librarySpanFit(fit, f);
  const tolerance = 1e-5 * range(fit.y);
  assert.equal(fit.mean.length, ref.mean.length);
  fit.mean.forEach((m, i) =>
    assert.ok(Math.abs(m - ref.mean[i]) <= tolerance, `query ${i}: page ${m} vs kernelRegression ${ref.mean[i]}`),
  );
  fit.upper.forEach((u, i) => assert.ok(Math.abs(u - ref.upper[i]) <= tolerance, `band at query ${i}`));
  // Each query's h is the library's, and the caption's median is theirs.
  assert.deepEqual(fit.bandwidths, Array.from(ref.bandwidths));
  for (let d = 0; d < fit.dim; d++) {
    const own = ref.bandwidths.filter((_, i) => i % fit.dim === d);
    assert.equal(fit.span.median[d], median(own));
    assert.equal(fit.span.min[d], Math.min(...own));
    assert.equal(fit.span.max[d], Math.max(...own));
  }
  return ref;
}

/** Sets a range input as a drag ends: the value, then its input and change events. */
const slide = (page, selector, value) =>
  page.evaluate(
    ([sel, v]) => {
      const input = document.querySelector(sel);
      input.value = v;
      input.dispatchEvent(new Event('input', { bubbles: true }));
      input.dispatchEvent(new Event('change', { bubbles: true }));
    },
    [selector, String(value)],
  );

test(
  'demo: a span fit on the Nile data is kernelRegression’s with { span }, its caption, link and exports say so, and h comes back',
  { timeout: 6 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '#dataset=nile');
    try {
      const set = DATASETS.nile;
      const atH = await pageFit(page, problems);
      assert.equal(atH.span, null);
      assert.deepEqual(
        atH.y,
        set.rows.map((r) => r[1]),
      );
      assert.ok(await page.isVisible('#bandwidth'));
      assert.ok(!(await page.isVisible('#kernel-span')));

      // The span replaces h's controls; the default f = 0.3 is 30 of the 100 years.
      await page.selectOption('#bandwidth-kind', 'span');
      let fit = await pageFit(page, problems, 's.fit.spanBandwidth && s.fit.spanBandwidth.f === 0.3');
      assertSpanFit(fit, 0.3);
      assert.equal(fit.span.k, 30);
      assert.match(
        fit.status,
        /^Local-linear, gaussian kernel, nearest-neighbour span f = 0\.30 \(each query's h is the distance to its 30th nearest of 100 points: median h = [\d.]+, from [\d.]+ to [\d.]+ over the curve's queries\), on 100 points, exactly \(the plan: [^:]*span[^:]*\):/,
      );
      assert.match(fit.hash, /bandwidth=span&span=0\.3(&|$)/);
      for (const id of ['#kernel-span', '#kernel', '#band', '#matrix', '#fit-method'])
        assert.ok(await page.isVisible(id), `${id} hidden`);
      for (const id of ['#bandwidth', '#choose', '#learn', '#method'])
        assert.ok(!(await page.isVisible(id)), `${id} shown`);
      // The attention matrix of a span fit: each row at its own query's h, so rows still sum to 1.
      const rowSums = await page.evaluate(() => {
        const { rows, bins, binned } = window.demoState.fit.matrix;
        return Array.from({ length: rows }, (_, r) => binned.slice(r * bins, (r + 1) * bins).reduce((a, b) => a + b));
      });
      for (const sum of rowSums) assert.ok(Math.abs(sum - 1) < 1e-4, `a matrix row sums to ${sum}`);

      // The grid cannot serve a span: the library's plan refuses it with its reason, which the page shows in its own
      // menu's words (it has no rule of its own about spans); "auto" fits again.
      const { reason } = ka.plan('regression', { n: 100, dim: 1, span: true });
      await page.selectOption('#fit-method', 'grid');
      await page.waitForFunction(() => window.demoState.error !== null);
      assert.equal(
        await page.evaluate(() => window.demoState.error),
        `method “grid” cannot serve this fit: ${reason.replace(/^exact: /, '')}. Choose “auto” or “exact” under “Method”.`,
      );
      await page.selectOption('#fit-method', 'auto');
      await page.waitForFunction(() => window.demoState.error === null);
      fit = await pageFit(page, problems, 's.fit.spanBandwidth?.f === 0.3');
      assertSpanFit(fit, 0.3);

      // Another span, another kernel and estimator: refitted (no h to choose).
      await slide(page, '#kernel-span', 0.55);
      await page.selectOption('#kernel', 'tricube');
      await page.selectOption('#estimator', 'nadaraya-watson');
      fit = await pageFit(
        page,
        problems,
        "s.fit.spanBandwidth?.f === 0.55 && s.fit.kernel === 'tricube' && s.fit.estimator === 'nadaraya-watson'",
      );
      assertSpanFit(fit, 0.55);
      assert.equal(fit.span.k, 55);

      // Exports: the figure's parameters, and each query's (and each observation's) h in the CSVs.
      const svg = await downloadText(page, '#save-plot-svg');
      assert.match(
        svg.text,
        /Nadaraya–Watson, Tricube kernel, nearest-neighbour span f = 0\.55 \(55 nearest points; median h = [\d.]+\), method exact, 100 points/,
      );
      const grid = (await downloadText(page, '#save-fit')).text.trim().split('\n');
      const head = grid[0].split(',');
      assert.equal(head.at(-1), `h_${set.names[0]}`);
      grid.slice(1).forEach((line, i) => {
        const h = Number(line.split(',').at(-1));
        assert.ok(Math.abs(h - fit.bandwidths[i]) <= 1e-6 * fit.bandwidths[i], `grid row ${i}: h ${h}`);
      });
      const obs = (await downloadText(page, '#save-observations')).text.trim().split('\n');
      assert.equal(obs[0].split(',').at(-1), `h_${set.names[0]}`);
      const model = ka.kernelRegression(fit.x, fit.y, {
        dim: 1,
        kernel: 'tricube',
        estimator: 'nadaraya-watson',
        bandwidth: { span: 0.55 },
      });
      const atObs = model.predictInterval(fit.x, { level: 0.95 });
      model.dispose();
      obs.slice(1).forEach((line, i) => {
        const cells = line.split(',').map(Number);
        assert.equal(cells[0], fit.x[i]);
        assert.ok(Math.abs(cells[2] - atObs.mean[i]) <= 1e-5 * range(fit.y), `observation ${i}: fit ${cells[2]}`);
        assert.ok(Math.abs(cells.at(-1) - atObs.bandwidths[i]) <= 1e-6 * atObs.bandwidths[i], `observation ${i}: h`);
      });

      // Back to h: the h the rule chose for the Gaussian local-linear fit was not chosen for Tricube
      // Nadaraya–Watson, so it is chosen again; back to those settings, the first fit returns exactly.
      await page.selectOption('#kernel', 'gaussian');
      await page.selectOption('#estimator', 'local-linear');
      await pageFit(page, problems, "s.fit.kernel === 'gaussian' && s.fit.estimator === 'local-linear'");
      await page.selectOption('#bandwidth-kind', 'h');
      fit = await pageFit(page, problems, '!s.fit.spanBandwidth');
      assert.deepEqual(fit.h, atH.h);
      assert.deepEqual(fit.mean, atH.mean);
      assert.equal(fit.status, atH.status);
      assert.doesNotMatch(fit.hash, /bandwidth=|span=/);
      assert.ok(await page.isVisible('#bandwidth'));
      assert.ok(!(await page.isVisible('#kernel-span')));
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: a link with bandwidth=span opens as a span fit, also in 2-D (stackloss)',
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(
      session,
      '#dataset=stackloss&bandwidth=span&span=0.6&kernel=epanechnikov',
      {
        wait: false,
      },
    );
    try {
      const fit = await pageFit(page, problems, 's.fit.spanBandwidth?.f === 0.6');
      assert.equal(fit.dim, 2);
      assert.equal(fit.kernel, 'epanechnikov');
      assert.equal(await page.inputValue('#bandwidth-kind'), 'span');
      assert.equal(fit.span.k, 13); // ⌈0.6 · 21⌉
      assertSpanFit(fit, 0.6);
      assert.match(
        fit.status,
        /span f = 0\.60 \(each query's h is the distance to its 13th nearest of 21 points: median h = [\d.]+, [\d.]+,/,
      );
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);
