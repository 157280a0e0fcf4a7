// The demo page as people first meet it (issue 20), in Debian's Chromium under the demo's CSP: the built-in real data
// sets, failed loads that clear the page, controls that re-choose h, links that carry small data (or say they do
// not), opaque labelled exports, the CSV at the observations, and a phone's viewport. References: the data sets as
// written by web/demo/data/make_data.py from Debian's statsmodels, and float64 loops written here.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { DATASETS } from '../../web/demo/data/datasets.js';
import { assertClean, downloadText, launch, openDemo, parseSvgs, TIMEOUT_MS, waitForFit } from './demo-page.mjs';

let session;
before(async () => {
  session = await launch();
});
after(async () => {
  await session?.close();
});

/** Gaussian local-linear kernel regression at `at`, in float64. */
function localLinear(x, y, h, at) {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let t0 = 0;
  let t1 = 0;
  for (let j = 0; j < x.length; j++) {
    const d = x[j] - at;
    const w = Math.exp(-0.5 * (d / h) ** 2);
    s0 += w;
    s1 += w * d;
    s2 += w * d * d;
    t0 += w * y[j];
    t1 += w * d * y[j];
  }
  return (s2 * t0 - s1 * t1) / (s0 * s2 - s1 * s1);
}

const paste = async (page, text) => {
  if (!(await page.locator('#paste-box').evaluate((d) => d.open))) await page.click('#paste-box summary');
  // Set directly: Playwright's fill() of a 200 kB text waits on the textarea's visibility and times out.
  await page.locator('#paste').evaluate((area, value) => {
    area.value = value;
  }, text);
  await page.click('#use-paste');
};

/** Every pixel of a PNG (decoded by the page) as [minimum alpha, width, height]. */
const pngAlpha = (page, bytes) =>
  page.evaluate(async (b64) => {
    // Decoded here, not fetched: the demo's CSP allows no data: URL.
    const bitmap = await createImageBitmap(
      new Blob([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], { type: 'image/png' }),
    );
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = canvas.getContext('2d');
    ctx.drawImage(bitmap, 0, 0);
    const { data } = ctx.getImageData(0, 0, bitmap.width, bitmap.height);
    let min = 255;
    for (let i = 3; i < data.length; i += 4) min = Math.min(min, data[i]);
    return [min, bitmap.width, bitmap.height];
  }, bytes.toString('base64'));

test(
  'demo: each built-in data set loads with the values make_data.py wrote, and names its source',
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      const offered = await page
        .locator('#example option[value^="data:"]')
        .evaluateAll((options) => options.map((o) => o.value));
      assert.deepEqual(
        offered,
        Object.keys(DATASETS).map((name) => `data:${name}`),
      );
      for (const [name, set] of Object.entries(DATASETS)) {
        await page.selectOption('#example', `data:${name}`);
        await waitForFit(page, problems, 's.dataset === a', name);
        const s = await page.evaluate(() => ({
          x: Array.from(window.demoState.x),
          y: Array.from(window.demoState.y),
          dim: window.demoState.dim,
          names: window.demoState.names,
        }));
        assert.equal(s.dim, set.dim, name);
        assert.deepEqual(s.names, set.names, name);
        assert.deepEqual(
          s.y,
          set.rows.map((r) => r[set.dim]),
          name,
        );
        assert.deepEqual(
          s.x,
          set.rows.flatMap((r) => r.slice(0, set.dim)),
          name,
        );
        assert.ok(set.source.includes('public domain'), name);
        assert.equal(await page.textContent('#example-source'), `${set.rows.length} rows. ${set.source}`);
        assert.match(new URL(page.url()).hash, new RegExp(`^#dataset=${name}&`));
      }
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: a failed load clears the old plot and fit, is shown as an alert, and names the fix; values beyond float32 are refused by column',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '#dataset=nile');
    const cleared = () =>
      page.evaluate(() => {
        const canvas = document.getElementById('plot');
        const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
        return {
          n: window.demoState.n,
          fit: window.demoState.fit,
          blank: data.every((v) => v === 0),
          alert: document.getElementById('data-status').getAttribute('role'),
          error: document.querySelector('#data-status.error') !== null,
          status: document.getElementById('data-status').textContent,
          selection: document.getElementById('selection-caption').textContent,
          hash: location.hash,
        };
      });
    try {
      // One usable row: the old data, its fit and its plot go; the menus list the new columns.
      await paste(page, 'a,b\n1,2\nx,3\n');
      await page.waitForFunction(() =>
        /fewer than two usable rows/.test(document.getElementById('data-status').textContent),
      );
      let c = await cleared();
      assert.deepEqual([c.n, c.fit, c.blank, c.alert, c.error], [undefined, null, true, 'alert', true]);
      assert.match(c.status, /Pick other columns for x and y, or fix the rows listed\./);
      assert.match(c.hash, /data=none/);
      assert.deepEqual(await page.locator('#ycol option').allTextContents(), ['a', 'b']);

      // Beyond float32: refused by column name, with the fix; no RangeError, no internal index, no "Choosing" left.
      await paste(page, ['x,y', ...Array.from({ length: 20 }, (_, i) => `${i},${(i % 3) * 1e300}`)].join('\n'));
      await page.waitForFunction(() => /float32/.test(document.getElementById('data-status').textContent));
      c = await cleared();
      assert.match(c.status, /“y” holds 2\.00×10\^300, beyond ±3\.4×10\^38.*divide the column by a power of ten/);
      assert.doesNotMatch(c.status, /\[\d+\]/);
      assert.deepEqual([c.n, c.blank, c.alert], [undefined, true, 'alert']);
      await paste(page, ['x,y', ...Array.from({ length: 20 }, (_, i) => `${(i + 1) * 1e-300},${i % 4}`)].join('\n'));
      await page.waitForFunction(() =>
        /under float32’s range/.test(document.getElementById('data-status').textContent),
      );
      c = await cleared();
      assert.match(
        c.status,
        /^the pasted text \(20 rows\): “x” holds only values below 1\.2×10\^-38 in size \(largest 2\.00×10\^-299\).*multiply the column/,
      );
      // An offset is centred away by the library (10⁶ + microseconds loads: demo-precision.test.mjs); a spread below
      // float32's normal range is not.
      await paste(page, ['x,y', ...Array.from({ length: 20 }, (_, i) => `${1e-30 + i * 1e-37},${i % 4}`)].join('\n'));
      await page.waitForFunction(() =>
        /finer than float32 resolves/.test(document.getElementById('data-status').textContent),
      );
      c = await cleared();
      assert.match(
        c.status,
        /“x” spans only 1\.90×10\^-36 around 1\.00×10\^-30.*multiply the column by a power of ten/,
      );
      assert.deepEqual([c.n, c.blank, c.alert], [undefined, true, 'alert']);
      assert.doesNotMatch(c.selection, /Choosing/);

      // Good data afterwards: a fit, and no error left on the page.
      await paste(
        page,
        ['x,y', ...Array.from({ length: 30 }, (_, i) => `${i},${Math.sin(i / 4).toFixed(3)}`)].join('\n'),
      );
      await waitForFit(page, problems, 's.n === 30');
      assert.equal(await page.locator('#data-status.error').count(), 0);
      assert.equal(await page.locator('#data-status').getAttribute('role'), null);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: changing the kernel, estimator or rule re-chooses h at once; an h set by hand says it was not chosen for the new kernel',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      const selection = () =>
        page.evaluate(() => ({
          ...window.demoState.selection,
          curve: null,
          caption: document.getElementById('selection-caption').textContent,
        }));
      await page.selectOption('#kernel', 'epanechnikov');
      await waitForFit(page, problems, 's.selection.kernel === "epanechnikov" && s.fit.kernel === "epanechnikov"');
      let sel = await selection();
      assert.equal(await page.evaluate(() => window.demoState.fit.h[0]), sel.bandwidth[0]);
      assert.match(sel.caption, /for the Epanechnikov kernel \(local-linear\)/);
      await page.selectOption('#estimator', 'nadaraya-watson');
      await waitForFit(
        page,
        problems,
        's.selection.estimator === "nadaraya-watson" && s.fit.estimator === "nadaraya-watson"',
      );
      await page.selectOption('#method', 'silverman');
      await waitForFit(page, problems, 's.selection.method === "silverman"');
      sel = await selection();
      assert.match(sel.caption, /^Silverman's rule for the Epanechnikov kernel \(Nadaraya–Watson\).*a formula/);
      assert.equal(await page.locator('#selection').isHidden(), true, 'an empty box for a rule without a curve');

      // By hand: the slider's h stays when the kernel changes, with a note and a one-click re-choice.
      await page.locator('#bandwidth').fill('-0.5');
      await waitForFit(page, problems, 'Math.abs(s.fit.h[0] - 10 ** -0.5) < 1e-9');
      assert.equal(await page.locator('#h-note').isHidden(), true);
      await page.selectOption('#kernel', 'gaussian');
      await waitForFit(page, problems, 's.fit.kernel === "gaussian" && Math.abs(s.fit.h[0] - 10 ** -0.5) < 1e-9');
      assert.match(
        await page.textContent('#h-note'),
        /was set by hand with the Epanechnikov kernel.*not chosen for the Gaussian kernel/,
      );
      await page.click('#rechoose');
      await waitForFit(page, problems, 's.selection.kernel === "gaussian" && s.hSource.by === "silverman"');
      assert.equal(await page.locator('#h-note').isHidden(), true);

      // The library's warnings, when results carry them, are listed next to the fit; otherwise nothing is shown.
      const w = await page.evaluate(() => ({
        fit: window.demoState.fit.warnings,
        items: document.querySelectorAll('#fit-warnings li').length,
        hidden: document.getElementById('fit-warnings').hidden,
      }));
      if (w.fit?.length) assert.ok(w.items >= w.fit.length && !w.hidden);
      else assert.ok(w.hidden);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: a link carries small pasted data and reproduces the fit; larger data stays behind and the opened link says so',
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      const rows = Array.from(
        { length: 200 },
        (_, i) => `${(i * 0.37).toFixed(2)},${(Math.cos(i / 9) * 3 + ((i * 7919) % 13) / 10).toFixed(3)}`,
      );
      await paste(page, `time,level\n${rows.join('\n')}`);
      await waitForFit(page, problems, 's.n === 200 && /data=[A-Za-z0-9_-]{20,}/.test(location.hash)');
      await page.locator('#bandwidth').fill('0.1');
      await waitForFit(page, problems, 'Math.abs(s.fit.h[0] - 10 ** 0.1) < 1e-9 && /h=1\\.2589/.test(location.hash)');
      const first = await page.evaluate(() => ({
        x: Array.from(window.demoState.x),
        y: Array.from(window.demoState.y),
        mean: Array.from(window.demoState.fit.mean),
        names: window.demoState.names,
        hash: location.hash,
        status: document.getElementById('share-status').textContent,
      }));
      assert.match(first.status, /holds this view with your data/);
      assert.ok(first.hash.length < 16_100, `${first.hash.length} characters`);

      const { page: second, problems: secondProblems } = await openDemo(session, first.hash);
      try {
        const again = await second.evaluate(() => ({
          x: Array.from(window.demoState.x),
          y: Array.from(window.demoState.y),
          mean: Array.from(window.demoState.fit.mean),
          names: window.demoState.names,
          h: window.demoState.fit.h[0],
        }));
        assert.deepEqual([again.x, again.y, again.names], [first.x, first.y, first.names]);
        assert.equal(again.h, Number((10 ** 0.1).toPrecision(6)));
        // The same data at h rounded to 6 digits in the link: the fit agrees to float32 rounding.
        again.mean.forEach((m, i) =>
          assert.ok(Math.abs(m - first.mean[i]) < 1e-4, `query ${i}: ${m} vs ${first.mean[i]}`),
        );
        await assertClean(second, secondProblems);
      } finally {
        await second.close();
      }

      // 20,000 rows of noise do not pack into a link: the link says the data stayed behind.
      const big = Array.from({ length: 20_000 }, (_, i) => `${i},${((i * 2654435761) % 100003) / 1000}`);
      await paste(page, `u,v\n${big.join('\n')}`);
      await waitForFit(page, problems, 's.n === 20000 && /^Your data stays behind/.test(s.shareStatus)');
      const hash = await page.evaluate(() => location.hash);
      assert.match(hash, /^#data=none&/);
      const { page: third, problems: thirdProblems } = await openDemo(session, hash);
      try {
        assert.match(await third.textContent('#link-note'), /shared without its data/);
        assert.equal(await third.locator('#link-note').isVisible(), true);
        assert.equal(await third.evaluate(() => window.demoState.n), 300); // the example, with its own h
        await assertClean(third, thirdProblems);
      } finally {
        await third.close();
      }
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: PNG and SVG exports are opaque, titled, with legend and parameters and no hover marks; the CSV at the observations matches a float64 fit',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(
      session,
      '#dataset=nile&kernel=gaussian&estimator=local-linear&h=4&band=on',
    );
    try {
      // Hover a query first: its marks must not reach the files.
      const plot = page.locator('#plot');
      const box = await plot.boundingBox();
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.waitForFunction(() => window.demoState.hoverRow !== null);
      const accent = await page.evaluate(() =>
        getComputedStyle(document.documentElement).getPropertyValue('--accent').trim(),
      );

      const png = await downloadText(page, '#save-plot');
      const [alpha, width, height] = await pngAlpha(page, png.bytes);
      assert.equal(alpha, 255, 'a transparent pixel in the PNG');
      assert.ok(height > (box.height + 40) * 2 - 4 && Math.abs(width - box.width * 2) <= 2, `${width} × ${height}`);

      const svgFile = await downloadText(page, '#save-plot-svg');
      const { svg } = await parseSvgs(page, { svg: svgFile.text });
      assert.equal(svg.error, null);
      const texts = svg.texts.join(' | ');
      assert.match(
        texts,
        /Kernel regression of volume \(10⁸ m³\) on year \(the “Nile: yearly flow at Aswan, 1871–1970” data set\)/,
      );
      assert.match(
        texts,
        /local-linear, Gaussian kernel, h = 4\.00 \(set by hand|local-linear, Gaussian kernel, h = 4\.00 \(from a link\)/,
      );
      assert.match(texts, /method exact, 100 points, 95 % band/);
      for (const label of ['data', 'fit', 'confidence band'])
        assert.ok(svg.texts.includes(label), `no legend “${label}”`);
      assert.ok(!svg.paths.some((p) => p.stroke === accent), 'hover marks in the SVG');
      assert.match(svgFile.text, /<rect width="\d+" height="\d+" fill="#[0-9a-f]{6}"/);

      // At the observations: the file's own numbers, the fit (float64 reference, float32 engine), residuals, band.
      const set = DATASETS.nile;
      const csv = (await downloadText(page, '#save-observations')).text.trim().split('\n');
      assert.equal(csv[0], 'year,volume (10⁸ m³),fit,residual,lower_0.95,upper_0.95');
      assert.equal(csv.length, 101);
      const xs = set.rows.map((r) => r[0]);
      const ys = set.rows.map((r) => r[1]);
      csv.slice(1).forEach((line, i) => {
        const [x, y, fit, residual, lower, upper] = line.split(',');
        assert.deepEqual([x, y], [String(xs[i]), String(ys[i])]);
        const want = localLinear(xs, ys, 4, xs[i]);
        assert.ok(Math.abs(Number(fit) - want) < 1e-3 * Math.abs(want), `${x}: ${fit} vs ${want}`);
        assert.ok(fit.replace(/e.*$/, '').replace(/[-.]/g, '').replace(/^0+/, '').length <= 9, `float32 noise: ${fit}`);
        assert.equal(
          Number(residual),
          Number((ys[i] - Number(fit)).toFixed(Math.max(0, (fit.split('.')[1] ?? '').length))),
        );
        assert.ok(Number(lower) < Number(fit) && Number(fit) < Number(upper), line);
      });
      // On the grid: it starts and ends at the data, without float32 noise.
      const grid = (await downloadText(page, '#save-fit')).text.trim().split('\n');
      assert.equal(grid[1].split(',')[0], '1871');
      assert.equal(grid.at(-1).split(',')[0], '1970');
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: on a phone (390 × 844) the plot is in the first screen, every control is at least 24 px, and a tap inspects without adding a point',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '', {
      pageOptions: { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true },
    });
    try {
      await page.evaluate(() => window.scrollTo(0, 0));
      const plot = await page.locator('#plot').boundingBox();
      assert.ok(plot.y >= 0 && plot.y + plot.height <= 844, `plot at ${plot.y}…${plot.y + plot.height}`);
      assert.ok(plot.width >= 340, `plot ${plot.width} px wide`);
      // A checkbox's or radio button's target is its label, which toggles it too.
      const small = await page.evaluate(() =>
        [...document.querySelectorAll('button, select, input, summary')]
          .filter((e) => e.offsetParent !== null && e.type !== 'range')
          .map((e) => ({
            id: e.id || e.name || e.textContent.trim().slice(0, 20),
            ...(e.closest('label') ?? e).getBoundingClientRect().toJSON(),
          }))
          .filter((r) => r.height < 24 || r.width < 24),
      );
      assert.deepEqual(small, []);
      const slider = await page.locator('#bandwidth').boundingBox();
      assert.ok(slider.height >= 24, `slider ${slider.height} px tall`);

      await page.tap('#plot', { position: { x: plot.width * 0.4, y: plot.height * 0.5 } });
      await page.waitForFunction(() => window.demoState.hoverRow !== null);
      assert.equal(await page.evaluate(() => window.demoState.n), 300);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

/**
 * What the page's layout breaks at the current viewport: a horizontal scroll bar; a label (`label[for]`) at the end of
 * a line with its control on the next, or a slider's read-out on another line than the slider; two of the settings' labels and controls overlapping; the identity
 * table narrower than its column (its caption then wraps in a strip) or a cell of it wrapped.
 */
function layoutProblems(page) {
  return page.evaluate(() => {
    const problems = [];
    const shown = (e) => e.offsetParent !== null && e.getBoundingClientRect().width > 1; // not .visually-hidden
    const sameLine = (a, b) => a.top < b.bottom - 2 && b.top < a.bottom - 2;
    const doc = document.documentElement;
    if (doc.scrollWidth > innerWidth) problems.push(`page ${doc.scrollWidth} px wide in ${innerWidth}`);
    for (const label of document.querySelectorAll('label[for]')) {
      const control = document.getElementById(label.htmlFor);
      if (!shown(label) || !control || !shown(control)) continue;
      // On its control's line, or above it starting at its left edge (a phone's full-width menus); never at the end of
      // a line with the control on the next.
      const [l, c] = [label.getBoundingClientRect(), control.getBoundingClientRect()];
      if (!sameLine(l, c) && !(l.bottom <= c.top + 2 && l.left <= c.left + 4))
        problems.push(`label “${label.textContent.trim()}” not on its control's line`);
    }
    for (const output of document.querySelectorAll('output[for]')) {
      const input = document.getElementById(output.htmlFor);
      if (shown(output) && shown(input) && !sameLine(output.getBoundingClientRect(), input.getBoundingClientRect()))
        problems.push(`read-out of #${input.id} not on its line`);
    }
    const parts = [
      ...document.querySelectorAll(
        '#controls label, #controls select, #controls input, #controls output, #controls button',
      ),
    ]
      .filter(shown)
      // A checkbox lies inside its label.
      .filter((e) => !(e.tagName === 'INPUT' && e.closest('label')))
      .map((e) => ({ e, r: e.getBoundingClientRect() }));
    for (let i = 0; i < parts.length; i++) {
      for (let j = i + 1; j < parts.length; j++) {
        const [a, b] = [parts[i].r, parts[j].r];
        const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (w > 1 && h > 1)
          problems.push(
            `#${parts[i].e.id || parts[i].e.textContent.trim()} overlaps #${parts[j].e.id || parts[j].e.textContent.trim()}`,
          );
      }
    }
    const table = document.getElementById('identity');
    const box = table.parentElement;
    if (innerWidth >= 1000) {
      for (const part of [table.caption, table.tHead.rows[0]]) {
        const width = part.getBoundingClientRect().width;
        if (width < box.clientWidth - 2)
          problems.push(`identity table's ${part.localName} ${Math.round(width)} px in a column of ${box.clientWidth}`);
      }
      for (const cell of table.querySelectorAll('td, th')) {
        const lineHeight = parseFloat(getComputedStyle(cell).lineHeight) || 20;
        if (cell.clientHeight > 1.8 * lineHeight + 8) problems.push(`identity cell “${cell.textContent}” wraps`);
      }
    }
    return problems;
  });
}

test(
  'demo: on wide screens (1920 × 1080, 2560 × 1440) and a phone, no label leaves its control, nothing overlaps or scrolls sideways, and the identity table fills its column',
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    for (const [width, height] of [
      [1920, 1080],
      [2560, 1440],
      [390, 844],
    ]) {
      const { page, problems } = await openDemo(session, '#dataset=co2', {
        pageOptions: { viewport: { width, height } },
      });
      try {
        assert.deepEqual(await layoutProblems(page), [], `at ${width} × ${height}, h`);
        // CV interpolates CO₂'s monthly series: the fit and the choice both warn, listed once.
        const codes = await page.$$eval('#fit-warnings li', (items) => items.map((li) => li.dataset.code));
        assert.deepEqual(codes, ['interpolating']);
        // The span's controls and LOWESS's take the h slider's place.
        await page.selectOption('#bandwidth-kind', 'span');
        await waitForFit(page, problems, 's.fit.spanBandwidth');
        assert.deepEqual(await layoutProblems(page), [], `at ${width} × ${height}, span`);
        await page.selectOption('#estimator', 'lowess');
        await waitForFit(page, problems, "s.fit.estimator === 'lowess'");
        assert.deepEqual(await layoutProblems(page), [], `at ${width} × ${height}, LOWESS`);
        await assertClean(page, problems);
      } finally {
        await page.close();
      }
    }
  },
);

test(
  'demo: axis titles, tick labels, title and legend of the exported figures never overlap, on each 1-D data set',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      for (const name of ['nile', 'co2', 'engel', 'sunspots', 'elnino']) {
        await page.selectOption('#example', `data:${name}`);
        await waitForFit(page, problems, 's.dataset === a', name);
        for (const button of ['#save-plot-svg', '#save-selection-svg']) {
          const { text } = await downloadText(page, button);
          // Laid out by the browser (the file put into the page as inline SVG), each text's box on screen.
          const overlaps = await page.evaluate((svgText) => {
            const doc = new DOMParser().parseFromString(svgText, 'image/svg+xml');
            const svg = document.importNode(doc.documentElement, true);
            document.body.append(svg);
            const boxes = [...svg.querySelectorAll('text')].map((t) => ({
              text: t.textContent,
              r: t.getBoundingClientRect(),
            }));
            svg.remove();
            const out = [];
            for (let i = 0; i < boxes.length; i++) {
              for (let j = i + 1; j < boxes.length; j++) {
                const [a, b] = [boxes[i].r, boxes[j].r];
                if (
                  a.left < b.right - 0.5 &&
                  b.left < a.right - 0.5 &&
                  a.top < b.bottom - 0.5 &&
                  b.top < a.bottom - 0.5
                )
                  out.push(`${boxes[i].text} × ${boxes[j].text}`);
              }
            }
            return out;
          }, text);
          assert.deepEqual(overlaps, [], `${name} ${button}`);
        }
      }
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test('tick labels: log axes read 10, 20, 100; steps keep their precision; a true minus; no exception on extreme ranges', async () => {
  const { logLabel, tickLabel, ticks } = await import('../../web/demo/ticks.js');
  assert.deepEqual([1, 2, 5, 10, 20, 100, 0.05, 200000].map(logLabel), [
    '1',
    '2',
    '5',
    '10',
    '20',
    '100',
    '0.05',
    '200000',
  ]);
  assert.deepEqual([1e-7, 2e-9, 1e6, 5e12].map(logLabel), ['10⁻⁷', '2×10⁻⁹', '10⁶', '5×10¹²']);
  assert.deepEqual(
    ticks(-1, 1, 4).map((t) => t.label),
    ['\u22121.0', '\u22120.5', '0.0', '0.5', '1.0'],
  );
  assert.deepEqual(
    ticks(1871, 1970, 5).map((t) => t.label),
    ['1880', '1900', '1920', '1940', '1960'],
  );
  assert.equal(tickLabel(250000, 50000), '250,000');
  assert.equal(tickLabel(3e-300, 1e-300), '3×10⁻³⁰⁰');
  assert.deepEqual(ticks(1e-300, 1e-300 + 1e-310, 4).length <= 50, true);
  assert.deepEqual(ticks(0, Infinity, 4), []);
});

test(
  'demo: contrast on the panel background, light and dark themes: text 4.5:1 (muted, errors), plot marks 3:1',
  { timeout: 2 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '', { wait: false });
    try {
      // WCAG 2 relative luminance and contrast ratio, of the colour as composed over the panel (alpha included).
      const luminance = ([r, g, b]) =>
        [r, g, b]
          .map((c) => (c / 255 <= 0.03928 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4))
          .reduce((sum, c, i) => sum + c * [0.2126, 0.7152, 0.0722][i], 0);
      const ratio = (a, b) => {
        const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
        return (hi + 0.05) / (lo + 0.05);
      };
      for (const scheme of ['light', 'dark']) {
        await page.emulateMedia({ colorScheme: scheme });
        const colours = await page.evaluate(() => {
          const style = getComputedStyle(document.documentElement);
          const ctx = new OffscreenCanvas(1, 1).getContext('2d', { willReadFrequently: true });
          const over = (name) => {
            ctx.globalCompositeOperation = 'copy';
            ctx.fillStyle = style.getPropertyValue('--panel').trim();
            ctx.fillRect(0, 0, 1, 1);
            ctx.globalCompositeOperation = 'source-over';
            if (name) {
              ctx.fillStyle = style.getPropertyValue(name).trim();
              ctx.fillRect(0, 0, 1, 1);
            }
            return Array.from(ctx.getImageData(0, 0, 1, 1).data.slice(0, 3));
          };
          const names = ['--muted', '--error', '--fg', '--point', '--curve', '--band-edge', '--thin', '--axis'];
          return { panel: over(null), ...Object.fromEntries(names.map((n) => [n, over(n)])) };
        });
        for (const name of ['--muted', '--error', '--fg'])
          assert.ok(
            ratio(colours[name], colours.panel) >= 4.5,
            `${scheme} ${name}: ${ratio(colours[name], colours.panel).toFixed(2)}`,
          );
        for (const name of ['--point', '--curve', '--band-edge', '--thin', '--axis']) {
          assert.ok(
            ratio(colours[name], colours.panel) >= 3,
            `${scheme} ${name}: ${ratio(colours[name], colours.panel).toFixed(2)}`,
          );
        }
      }
      await waitForFit(page, problems);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: a link whose data is cut short or corrupt says so and shows an example',
  { timeout: 2 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '#data=AbCdEfGh&kernel=tricube');
    try {
      assert.match(
        await page.textContent('#link-note'),
        /^This link’s data could not be used: its data does not unpack \(was the link cut short\?\)\. An example is shown instead\.$/,
      );
      assert.deepEqual(await page.evaluate(() => [window.demoState.n, window.demoState.fit.kernel]), [300, 'tricube']);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);
