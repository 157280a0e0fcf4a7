// Dive into Deep Learning's parametric Nadaraya–Watson example (examples/attention-pooling.mjs) trained in Debian's
// Chromium: the page imports the example, which trains an attentionPooling() with Adam; its loss must at least
// halve, and every epoch's loss must be the one Node prints (the builds give the same bytes everywhere).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { launch } from './demo-page.mjs';

const PAGE_TIMEOUT_MS = 60_000;
const root = fileURLToPath(new URL('../../', import.meta.url));

// Debian's Chromium and the project's server (a missing browser fails the run, not skips it).
let session;
before(async () => {
  session = await launch();
});
after(async () => {
  await session?.close();
});

test(
  'the attention-pooling example trains in the page and its loss at least halves',
  { timeout: 2 * PAGE_TIMEOUT_MS },
  async () => {
    const page = await session.browser.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const problems = [];
    const isFavicon = (url) => new URL(url, 'http://x').pathname === '/favicon.ico';
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !isFavicon(msg.location().url || '')) problems.push(`console.error: ${msg.text()}`);
    });
    page.on('response', (res) => {
      if (res.status() >= 400 && !isFavicon(res.url())) problems.push(`HTTP ${res.status()} ${res.url()}`);
    });
    page.on('pageerror', (err) => problems.push(`page error: ${err.stack || err.message}`));
    try {
      await page.goto(`${session.server.url}/tests/browser/pooling.html`, { waitUntil: 'load' });
      await page
        .waitForFunction(() => window.poolingResult)
        .catch((err) => {
          throw new Error(`the page did not finish:\n${problems.join('\n') || err.message}`);
        });
      const result = await page.evaluate(() => window.poolingResult);
      assert.equal(result.error, undefined, `page threw: ${result.error}`);
      const { losses, bandwidth } = result;
      assert.ok(losses.length >= 10 && losses.every(Number.isFinite), `losses ${losses}`);
      assert.ok(losses.at(-1) <= losses[0] / 2, `loss ${losses[0]} → ${losses.at(-1)}`);
      assert.ok(bandwidth > 0.05 && bandwidth < 1, `learned bandwidth ${bandwidth}`);

      // The same losses as the example run by Node (as printed: 4 decimals).
      const output = execFileSync(process.execPath, [root + 'examples/attention-pooling.mjs'], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      const printed = [...output.matchAll(/^epoch \d+, loss (\S+)$/gm)].map((m) => m[1]);
      assert.deepEqual(
        losses.map((l) => l.toFixed(4)),
        printed,
      );
      assert.deepEqual(problems, [], `browser reported errors:\n${problems.join('\n')}`);
    } finally {
      await page.close();
    }
  },
);
