// Dates as x in the demo, and the reading panel before the fit: a date column is fitted in seconds less a whole-day
// centre (checked against the file's dates read here with Date.UTC, and a float64 local-linear loop), and the axis,
// hover read-out, identity table, h and CSV exports write dates again. The detected settings are shown with the first
// rows; changing one reads the file again; a refusal names its setting and focuses that menu.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { assertClean, downloadText, launch, openDemo, parseSvgs, TIMEOUT_MS, waitForFit } from './demo-page.mjs';

const FILES = fileURLToPath(new URL('../fixtures/files/', import.meta.url));
const DAY = 86400;

let session;
before(async () => {
  session = await launch();
});
after(async () => {
  await session?.close();
});

// Float64 reference: the Gaussian local-linear fit at q.
function localLinear(x, y, q, h) {
  let s0 = 0,
    s1 = 0,
    s2 = 0,
    t0 = 0,
    t1 = 0;
  for (let j = 0; j < y.length; j++) {
    const u = (x[j] - q) / h;
    const w = Math.exp(-0.5 * u * u);
    s0 += w;
    s1 += w * u;
    s2 += w * u * u;
    t0 += w * y[j];
    t1 += w * u * y[j];
  }
  return (s2 * t0 - s1 * t1) / (s0 * s2 - s1 * s1);
}

const DATE_TICK = /^\d{4}(-\d{2}(-\d{2}( \d{2}:\d{2}(:\d{2})?)?)?)?$/;

/**
 * Opens `file` in the demo (the example first, then the file through the file input) with a fixed bandwidth of
 * `hDays` days, and checks what every date test checks: x is the file's seconds less a whole-day centre near their
 * middle, the fit is the float64 fit on those centred seconds, h reads in days, ticks, hover and table read as dates.
 * Returns the page and what the test still needs.
 */
async function checkDates(page, problems, file, seconds, ys, hDays) {
  await page.setInputFiles('#file', `${FILES}${file}`);
  await waitForFit(page, problems, 's.n === a', seconds.length);
  // A bandwidth in seconds: the slider holds log10(h).
  await page.locator('#bandwidth').fill(String(Math.log10(hDays * DAY)));
  await page.locator('#bandwidth').dispatchEvent('change');
  await waitForFit(page, problems, 'Math.abs(Math.log(s.fit.h[0] / a)) < 0.02', hDays * DAY);
  const s = await page.evaluate(() => ({
    x: Array.from(window.demoState.x),
    y: Array.from(window.demoState.y),
    fit: window.demoState.fit,
    h: document.getElementById('bandwidth-value').textContent,
    status: document.getElementById('fit-status').textContent,
    identity: [...document.querySelectorAll('#identity tbody tr td:first-child')].map((td) => td.textContent),
  }));
  // Centred in float64 on a whole day near the middle of the dates.
  const centre = s.x[0] === undefined ? NaN : seconds[0] - s.x[0];
  assert.equal(Math.abs(centre % DAY), 0, `centre ${centre} is not a whole day`);
  const mid = (Math.min(...seconds) + Math.max(...seconds)) / 2;
  assert.ok(Math.abs(centre - mid) <= DAY / 2, `centre ${centre} is not the middle ${mid}`);
  assert.deepEqual(
    s.x,
    seconds.map((t) => t - centre),
  );
  assert.deepEqual(s.y, ys);
  // The fit: the float64 local-linear fit on the centred seconds, at the fit's own h.
  const xs = seconds.map((t) => t - centre);
  const range = Math.max(...ys) - Math.min(...ys);
  for (let i = 0; i < s.fit.queries.length; i += 7) {
    const want = localLinear(xs, ys, s.fit.queries[i], s.fit.h[0]);
    assert.ok(Math.abs(s.fit.mean[i] - want) < 1e-4 * range, `fit at ${s.fit.queries[i]}: ${s.fit.mean[i]} vs ${want}`);
  }
  // h in days, the identity table's queries as dates.
  assert.match(s.h, /^\d+(\.\d+)? days$/);
  assert.match(s.status, /h = \d+(\.\d+)? days/);
  for (const q of s.identity) assert.match(q, DATE_TICK);
  // The x tick labels are dates (the SVG export draws the same frame as the canvas).
  const svgFile = await downloadText(page, '#save-plot-svg');
  const { svg } = await parseSvgs(page, { svg: svgFile.text });
  const dates = svg.texts.filter((t) => DATE_TICK.test(t) && /-/.test(t));
  assert.ok(dates.length >= 2, `no date tick labels: ${svg.texts.join(' | ')}`);
  for (const t of dates) {
    const at = Date.parse(`${t.replace(' ', 'T')}${t.length > 10 ? 'Z' : ''}`) / 1000;
    assert.ok(at >= Math.min(...seconds) - 5 * DAY && at <= Math.max(...seconds) + 5 * DAY, `tick ${t} off the data`);
  }
  assert.match(svg.texts.join(' | '), /h = \d+(\.\d+)? days/);
  // The hover read-out: a date.
  // In view first: a pointer moved outside the viewport dispatches no mousemove.
  await page.locator('#plot').scrollIntoViewIfNeeded();
  const box = await page.locator('#plot').boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + Math.min(box.height / 2, 100));
  await page.waitForFunction(() =>
    /^query \d{4}-\d{2}-\d{2}/.test(document.getElementById('hover-status').textContent),
  );
  return { centre };
}

test(
  'demo: an ISO-dated file plots with dates on x, is fitted on centred seconds, and exports dates',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '#estimator=local-linear&kernel=gaussian&method=scott');
    try {
      // tests/fixtures/files/iso-dates.csv, read here independently of the page.
      const text = ['1958-03-29T00:00Z', '1958-04-05T00:00Z', '1958-04-12T12:00Z', '1958-04-19T06:30:15Z'];
      const seconds = text.map((t) => Date.parse(t) / 1000);
      const ys = [316.19, 317.31, 317.69, 317.58];
      await checkDates(page, problems, 'iso-dates.csv', seconds, ys, 5);
      const reading = await page.evaluate(() => window.demoState.reading);
      assert.deepEqual(reading.settings.kinds, ['date', 'number']);
      assert.equal(await page.locator('#reading').isVisible(), true);
      assert.equal(await page.locator('#preview tbody tr').count(), 4);
      assert.match(await page.locator('#read-detected').textContent(), /date and time columns: “date” \(date\)/);

      // The CSV at the observations: the file's dates (whole days as dates; times to the second, UTC).
      const obs = (await downloadText(page, '#save-observations')).text.trim().split('\n');
      assert.equal(obs[0].split(',')[0], 'date');
      assert.deepEqual(
        obs.slice(1).map((l) => l.split(',')[0]),
        ['1958-03-29', '1958-04-05', '1958-04-12T12:00:00Z', '1958-04-19T06:30:15Z'],
      );
      // On the grid: from the first date to the last, as ISO text.
      const grid = (await downloadText(page, '#save-fit')).text.trim().split('\n');
      assert.equal(grid[1].split(',')[0], '1958-03-29');
      assert.equal(grid.at(-1).split(',')[0], '1958-04-19T06:30:15Z');

      // A link carries the dates' kind and centre: the opened link plots the same centred seconds as dates.
      const hash = await page.evaluate(() => location.hash);
      const x = await page.evaluate(() => Array.from(window.demoState.x));
      const shared = await openDemo(session, hash);
      try {
        assert.deepEqual(await shared.page.evaluate(() => Array.from(window.demoState.x)), x);
        assert.match(await shared.page.locator('#bandwidth-value').textContent(), /^\d+(\.\d+)? days$/);
        const svg = (await parseSvgs(shared.page, { svg: (await downloadText(shared.page, '#save-plot-svg')).text }))
          .svg;
        assert.ok(svg.texts.filter((t) => /^1958-\d{2}-\d{2}$/.test(t)).length >= 2, svg.texts.join(' | '));
        await assertClean(shared.page, shared.problems);
      } finally {
        await shared.page.close();
      }
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test('demo: times of day plot as clock times and h reads in minutes', { timeout: 2 * TIMEOUT_MS }, async () => {
  const { page, problems } = await openDemo(session, '#estimator=nadaraya-watson&kernel=gaussian&method=scott');
  try {
    // tests/fixtures/files/times.csv: 12:30, 12:45, 13:00:30 as seconds since midnight, centred on a whole second.
    await page.setInputFiles('#file', `${FILES}times.csv`);
    await waitForFit(page, problems, 's.n === 3');
    const seconds = [12.5 * 3600, 12.75 * 3600, 13 * 3600 + 30];
    const x = await page.evaluate(() => Array.from(window.demoState.x));
    const centre = seconds[0] - x[0];
    assert.ok(Number.isInteger(centre) && Math.abs(centre - (seconds[0] + seconds[2]) / 2) <= 0.5, `centre ${centre}`);
    assert.deepEqual(
      x,
      seconds.map((t) => t - centre),
    );
    assert.match(await page.locator('#bandwidth-value').textContent(), /^\d+(\.\d+)? min$/);
    const svg = (await parseSvgs(page, { svg: (await downloadText(page, '#save-plot-svg')).text })).svg;
    assert.ok(svg.texts.filter((t) => /^1[23]:\d{2}$/.test(t)).length >= 2, svg.texts.join(' | '));
    const obs = (await downloadText(page, '#save-observations')).text.trim().split('\n');
    assert.deepEqual(
      obs.slice(1).map((l) => l.split(',')[0]),
      ['12:30', '12:45', '13:00:30'],
    );
    await assertClean(page, problems);
  } finally {
    await page.close();
  }
});

test('demo: 19-Sep-03 dates plot as dates and are fitted on centred seconds', { timeout: 3 * TIMEOUT_MS }, async () => {
  const { page, problems } = await openDemo(session, '#estimator=local-linear&kernel=gaussian&method=scott');
  try {
    // tests/fixtures/files/day-mon-yy.csv: 19-Sep-03, 22-Sep-03, 23-Sep-03 (two-digit years: 2003).
    const seconds = [Date.UTC(2003, 8, 19), Date.UTC(2003, 8, 22), Date.UTC(2003, 8, 23)].map((t) => t / 1000);
    await checkDates(page, problems, 'day-mon-yy.csv', seconds, [1.5, 1.25, 1.75], 2);
    await assertClean(page, problems);
  } finally {
    await page.close();
  }
});

test(
  'demo: the reading panel shows the detected settings and first rows; a setting changed reads the file again; a refusal focuses its setting',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      // A comment line and a header: both reported, the rows previewed.
      await page.setInputFiles('#file', `${FILES}comment.csv`);
      await waitForFit(page, problems, 's.n === 3');
      assert.match(
        await page.locator('#read-detected').textContent(),
        /comma-separated, decimal point, with a header row; no date columns; 2 comment lines skipped/,
      );
      assert.deepEqual(await page.locator('#preview thead th').allTextContents(), ['x', 'y']);
      assert.deepEqual(await page.locator('#preview tbody tr:first-child td').allTextContents(), ['1', '2']);
      assert.equal(await page.locator('#read-header option:checked').textContent(), 'auto: yes');
      // No header: the names row becomes a malformed data row, and the columns are renamed by the reader.
      await page.selectOption('#read-header', 'no');
      await page.waitForFunction(() => window.demoState.reading?.settings.header === false);
      assert.equal(await page.locator('#read-header').inputValue(), 'no');

      // "1,234" could be 1.234 or 1234: refused, the decimal menu named and focused; choosing a comma reads it.
      await page.setInputFiles('#file', `${FILES}ambiguous-decimal.tsv`);
      await page.waitForFunction(() => window.demoState.parseArgument === 'decimal');
      assert.match(
        await page.locator('#data-status').textContent(),
        /Change “decimal mark” under “How the file was read”/,
      );
      assert.equal(await page.evaluate(() => document.activeElement.id), 'read-decimal');
      await page.selectOption('#read-decimal', ',');
      await waitForFit(page, problems, 's.n === 2 && s.x[0] === 1.234 && s.x[1] === 2.5');
      assert.match(await page.locator('#read-detected').textContent(), /tab-separated, decimal comma/);

      // Pasted European decimals: detected, and the preview shows the cells as written.
      await page.click('#paste-box summary');
      await page.fill('#paste', 'x;y\n1,5;2,3\n2,5;3,25\n3;4,5\n');
      await page.click('#use-paste');
      await waitForFit(page, problems, 's.n === 3 && s.x[0] === 1.5 && s.y[1] === 3.25');
      assert.match(
        await page.locator('#read-detected').textContent(),
        /^Read as pasted text, semicolon-separated, decimal comma/,
      );
      assert.equal(await page.locator('#read-encoding').isDisabled(), true);
      // A built-in example hides the panel.
      await page.selectOption('#example', 'sine');
      await waitForFit(page, problems, 's.n === 300');
      assert.equal(await page.locator('#reading').isVisible(), false);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);
