// The pthreads build in Debian's Chromium: in a module Worker on a cross-origin-isolated page it is the default and
// gives the single-thread build's bytes; without isolation threads > 1 are refused and everything runs on one thread.
// Determinism: repeated calls give the same bytes, and Chromium's single-thread bytes are Node's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium } from '../chromium.mjs';
import { startServer } from '../../scripts/serve.mjs';
import { init } from '../../web/src/index.js';
import { WORKLOADS, digest } from './threads/workloads.mjs';

const TIMEOUT_MS = 60_000;
// scripts/serve.mjs isolates every page; these override its two headers for the second server.
const NOT_ISOLATED = { 'Cross-Origin-Opener-Policy': 'unsafe-none', 'Cross-Origin-Embedder-Policy': 'unsafe-none' };
let isolated;
let plain;
let browser;

/** The single-thread build's digests of every workload, computed here in Node. */
async function nodeDigests() {
  const ka = await init({ threads: 1 });
  const out = {};
  for (const [name, run] of Object.entries(WORKLOADS)) out[name] = await digest(run(ka));
  return out;
}

/** Chromium's single-thread outputs: each the same on a second call, and byte for byte Node's. */
async function checkSingle(single) {
  const node = await nodeDigests();
  assert.deepEqual(Object.keys(single).sort(), Object.keys(node).sort());
  for (const [name, { digest: chromium, repeat }] of Object.entries(single)) {
    assert.equal(repeat, true, `${name}: a second call in Chromium gave other bytes`);
    assert.equal(chromium, node[name], `${name}: Chromium's single-thread bytes differ from Node's`);
  }
}

before(async () => {
  isolated = await startServer({ port: 0 });
  plain = await startServer({ port: 0, headers: NOT_ISOLATED });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await isolated?.close();
  await plain?.close();
});

/** Opens the threads page on `server` and returns what the page and its worker reported, and any console errors. */
async function report(server) {
  const page = await browser.newPage();
  const errors = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !(msg.location().url || '').endsWith('/favicon.ico')) errors.push(msg.text());
  });
  page.on('pageerror', (err) => errors.push(String(err)));
  try {
    await page.goto(`${server.url}/tests/browser/threads/`);
    await page.waitForFunction(() => window.result !== undefined, null, { timeout: TIMEOUT_MS });
    const result = await page.evaluate(() => window.result);
    assert.equal(result.error, undefined, result.error);
    return { result, errors };
  } finally {
    await page.close();
  }
}

test(
  'cross-origin isolated: a module Worker gets the pthreads build, with the single-thread bytes for 2 and 4 threads',
  { timeout: 2 * TIMEOUT_MS },
  async () => {
    const { result, errors } = await report(isolated);
    assert.deepEqual(
      result.page,
      { build: 'single', threads: 1, isolated: true },
      'a page main thread never defaults to threads',
    );
    assert.deepEqual(
      result.main,
      { build: 'threads', threads: 2, same: true },
      'threads: 2 asked for on the main thread',
    );
    const { worker } = result;
    assert.equal(worker.isolated, true);
    if (worker.cores > 1) assert.deepEqual([worker.build, worker.threads], ['threads', Math.min(worker.cores, 16)]);
    assert.deepEqual(result.builds, [
      ['single', 1],
      ['threads', 2],
      ['threads', 4],
    ]);
    assert.ok(Object.keys(result.workloads).length >= 7);
    await checkSingle(result.single);
    for (const [name, { length, same }] of Object.entries(result.workloads)) {
      assert.ok(length > 0, `${name}: empty result`);
      assert.deepEqual(same, [true, true], `${name}: bytes on [2, 4] threads equal the single-thread build's`);
    }
    assert.deepEqual(errors, []);
  },
);

test(
  'not isolated: threads > 1 is Unsupported naming options.threads, and the default is the single-thread build',
  { timeout: 2 * TIMEOUT_MS },
  async () => {
    const { result, errors } = await report(plain);
    assert.deepEqual(result.page, { build: 'single', threads: 1, isolated: false });
    assert.deepEqual([result.worker.build, result.worker.threads, result.worker.isolated], ['single', 1, false]);
    assert.equal(result.refused?.code, 'Unsupported');
    assert.equal(result.refused.argument, 'options.threads');
    assert.match(result.refused.message, /cross-origin isolated/);
    await checkSingle(result.single);
    assert.deepEqual(errors, []);
  },
);
