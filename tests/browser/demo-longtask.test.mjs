// Main-thread long tasks while the demo loads a 100,000-row file (issue 20: none over 100 ms), measured by a Chromium
// trace (taskTraceReport, demo-page.mjs), which gives each task's wall time and the time its thread ran. The budget:
// no task over 100 ms in which the main thread ran 50 ms or more, none over 250 ms at all. On this shared 2-core
// machine a task's wall time also counts the time the thread was ready but waited for a core (the compute and parse
// workers, the browser's other processes, other builds hold them): a task over 100 ms that ran under 50 ms is that
// wait, printed with its breakdown, not failed. Traced runs (docs/demo.md): such tasks ran 4–18 ms of 50–81 ms.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  assertClean,
  launch,
  longWorkReport,
  observeLongWork,
  openDemo,
  startTaskTrace,
  taskTraceReport,
  TIMEOUT_MS,
} from './demo-page.mjs';

const ROWS = 100_000;
let session;
before(async () => {
  session = await launch();
});
after(async () => {
  await session?.close();
});

test(
  `demo: loading a ${ROWS.toLocaleString('en')}-row file, no main-thread task over 100 ms of the page's work`,
  { timeout: 4 * TIMEOUT_MS },
  async () => {
    const { page, problems } = await openDemo(session);
    try {
      // The file is made in the page (y = x² / 10⁹ + a sawtooth) before the observers start: building it is the test's
      // work, not the page's.
      await page.evaluate((rows) => {
        const lines = ['x,y'];
        for (let i = 0; i < rows; i++) lines.push(`${i},${(i * i) / 1e9 + (i % 7) / 10}`);
        window.testFile = new File([lines.join('\n')], 'rows.csv', { type: 'text/csv' });
      }, ROWS);
      await observeLongWork(page);
      await startTaskTrace(session.browser, page);
      // Dropped on the page, as a visitor would.
      await page.evaluate(() => {
        const transfer = new DataTransfer();
        transfer.items.add(window.testFile);
        document.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
      });
      await page.waitForFunction(
        (n) =>
          window.demoState.error || window.demoState.parseError || (window.demoState.ready && window.demoState.n === n),
        ROWS,
        { timeout: 3 * TIMEOUT_MS },
      );
      const s = await page.evaluate(() => ({
        parseError: window.demoState.parseError,
        x: [window.demoState.x[0], window.demoState.x[99_999]],
        y: window.demoState.y[99_999],
        draws: window.demoState.drawTimes.map(Math.round),
      }));
      const trace = await taskTraceReport(session.browser);
      const work = await longWorkReport(page);
      assert.equal(s.parseError, undefined);
      assert.deepEqual(s.x, [0, 99_999]);
      assert.equal(s.y, Number(`${(99_999 * 99_999) / 1e9 + (99_999 % 7) / 10}`));
      console.log(
        `# ${ROWS} rows loaded and fitted: ${trace.text}; ${work.text}; draws since the page opened (ms) [${s.draws.join(', ')}]`,
      );
      assert.deepEqual(
        trace.over,
        [],
        `main-thread tasks over 100 ms in which the main thread ran 50 ms or more: ${JSON.stringify(trace.over)}`,
      );
      await assertClean(page, problems);
    } finally {
      await page.close();
    }
  },
);
