// Data with a large offset (issue 20, with the library centring every input in double): x in Unix seconds (~1.7e9,
// one row a minute) and y ≈ 10⁴ plus a signal of size 1. Float32 would hold x to 128 s and y to 10⁻³; the page hands
// the library float64 and writes its float64 results, so the fit on the grid and the CSV at the observations must
// match a float64 Nadaraya–Watson loop (written here) to 1e-5 of the range of y.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { assertClean, downloadText, launch, openDemo, TIMEOUT_MS, waitForFit } from './demo-page.mjs';

const N = 400;
const T0 = 1_700_000_000;
let session;
before(async () => {
  session = await launch();
});
after(async () => {
  await session?.close();
});

/** Gaussian Nadaraya–Watson at `at`, in float64. */
function nadarayaWatson(x, y, h, at) {
  let sw = 0;
  let swy = 0;
  for (let j = 0; j < x.length; j++) {
    const w = Math.exp(-0.5 * ((x[j] - at) / h) ** 2);
    sw += w;
    swy += w * y[j];
  }
  return swy / sw;
}

test(
  'demo: x in Unix seconds and y ≈ 1e4 + a small signal are fitted and exported to 1e-5 of the range of y',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      await page.selectOption('#estimator', 'nadaraya-watson');
      await page.selectOption('#fit-method', 'exact');
      await waitForFit(page, problems, 's.fit.estimator === "nadaraya-watson"');
      const xs = Array.from({ length: N }, (_, i) => T0 + 60 * i);
      const ys = xs.map((_, i) => Number((1e4 + 0.5 * Math.sin(i / 15) + 0.01 * (((i * 7) % 5) - 2)).toFixed(4)));
      if (!(await page.locator('#paste-box').evaluate((d) => d.open))) await page.click('#paste-box summary');
      await page.locator('#paste').evaluate(
        (area, value) => {
          area.value = value;
        },
        ['time,level', ...xs.map((x, i) => `${x},${ys[i]}`)].join('\n'),
      );
      await page.click('#use-paste');
      await waitForFit(page, problems, 's.n === a && s.fit.estimator === "nadaraya-watson"', N);
      const s = await page.evaluate(() => ({
        x: Array.from(window.demoState.x),
        y: Array.from(window.demoState.y),
        h: window.demoState.fit.h[0],
        kernel: window.demoState.fit.kernel,
        queries: Array.from(window.demoState.fit.queries),
        mean: Array.from(window.demoState.fit.mean),
        meanType: window.demoState.fit.mean.constructor.name,
      }));
      assert.deepEqual([s.x, s.y, s.kernel], [xs, ys, 'gaussian']);
      assert.equal(s.meanType, 'Float64Array');
      const range = Math.max(...ys) - Math.min(...ys);
      const tolerance = 1e-5 * range;
      // The chosen h is seconds to minutes-scale, not float32's 128 s steps.
      assert.ok(s.h > 60 && s.h < 60 * N, `h = ${s.h}`);
      // On the grid: the queries run from the first observation to the last, in float64.
      assert.deepEqual([s.queries[0], s.queries.at(-1)], [xs[0], xs.at(-1)]);
      let worst = 0;
      s.queries.forEach((q, i) => {
        worst = Math.max(worst, Math.abs(s.mean[i] - nadarayaWatson(xs, ys, s.h, q)));
      });
      assert.ok(worst <= tolerance, `grid: largest difference ${worst} > ${tolerance}`);

      // At the observations, as exported: the file's numbers, the fit in float64, the residual.
      const csv = (await downloadText(page, '#save-observations')).text.trim().split('\n');
      assert.equal(csv[0], 'time,level,fit,residual,lower_0.95,upper_0.95');
      assert.equal(csv.length, N + 1);
      let longest = 0;
      worst = 0;
      csv.slice(1).forEach((line, i) => {
        const [x, y, fit, residual, lower, upper] = line.split(',');
        assert.deepEqual([x, y], [String(xs[i]), String(ys[i])]);
        worst = Math.max(worst, Math.abs(Number(fit) - nadarayaWatson(xs, ys, s.h, xs[i])));
        assert.ok(Math.abs(Number(residual) - (ys[i] - Number(fit))) <= 1e-9, line);
        assert.ok(Number(lower) < Number(fit) && Number(fit) < Number(upper), line);
        longest = Math.max(longest, fit.replace(/[-.]/g, '').length);
      });
      assert.ok(worst <= tolerance, `observations: largest difference ${worst} > ${tolerance}`);
      // Written to the digits the result holds (10000.xxxxxxx), beyond float32's 7 to 9.
      assert.ok(longest >= 11, `the fit was written with at most ${longest} digits`);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);
