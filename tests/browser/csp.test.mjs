// The package works on a page served with a strict Content-Security-Policy (no 'unsafe-eval'): Embind is built with
// -sDYNAMIC_EXECUTION=0, and the wasm is compiled under 'wasm-unsafe-eval' only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium } from '../chromium.mjs';
import { startServer } from '../../scripts/serve.mjs';

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";
let server;
let browser;

before(async () => {
  server = await startServer({ port: 0, headers: { 'Content-Security-Policy': CSP } });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.close();
});

test('attention runs under a strict CSP without any violation', { timeout: 60_000 }, async () => {
  const page = await browser.newPage();
  const console = [];
  // Chromium asks for /favicon.ico, which this repository does not have: its 404 is not the package's doing.
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !(msg.location().url || '').endsWith('/favicon.ico')) console.push(msg.text());
  });
  const response = await page.goto(`${server.url}/tests/browser/csp/`);
  assert.equal(response.headers()['content-security-policy'], CSP);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: 30_000 });
  const result = await page.evaluate(() => window.result);
  assert.equal(result.error, undefined, result.error);
  assert.deepEqual(result.violations, []);
  assert.deepEqual(console, []);
  assert.ok(Math.abs(result.fit[0] - 3) < 1e-6, `fit ${result.fit}`);
  await page.close();
});
