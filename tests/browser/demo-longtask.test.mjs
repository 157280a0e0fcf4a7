// Main-thread long tasks while the demo loads a 100,000-row file (issue 20's stretch goal: none over 100 ms). Reported,
// not asserted: a task's length on this shared 2-core machine depends on the load (docs/demo.md, "Responsiveness").
// What is asserted is that the file loads with the right numbers and that the page's own scripts were observed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { assertClean, launch, openDemo, TIMEOUT_MS } from './demo-page.mjs';

const ROWS = 100_000;
let session;
before(async () => { session = await launch(); });
after(async () => { await session?.close(); });

test(`demo: loading a ${ROWS.toLocaleString('en')}-row file, with the main thread's long tasks and long frames recorded`, { timeout: 4 * TIMEOUT_MS }, async () => {
  const { page, problems } = await openDemo(session);
  try {
    await page.evaluate(() => {
      window.longTasks = [];
      new PerformanceObserver((list) => window.longTasks.push(...list.getEntries().map((e) => Math.round(e.duration))))
        .observe({ type: 'longtask' });
      window.longFrames = [];
      new PerformanceObserver((list) => window.longFrames.push(...list.getEntries().map((e) => ({
        duration: Math.round(e.duration),
        scripts: e.scripts.map((s) => `${s.invoker} ${Math.round(s.duration)}`),
      })))).observe({ type: 'long-animation-frame' });
    });
    // The file is made in the page (y = x² / 10⁹ + a sawtooth) and dropped on it, as a visitor would.
    await page.evaluate((rows) => {
      const lines = ['x,y'];
      for (let i = 0; i < rows; i++) lines.push(`${i},${(i * i) / 1e9 + (i % 7) / 10}`);
      const transfer = new DataTransfer();
      transfer.items.add(new File([lines.join('\n')], 'rows.csv', { type: 'text/csv' }));
      document.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }));
    }, ROWS);
    await page.waitForFunction((n) => window.demoState.error || window.demoState.parseError ||
      (window.demoState.ready && window.demoState.n === n), ROWS, { timeout: 3 * TIMEOUT_MS });
    const s = await page.evaluate(() => ({
      parseError: window.demoState.parseError, x: [window.demoState.x[0], window.demoState.x[99_999]],
      y: window.demoState.y[99_999], longTasks: window.longTasks, longFrames: window.longFrames,
    }));
    assert.equal(s.parseError, undefined);
    assert.deepEqual(s.x, [0, 99_999]);
    assert.equal(s.y, Number(`${(99_999 * 99_999) / 1e9 + (99_999 % 7) / 10}`));
    console.log(`# ${ROWS} rows loaded and fitted: long tasks (ms) [${s.longTasks.join(', ')}]; long frames: ` +
      `${JSON.stringify(s.longFrames)}`);
    await assertClean(page, problems);
  } finally {
    await page.close();
  }
});
