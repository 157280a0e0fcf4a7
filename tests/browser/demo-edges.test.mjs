// The demo's rough edges a new user met (issue 32, "Demo"), in Debian's Chromium under the demo's CSP: large pasted
// text, stale messages, the columns picked by default, dates read by a guess, long work without a sign, and the low
// items (page terms in warnings, binary files, inputs out of range, stale notes, the phone's order, keyboard focus,
// the derivative's export, axe-core at 1366 × 800 and 390 × 844).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { init } from '../../web/src/index.js';
import {
  assertClean,
  downloadText,
  launch,
  openDemo,
  parseSvgs,
  startTaskTrace,
  taskTraceReport,
  TIMEOUT_MS,
  waitForFit,
} from './demo-page.mjs';

// The trace's budget (demo-page.mjs) on the page's own work only: no task over 100 ms in which the main thread ran
// 50 ms or more. A task long only by waiting for a core (this 2-core machine is shared) is not the page's: without
// the fixes these ran for seconds of main thread (a 50 MB box) or 0.2-0.5 s (the history entry of a 3 MB box).
const PAGE_WORK = { hardMs: Infinity };
// The issue's desktop size (the phone's, 390 × 844, is the last tests').
const DESKTOP = { pageOptions: { viewport: { width: 1366, height: 800 } } };
let session;
before(async () => {
  session = await launch();
});
after(async () => {
  await session?.close();
});

/** Puts the text `make()` builds on a clipboard of the test's own (building it is the test's work, not the page's). */
const copy = (page, make) =>
  page.evaluate(
    new Function(`
    window.testClipboard = new DataTransfer();
    window.testClipboard.setData('text/plain', (${make})());`),
  );

/**
 * A paste into the text box as a visitor makes one: the paste event carries the clipboard's text; a script's event
 * inserts nothing, so what the browser does unless the page prevents it (the text goes into the box) is done here,
 * and then “Use this text” is clicked, as the visitor would once the text is in the box.
 */
async function paste(page) {
  const intoBox = await page.evaluate(() => {
    const box = document.getElementById('paste');
    box.focus();
    const clipboardData = window.testClipboard;
    if (!box.dispatchEvent(new ClipboardEvent('paste', { clipboardData, bubbles: true, cancelable: true })))
      return false;
    box.value = clipboardData.getData('text/plain');
    box.dispatchEvent(new Event('input', { bubbles: true }));
    return true;
  });
  if (intoBox) await page.click('#use-paste');
}

test(
  'demo: large pasted text neither freezes the page nor slows every later change',
  { timeout: 6 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '', DESKTOP);
    try {
      await page.click('#paste-box summary');
      // 50 MB on one line: refused by its line number, and the box never holds it.
      await copy(page, () => '7'.repeat(50e6));
      await startTaskTrace(session.browser, page);
      await paste(page);
      await page.waitForFunction(() => window.demoState.parseError !== undefined);
      const refused = await taskTraceReport(session.browser, PAGE_WORK);
      console.log(`# a 50 MB line pasted: ${refused.text}`);
      assert.equal(
        await page.evaluate(() => window.demoState.parseError),
        'Could not read the pasted text: line 1 is longer than 10 MB, which no table row should be (is this the ' +
          'right file, with line breaks?)',
      );
      assert.equal(await page.inputValue('#paste'), '');
      assert.match(
        await page.textContent('#paste-note'),
        /^50,000,000 characters pasted: read at once, not put in the box/,
      );
      assert.deepEqual(refused.over, [], `long main-thread tasks: ${JSON.stringify(refused.over)}`);

      // 3.3 MB pasted: read at once (150,000 rows). Then two changes, each of which writes the address bar
      // (history.replaceState): Chromium copied a text box's contents into the history entry each time (0.2-0.5 s
      // of main thread a change with 3 MB in the box) until the box opted out.
      await copy(page, () => {
        const lines = ['t,v'];
        for (let i = 0; i < 150_000; i++) lines.push(`${(i / 1000).toFixed(6)},${Math.cos(i / 1000).toFixed(8)}`);
        return lines.join('\n');
      });
      await paste(page);
      await waitForFit(page, problems, 's.n === 150000 && s.names[0] === "t"', null, { timeout: 3 * TIMEOUT_MS });
      assert.match(await page.textContent('#paste-note'), /^3,\d{3},\d{3} characters pasted/);
      assert.equal(await page.inputValue('#paste'), '');
      await startTaskTrace(session.browser, page);
      await page.selectOption('#kernel', 'epanechnikov');
      await waitForFit(page, problems, 's.fit.kernel === a && s.hSource.kernel === a', 'epanechnikov');
      await page.click('#band');
      await page.waitForFunction(() => /band=off/.test(location.hash));
      const changes = await taskTraceReport(session.browser, PAGE_WORK);
      console.log(`# two changes after a 3.3 MB paste: ${changes.text}`);
      assert.deepEqual(changes.over, [], `long main-thread tasks: ${JSON.stringify(changes.over)}`);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

/** Drops a file named `name` holding `content` (text, or an array of bytes) on the page, as a visitor would. */
const drop = (page, name, content) =>
  page.evaluate(
    ([name, content]) => {
      const transfer = new DataTransfer();
      transfer.items.add(new File([typeof content === 'string' ? content : Uint8Array.from(content)], name));
      document.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    },
    [name, content],
  );

/** The data panel's message once the page has answered (an error after a failed load, or the data's status). */
async function dataMessage(page, expected) {
  await page.waitForFunction(
    (source) => new RegExp(source).test(document.getElementById('data-status').textContent),
    expected.source,
  );
  return page.textContent('#data-status');
}

const autoTexts = (page) =>
  page.evaluate(() =>
    ['read-encoding', 'read-delimiter', 'read-decimal', 'read-header', 'read-date-order'].map(
      (id) => document.getElementById(id).options[0].textContent,
    ),
  );

test(
  'demo: each file is judged on its own (no stale rows or settings), by usable columns, and in the page’s words',
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '', DESKTOP);
    try {
      // Semicolons and decimal commas, one malformed row.
      await drop(page, 'first.csv', 'a;b\n1,5;2\n2,5;x\n3,5;4\n4,5;5\n');
      await waitForFit(page, problems, 's.n === 3 && s.names[0] === "a"');
      assert.match(await page.textContent('#malformed'), /line 3/);
      assert.deepEqual((await autoTexts(page)).slice(1, 3), ['auto: semicolon', 'auto: comma']);

      // A refusal: no rows of first.csv listed, no setting of first.csv shown as detected, the menu named as the page
      // names it (not the reader's option).
      await drop(page, 'ambiguous.tsv', 'x\ty\n1,234\t1\n2,500\t2\n');
      const refused = await dataMessage(page, /^Could not read ambiguous\.tsv/);
      assert.match(
        refused,
        /a thousands separator\. Change “decimal mark” under “How the file was read” to comma \(1,5\) or point \(1\.5\)\.$/,
      );
      assert.doesNotMatch(refused, /`/);
      assert.equal(await page.textContent('#malformed'), '');
      assert.deepEqual(await autoTexts(page), ['auto', 'auto', 'auto', 'auto', 'auto']);

      // A text column first and one column of numbers: x is not the text column, and x = y is refused by name.
      await drop(page, 'prices.csv', 'name,city,price\nAlice,Paris,3\nBob,Rome,4\nCarol,Oslo,5\n');
      assert.equal(
        await dataMessage(page, /^prices\.csv/),
        'prices.csv (3 rows): a fit needs two columns of numbers (an x and a y), and “price” is the only one ' +
          '(“name”, “city” hold text).',
      );
      assert.equal(await page.evaluate(() => window.demoState.n), undefined);
      assert.equal(await page.inputValue('#x1'), '2');

      // Text first, then two columns of numbers: they are x and y.
      await drop(page, 'people.csv', 'name,age,height\nAlice,30,1.61\nBob,41,1.82\nCarol,25,1.70\nDan,35,1.75\n');
      await waitForFit(page, problems, 's.n === 4 && s.names[0] === "age" && s.names[1] === "height"');
      // The text column picked as x: named as text, not listed row by row as "not a number".
      await page.selectOption('#x1', '0');
      assert.equal(
        await dataMessage(page, /holds text/),
        'people.csv (4 rows): “name” holds text, not numbers: pick a column of numbers, dates or times for x.',
      );

      // A header and no rows: said so, with no "rows listed".
      await drop(page, 'header.csv', 'x,y\n');
      assert.equal(
        await dataMessage(page, /^header\.csv/),
        'header.csv (0 rows): there are no rows under the header (“x”, “y”), so nothing to fit.',
      );

      // Not text: a workbook by its signature, random bytes by their control characters (no malformed rows).
      await drop(page, 'book.xlsx', [0x50, 0x4b, 0x03, 0x04, 20, 0, 6, 0, 8, 0, ...Array(200).fill(65)]);
      assert.match(
        await dataMessage(page, /^Could not read book\.xlsx/),
        /^Could not read book\.xlsx: it is not a text file: its first bytes are those of a ZIP archive \(an Excel \.xlsx or OpenDocument \.ods workbook is one\)\. Open a CSV or TSV file instead/,
      );
      let seed = 7;
      const noise = Array.from({ length: 4096 }, () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) >> 23);
      await drop(page, 'data.bin', noise);
      assert.match(await dataMessage(page, /^Could not read data\.bin/), /it is not a text file/);
      assert.equal(await page.textContent('#malformed'), '');

      // UTF-8 with a byte-order mark, named in words.
      await drop(page, 'bom.csv', [0xef, 0xbb, 0xbf, ...Buffer.from('x,y\n1,2\n3,4\n5,7\n')]);
      await waitForFit(page, problems, 's.n === 3');
      assert.match(await page.textContent('#read-detected'), /^Read as UTF-8 with a byte-order mark, comma-separated/);
      assert.equal((await autoTexts(page))[0], 'auto: UTF-8 with a byte-order mark');
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: dates read by a guess say so at the plot; blocked CV and warnings speak in days',
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '', DESKTOP);
    try {
      // 01/03/2024 … 12/03/2024: no day above 12, so the order is a guess (day first).
      const rows = Array.from({ length: 12 }, (_, i) => `${String(i + 1).padStart(2, '0')}/03/2024,${(i % 3) + i / 4}`);
      await page.click('#paste-box summary');
      await copy(page, new Function(`return () => ${JSON.stringify(['date,v', ...rows].join('\n'))}`)());
      await paste(page);
      await waitForFit(page, problems, 's.n === 12 && s.names[0] === "date"');
      assert.equal(await page.isVisible('#date-note'), true);
      assert.equal(
        await page.textContent('#date-note-text'),
        'The dates of “date” were read day first, from 1 March 2024 to 12 March 2024: a guess, since no day above 12 ' +
          'was seen.',
      );
      assert.equal(await page.textContent('#date-order-flip'), 'Read them month first');
      // The note sits at the plot, where the dates are drawn, not only in the reading panel.
      const [plot, note] = await Promise.all(['#plot', '#date-note'].map((s) => page.locator(s).boundingBox()));
      assert.ok(note.y >= plot.y + plot.height && note.y < plot.y + plot.height + 60, JSON.stringify({ plot, note }));

      // "leave out ±" in days, as h is written: 2 days are 172,800 s to the library.
      assert.equal(await page.textContent('#exclude-unit'), 'in days');
      await page.fill('#exclude', '2');
      await page.press('#exclude', 'Enter');
      await waitForFit(page, problems, 's.selection?.exclude === 172800');
      assert.match(await page.textContent('#selection-caption'), /within ±2 days left out/);
      assert.match(page.url(), /exclude=2(&|$)/);

      // h far below the spacing of a day: the warning gives both as durations and names the page's control.
      await page.locator('#bandwidth').evaluate((slider) => {
        slider.value = slider.min;
        slider.dispatchEvent(new Event('input', { bubbles: true }));
        slider.dispatchEvent(new Event('change', { bubbles: true }));
      });
      await waitForFit(
        page,
        problems,
        's.hSource.by === "hand" && s.fit.warnings.some((w) => w.code === a)',
        'interpolating',
      );
      const warning = await page.textContent('#fit-warnings [data-code="interpolating"]');
      assert.match(warning, /h = [\d.]+ min is below the median spacing of “date”, 24 hours/);
      assert.match(warning, /choose h by blocked CV \(“leave out ±”, beside “Choose for me”/);
      assert.doesNotMatch(warning, /exclude|`|86[,.]?400|\d{5}/);

      // Read the other way: 3 January to 3 December, no longer a guess.
      await page.click('#date-order-flip');
      await waitForFit(page, problems, 's.n === 12 && s.x[11] - s.x[0] > 300 * 86400');
      assert.equal(await page.evaluate(() => window.demoState.reading.settings.dateOrder), 'month-first');
      assert.equal(await page.isVisible('#date-note'), false);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  "demo: a skewed x whose CV choice sits at its sparse tail says so, in the page's controls",
  { timeout: 2 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '', DESKTOP);
    try {
      // 500 lognormal x (a long right tail), y = log x + noise: CV is infinite below the h the tail needs.
      const make = () => {
        let a = 2005;
        const rand = () => {
          a = (a + 0x6d2b79f5) >>> 0;
          let t = a;
          t = Math.imul(t ^ (t >>> 15), t | 1);
          t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
          return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
        };
        const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
        const rows = ['income,spend'];
        for (let i = 0; i < 500; i++) {
          const x = Math.exp(normal());
          rows.push(`${x.toFixed(5)},${(Math.log(x) + 0.3 * normal()).toFixed(5)}`);
        }
        return rows.join('\n');
      };
      await page.click('#paste-box summary');
      await copy(page, make);
      await paste(page);
      await waitForFit(
        page,
        problems,
        's.n === 500 && (s.selection?.warnings ?? []).some((w) => w.code === a)',
        'sparse-points',
      );
      const warning = await page.textContent('#fit-warnings [data-code="sparse-points"]');
      assert.match(warning, /infinite for bandwidths just below the chosen/);
      assert.match(warning, /Estimator “Nadaraya–Watson” or “loess”, or Bandwidth “span \(nearest neighbours\)”/);
      assert.doesNotMatch(warning, /loess\(x, y|estimator: '|`/);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

/** Records every state of the busy sign at the plot (shown or not, its text and progress) in window.busySeen. */
const watchBusySign = (page) =>
  page.evaluate(() => {
    window.busySeen = [];
    const sign = document.getElementById('busy');
    const record = () => {
      const value = document.getElementById('busy-progress').getAttribute('value');
      window.busySeen.push({
        shown: !sign.hidden,
        text: document.getElementById('busy-text').textContent,
        progress: value === null ? null : Number(value),
        busy: document.getElementById('plot-box').getAttribute('aria-busy'),
      });
    };
    new MutationObserver(record).observe(sign, {
      attributes: true,
      subtree: true,
      childList: true,
      characterData: true,
    });
  });

test(
  'demo: a busy sign at the plot while a fit or a choice of h runs, with the search’s progress',
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '', DESKTOP);
    try {
      // A span fit of 4,000 points with its derivative and a local σ(x) band (the band's own bandwidth search takes
      // about a second here; the span fit alone now takes well under the sign's 250 ms): the sign says which stage
      // runs (the library reports no measure of how far a single fit is).
      await page.fill('#example-n', '4000');
      await page.click('#generate');
      await waitForFit(page, problems, 's.n === 4000');
      assert.equal(await page.isVisible('#busy'), false);
      await watchBusySign(page);
      await page.check('#derivative');
      await page.selectOption('#variance', 'local');
      await page.selectOption('#bandwidth-kind', 'span');
      await waitForFit(page, problems, 's.fit.spanBandwidth && s.fit.slope');
      const fitting = await page.evaluate(() => window.busySeen.filter((s) => s.shown).map((s) => s.text));
      assert.ok(
        fitting.some((t) =>
          /^Fitting: (each query’s nearest points, exactly|the band(, with a local σ\(x\))?|the derivative)…/.test(t),
        ),
        JSON.stringify(fitting),
      );
      assert.equal(await page.isVisible('#busy'), false, 'the sign stayed after the fit');

      // Blocked CV on 5,000 points (about a second here; at 1,500 the windowed criterion finishes it within the sign's
      // 250 ms): the sign names it and counts the evaluations.
      await page.selectOption('#bandwidth-kind', 'h');
      await page.fill('#example-n', '5000');
      await page.click('#generate');
      await waitForFit(page, problems, 's.n === 5000');
      await page.evaluate(() => window.busySeen.splice(0));
      await page.fill('#exclude', '0.3');
      await page.press('#exclude', 'Enter');
      await waitForFit(page, problems, 's.selection?.exclude === 0.3');
      const choosing = await page.evaluate(() => window.busySeen.filter((s) => s.shown));
      assert.ok(
        choosing.some((s) => /^Choosing h by blocked cross-validation… evaluation \d+ of \d+/.test(s.text)),
        JSON.stringify(choosing),
      );
      const fractions = choosing.map((s) => s.progress).filter((p) => p !== null);
      assert.ok(
        fractions.some((p) => p > 0 && p < 1),
        JSON.stringify(fractions),
      );
      assert.ok(
        fractions.every((p, i) => i === 0 || p >= fractions[i - 1]),
        `progress went back: ${fractions}`,
      );
      assert.equal(await page.isVisible('#busy'), false, 'the sign stayed after the choice');
      assert.equal(await page.getAttribute('#plot-box', 'aria-busy'), 'false');
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: fields say what they used, stale notes go, the plot takes the keyboard, the derivative is saved',
  { timeout: 5 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session, '#data=none', DESKTOP);
    try {
      // A link without its data: the note stays only while the example it stands for is shown.
      assert.equal(await page.isVisible('#link-note'), true);
      await page.click('#generate');
      await waitForFit(page, problems, 's.linkNote === null');
      assert.equal(await page.isVisible('#link-note'), false);
      // The status line says why the fit ran as it did in the library's own words: its plan for this call.
      const ka = await init({ threads: 1 });
      const { method, reason } = ka.plan('regression', { n: 300, dim: 1, kernel: 'gaussian' });
      assert.equal(method, 'exact');
      assert.ok(
        (await page.textContent('#fit-status')).includes(`exactly (the plan: ${reason.replace(/^exact: /, '')}):`),
        await page.textContent('#fit-status'),
      );
      // The search's own plan (rule 'cv'), on the 300 points it searched.
      const search = ka.plan('regression', { n: 300, dim: 1, kernel: 'gaussian', rule: 'cv' });
      assert.ok(
        (await page.textContent('#selection-caption')).includes(
          `computed exactly (the plan: ${search.reason.replace(/^exact: /, '')}).`,
        ),
        await page.textContent('#selection-caption'),
      );

      // The plot is in the keyboard's order after the last setting, and its arrows step the inspected query.
      await page.focus('#level');
      await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => document.activeElement.id), 'plot');
      await page.keyboard.press('ArrowRight');
      await page.waitForFunction(() => window.demoState.hoverRow === 21);
      await page.keyboard.press('End');
      await page.waitForFunction(() => window.demoState.hoverRow === 39);
      assert.match(await page.textContent('#hover-status'), /^query \d/);

      // The derivative has its own save buttons.
      await page.check('#derivative');
      await waitForFit(page, problems, 'Boolean(s.fit.slope)');
      const svg = await downloadText(page, '#save-slope-svg');
      assert.equal(svg.name, 'kernel-fit-derivative.svg');
      const { slope } = await parseSvgs(page, { slope: svg.text });
      assert.equal(slope.error, null);
      assert.ok(slope.texts.includes('Derivative of the fit of y on x (the “Sine + noise” example)'), slope.texts);
      assert.ok(slope.texts.includes('d y / d x'), slope.texts);
      assert.ok(slope.paths.length >= 3);

      // Out of range: written back, and said.
      await page.selectOption('#estimator', 'lowess');
      await waitForFit(page, problems, 's.fit.estimator === "lowess"');
      for (const [entered, used] of [
        ['50', 10],
        ['-5', 0],
      ]) {
        await page.fill('#iterations', entered);
        await page.press('#iterations', 'Tab');
        await waitForFit(page, problems, 's.fit.iterations === a', used);
        assert.equal(await page.inputValue('#iterations'), String(used));
        assert.equal(
          await page.textContent('#iterations-note'),
          `“robustness iterations” takes 0 to 10 (${entered} was entered): ${used} is used.`,
        );
      }
      await page.fill('#iterations', '2');
      await page.press('#iterations', 'Tab');
      await waitForFit(page, problems, 's.fit.iterations === 2');
      assert.equal(await page.isVisible('#iterations-note'), false);

      // A refusal to save is about the fit it was asked for: gone once another fit is shown. (LOWESS runs on every
      // point, so its fit at the observations is saved at any size; a Gaussian span fit of 60,000 points runs on a
      // sample of 4,000, so its is refused.)
      await page.fill('#example-n', '60000');
      await page.click('#generate');
      await waitForFit(page, problems, 's.n === 60000 && s.fit.estimator === "lowess" && s.fit.n === 60000');
      await page.selectOption('#estimator', 'local-linear');
      await waitForFit(page, problems, 's.fit.estimator === "local-linear"');
      await page.selectOption('#bandwidth-kind', 'span');
      await waitForFit(page, problems, 'Boolean(s.fit.spanBandwidth)');
      await page.click('#save-observations');
      await page.waitForFunction(() => /^Not saved: /.test(document.getElementById('save-status').textContent));
      await page.selectOption('#bandwidth-kind', 'h');
      await waitForFit(page, problems, '!s.fit.spanBandwidth');
      assert.equal(await page.textContent('#save-status'), '');

      await page.fill('#exclude', '-5');
      await page.press('#exclude', 'Tab');
      assert.equal(
        await page.textContent('#exclude-note'),
        '“leave out ±” takes 0 or more (-5 was entered): 0 is used.',
      );
      await page.fill('#example-n', '5e6');
      await page.press('#example-n', 'Tab');
      assert.equal(await page.inputValue('#example-n'), '1000000');
      assert.equal(
        await page.textContent('#example-n-note'),
        '“points” takes 2 to 1,000,000 (5,000,000 was entered): 1,000,000 is used.',
      );
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
    `demo at ${width} × ${height}: axe-core finds no violation, with a file read and the derivative shown` +
      (width < 640 ? '; the data panel follows the plot' : ''),
    { timeout: 3 * TIMEOUT_MS },
    async () => {
      const phone = width < 640;
      const { page, problems } = await openDemo(session, '', {
        pageOptions: { viewport: { width, height }, ...(phone ? { hasTouch: true, isMobile: true } : {}) },
      });
      try {
        assert.deepEqual(await axeViolations(page), [], 'as the page opens');
        if (phone) {
          // After the fit comes the data (a visitor's own file one panel down), then the settings.
          const box = (selector) => page.locator(selector).evaluate((e) => e.getBoundingClientRect().toJSON());
          const [fit, data, controls] = await Promise.all(['.fit-panel', '.data-panel', '#controls'].map(box));
          assert.ok(fit.bottom <= data.top && data.bottom <= controls.top, JSON.stringify({ fit, data, controls }));
        }
        // A file read (the reading panel, its preview, a note at the plot), the derivative and a warning shown.
        const rows = Array.from({ length: 12 }, (_, i) => `${String(i + 1).padStart(2, '0')}/03/2024,${i % 3},x${i}`);
        await page.click('#paste-box summary');
        await copy(page, new Function(`return () => ${JSON.stringify(['date,v,label', ...rows].join('\n'))}`)());
        await paste(page);
        await waitForFit(page, problems, 's.n === 12');
        await page.check('#derivative');
        await waitForFit(page, problems, 'Boolean(s.fit.slope)');
        assert.equal(await page.isVisible('#date-note'), true);
        assert.deepEqual(await axeViolations(page), [], 'with a file read');
        await assertClean(page, problems);
      } finally {
        await page.close();
      }
    },
  );
}
