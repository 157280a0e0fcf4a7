// The demo's rough edges a new user met (issue 32, "Demo"), in Debian's Chromium under the demo's CSP: large pasted
// text, stale messages, the columns picked by default, dates read by a guess, long work without a sign, and the low
// items (page terms in warnings, binary files, inputs out of range, stale notes, the phone's order, keyboard focus,
// the derivative's export, axe-core at 1366 × 800 and 390 × 844).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertClean,
  launch,
  openDemo,
  startTaskTrace,
  taskTraceReport,
  TIMEOUT_MS,
  waitForFit,
} from './demo-page.mjs';

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
    const { page, problems } = await openDemo(session);
    try {
      await page.click('#paste-box summary');
      // 50 MB on one line: refused by its line number, and the box never holds it.
      await copy(page, () => '7'.repeat(50e6));
      await startTaskTrace(session.browser, page);
      await paste(page);
      await page.waitForFunction(() => window.demoState.parseError !== undefined);
      const refused = await taskTraceReport(session.browser);
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

      // 3.3 MB pasted: read at once (150,000 rows). Then three changes, each of which writes the address bar
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
      for (const kernel of ['epanechnikov', 'gaussian']) {
        await page.selectOption('#kernel', kernel);
        await waitForFit(page, problems, 's.fit.kernel === a && s.hSource.kernel === a', kernel);
      }
      await page.click('#band');
      await page.waitForFunction(() => /band=off/.test(location.hash));
      const changes = await taskTraceReport(session.browser);
      console.log(`# three changes after a 3.3 MB paste: ${changes.text}`);
      assert.deepEqual(changes.over, [], `long main-thread tasks: ${JSON.stringify(changes.over)}`);
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);
