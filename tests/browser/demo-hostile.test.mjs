// The demo page against hostile input (issue 8, item 7), in Debian's Chromium under the demo's CSP: markup in column
// names and cells stays text (on the page and in exported SVG), exported CSV is safe from spreadsheet formula
// injection while numbers stay numbers, and a file over 200 MB, a line over 10 MB or thousands of columns get a clear
// message instead of a frozen tab. Plus a scan of the demo's sources for the APIs that parse strings as HTML.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { csvField } from '../../web/demo/export.js';
import { assertClean, downloadText, launch, openDemo, parseSvgs, TIMEOUT_MS, waitForFit } from './demo-page.mjs';

const DEMO = fileURLToPath(new URL('../../web/demo/', import.meta.url));
let session;
before(async () => {
  session = await launch();
});
after(async () => {
  await session?.close();
});

/** The fields of one CSV line (RFC 4180 quoting). */
function csvFields(line) {
  return [...line.matchAll(/(?:^|,)("(?:[^"]|"")*"|[^,]*)/g)].map(([, f]) =>
    f.startsWith('"') ? f.slice(1, -1).replace(/""/g, '"') : f,
  );
}

/** Elements that injected markup would have made, and the page's scripts (main.js only). */
const injected = (page) =>
  page.evaluate(() => ({
    markup: [...document.querySelectorAll('img, iframe, object, embed, svg, [onerror], [onload], [onclick]')].map((e) =>
      e.outerHTML.slice(0, 80),
    ),
    scripts: [...document.scripts].map((s) => s.getAttribute('src')),
  }));

/**
 * Hands the File that `make` builds in the page (no disk, no DevTools transfer) to the demo by a drop on the page.
 * The page function is put together here: under the demo's CSP the page may not compile strings itself.
 */
async function dropFile(page, make) {
  await page.evaluate(
    new Function(`
    const transfer = new DataTransfer();
    transfer.items.add((${make})());
    document.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));`),
  );
}

test('source scan: no innerHTML, outerHTML, insertAdjacentHTML or document.write in the demo; no inline script, style or handler in its page', () => {
  for (const name of readdirSync(DEMO).filter((f) => f.endsWith('.js'))) {
    const source = readFileSync(DEMO + name, 'utf8');
    assert.doesNotMatch(
      source,
      /\.(innerHTML|outerHTML)\s*[+]?=|insertAdjacentHTML|document\.write|createContextualFragment/,
      name,
    );
  }
  const html = readFileSync(DEMO + 'index.html', 'utf8');
  assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'an inline <script>');
  assert.doesNotMatch(html, /<style|\sstyle=|\son[a-z]+=/i, 'an inline style or event handler');
});

test('csvField: text a spreadsheet would run as a formula gets a leading quote; numbers, negative ones too, stay numbers', () => {
  const cases = [
    ['=1+1', "'=1+1"],
    ['+1+cmd', "'+1+cmd"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=1', "'\t=1"],
    ['\r=1', `"'\r=1"`],
    ['-', "'-"],
    ['=HYPERLINK("http://x","y")', `"'=HYPERLINK(""http://x"",""y"")"`],
    ['-1', '-1'],
    ['-1.5e-7', '-1.5e-7'],
    ['+4', '+4'],
    ['1e+21', '1e+21'],
    ['-Infinity', '-Infinity'],
    ['NaN', 'NaN'],
    [-0.25, '-0.25'],
    ['x', 'x'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['', ''],
  ];
  for (const [value, want] of cases) assert.equal(csvField(value), want, JSON.stringify(value));
});

test(
  'demo: markup in column names and cells is shown as text, never parsed; exported CSV and SVG are neutralised',
  { timeout: 3 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      const before = await injected(page);
      // x is named by a formula; the middle column holds markup in every cell; y is named by markup and one y cell is markup.
      const xName = '=HYPERLINK("http://evil.invalid","x")';
      const yName = '<img src=x onerror=alert(1)>';
      const rows = Array.from({ length: 40 }, (_, i) => {
        const x = -2 + i / 10; // negative x: the exported grid holds negative numbers
        const y = i === 7 ? '<img src=x onerror=alert(2)>' : (Math.sin(x) + 0.1 * Math.cos(9 * i)).toFixed(4);
        return `${x.toFixed(2)},<script>alert(3)</script><b onmouseover=alert(4)>bold</b>,${y}`;
      });
      const csv = [`"${xName.replace(/"/g, '""')}",@cmd|' /C calc'!A0,${yName}`, ...rows].join('\n');
      await page.click('#paste-box summary');
      await page.fill('#paste', csv);
      await page.click('#use-paste');
      await waitForFit(page, problems, 's.n === 39 && s.names[0] === a', xName);

      // The names are the options' text; the markup cell made row 9 (line 9) malformed, named by y's name as text.
      const options = await page.locator('#ycol option').allTextContents();
      assert.deepEqual(options, [xName, "@cmd|' /C calc'!A0", yName]);
      assert.match(await page.textContent('#malformed'), /line 9: “<img src=x onerror=alert\(1\)>” is not a number/);
      assert.match(
        await page.textContent('#data-status'),
        /\(=HYPERLINK\("http:\/\/evil\.invalid","x"\), <img src=x onerror=alert\(1\)>\)/,
      );

      // The fit as CSV: the formula in the header is quoted text; every other field is a number, negative ones unquoted.
      const { text } = await downloadText(page, '#save-fit');
      const lines = text.trim().split('\n');
      assert.deepEqual(csvFields(lines[0]), [`'${xName}`, 'fit', 'lower_0.95', 'upper_0.95', 'effective_points']);
      assert.equal(lines[0].slice(0, 3), `"'=`);
      const queries = await page.evaluate(() => Array.from(window.demoState.fit.queries));
      assert.equal(lines.length, queries.length + 1);
      assert.ok(queries[0] < 0);
      lines.slice(1).forEach((line, i) => {
        const fields = line.split(',');
        assert.equal(fields.length, 5, line);
        for (const f of fields) assert.match(f, /^-?\d+(\.\d+)?(e[+-]\d+)?$/, `line ${i + 2}: ${line}`);
        // The grid's x to the digits it resolves: within 2⁻²⁶ of its range (export.js, resultText).
        assert.ok(Math.abs(Number(fields[0]) - queries[i]) <= (queries.at(-1) - queries[0]) * 2 ** -26, line);
      });

      // The plot as SVG: the names are the axis titles' text, escaped in the file.
      const svg = await downloadText(page, '#save-plot-svg');
      assert.doesNotMatch(svg.text, /<img|<script/);
      const { plot } = await parseSvgs(page, { plot: svg.text });
      assert.equal(plot.error, null);
      assert.deepEqual(plot.foreign, []);
      assert.ok(plot.texts.includes(xName) && plot.texts.includes(yName), plot.texts);

      // The markup column as y: a text column, named as text (its name as text too), and still nothing is parsed.
      await page.selectOption('#ycol', '1');
      await page.waitForFunction(() =>
        /“@cmd\|' \/C calc'!A0” holds text, not numbers: pick a column of numbers for y\.$/.test(
          document.getElementById('data-status').textContent,
        ),
      );
      assert.match(await page.textContent('#malformed'), /line 2: “@cmd\|' \/C calc'!A0” is not a number/);

      // Nothing was injected (an injected onerror would also be stopped by the CSP, so the DOM is what is checked).
      assert.deepEqual(await injected(page), before);
      await assertClean(page, problems); // includes: no dialog opened
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: a file over 200 MB is refused before it is read, with a message; the page stays as it was',
  { timeout: 2 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      await page.evaluate(() => {
        window.progressShown = false;
        const bar = document.getElementById('progress');
        new MutationObserver(() => {
          if (!bar.hidden) window.progressShown = true;
        }).observe(bar, { attributes: true });
      });
      // 201 × 1 MiB of valid rows (211 MB): Blob parts, made in the page, never written to disk.
      await dropFile(page, () => {
        const mib = new TextEncoder().encode('0.25,1.5\n'.repeat(116_508).padEnd(1 << 20, '\n'));
        return new File(['x,y\n', ...Array(201).fill(mib)], 'huge.csv', { type: 'text/csv' });
      });
      await page.waitForFunction(() => window.demoState.parseError !== undefined);
      const { message, n, progressShown } = await page.evaluate(() => ({
        message: window.demoState.parseError,
        n: window.demoState.n,
        progressShown: window.progressShown,
      }));
      assert.match(
        message,
        /^huge\.csv is 211 MB; the demo reads files of up to 200 MB, since it keeps every row in this tab\./,
      );
      assert.equal(await page.textContent('#data-status'), message);
      assert.ok(await page.locator('#data-status.error').count(), 'the message is not shown as an error');
      assert.equal(progressShown, false, 'the parser started reading');
      assert.equal(n, 300);
      await waitForFit(page, problems, 's.n === 300');
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);

test(
  'demo: a line over 10 MB, or a header of thousands of fields, is reported by the parse worker by line number',
  { timeout: 2 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      // Lines 1–3 end in CRLF, CR and LF (each counts once); line 4 holds 11 MB of digits.
      await dropFile(
        page,
        () => new File(['x,y\r\n0,1\r1,2\n', new Uint8Array(11e6).fill(0x35), '\n2,3\n'], 'long-line.csv'),
      );
      await page.waitForFunction(() => window.demoState.parseError !== undefined);
      assert.equal(
        await page.evaluate(() => window.demoState.parseError),
        'Could not read long-line.csv: line 4 is longer than 10 MB, which no table row should be (is this the right file, with line breaks?)',
      );
      assert.equal(await page.locator('#progress').isHidden(), true);

      // 5,000 columns in the header: refused, and the column menus are untouched.
      await page.click('#paste-box summary');
      await page.fill(
        '#paste',
        [Array.from({ length: 5000 }, (_, i) => `c${i}`).join(','), Array(5000).fill('1').join(',')].join('\n'),
      );
      await page.click('#use-paste');
      await page.waitForFunction(() => /columns/.test(window.demoState.parseError ?? ''));
      assert.equal(
        await page.evaluate(() => window.demoState.parseError),
        'Could not read the pasted text: line 1 has 5,000 fields; the demo reads at most 1000 columns',
      );
      assert.equal(await page.locator('#ycol option').count(), 0);

      // A normal file afterwards is read as usual.
      await dropFile(
        page,
        () => new File(['t,v\n', ...Array.from({ length: 50 }, (_, i) => `${i},${Math.sin(i / 5)}\n`)], 'fine.csv'),
      );
      await waitForFit(page, problems, 's.n === 50 && s.names[0] === "t"');
      assert.equal(await page.evaluate(() => window.demoState.parseError), undefined);
      assert.equal(await page.locator('#data-status.error').count(), 0);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);
