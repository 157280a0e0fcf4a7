// End-to-end checks in Debian's Chromium: the library page and the README's browser example (the demo: demo.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launchChromium } from '../chromium.mjs';
import { startServer } from '../../scripts/serve.mjs';

const PAGE_TIMEOUT_MS = 30_000;

let server;
let browser;

before(async () => {
  server = await startServer({ port: 0 });
  browser = await launchChromium({ timeout: PAGE_TIMEOUT_MS });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

const isFavicon = (url) => new URL(url, 'http://x').pathname === '/favicon.ico';

/**
 * Opens `path`, waits until `readyFn` is truthy in the page, and returns the page with every console error,
 * page error and failed request seen so far (and later) in `problems`.
 */
async function openPage(path, readyFn) {
  const page = await browser.newPage();
  page.setDefaultTimeout(PAGE_TIMEOUT_MS);
  const problems = [];
  // Any of these fails the wait at once: a failed module import never becomes a page error, only a hang.
  let fail;
  const failed = new Promise((_, reject) => {
    fail = reject;
  });
  failed.catch(() => {});
  const report = (problem, fatal) => {
    problems.push(problem);
    if (fatal) fail(new Error(problem));
  };
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !isFavicon(msg.location().url || '')) {
      report(`console.error: ${msg.text()} (${msg.location().url || 'no url'})`, false);
    }
  });
  page.on('response', (res) => {
    if (res.status() >= 400 && !isFavicon(res.url())) report(`HTTP ${res.status()} ${res.url()}`, true);
  });
  page.on('requestfailed', (req) => {
    if (!isFavicon(req.url())) report(`request failed: ${req.url()} (${req.failure()?.errorText})`, true);
  });
  page.on('pageerror', (err) => report(`page error: ${err.stack || err.message}`, true));

  const started = Date.now();
  try {
    await Promise.race([page.goto(server.url + path, { waitUntil: 'load', timeout: PAGE_TIMEOUT_MS }), failed]);
    const left = Math.max(1, PAGE_TIMEOUT_MS - (Date.now() - started));
    await Promise.race([page.waitForFunction(readyFn, null, { timeout: left }), failed]);
  } catch (err) {
    await page.close();
    const hint = problems.some((p) => p.includes('/web/dist/'))
      ? '\n(web/dist/ is missing: run the wasm build first)'
      : '';
    throw new Error(`${path} did not finish loading:\n${problems.length ? problems.join('\n') : err.message}${hint}`);
  }
  return { page, problems };
}

function assertNoProblems(problems) {
  assert.deepEqual(problems, [], `browser reported errors:\n${problems.join('\n')}`);
}

const maxAbs = (a) => a.reduce((m, v) => Math.max(m, Math.abs(v)), 0);

// Float64 reference: one query at a time, every key, no streaming, no float32 anywhere.
function naiveAttention(queries, keys, values, { dim, kernel = 'softmax', bandwidth = 1, scale, empty = 'nan' }) {
  const I = queries.length / dim;
  const J = keys.length / dim;
  const D = values.length / J;
  const h = typeof bandwidth === 'number' ? Array(dim).fill(bandwidth) : Array.from(bandwidth);
  const s = scale ?? 1 / Math.sqrt(dim);
  const out = new Array(I * D).fill(0);
  for (let i = 0; i < I; i++) {
    const logw = [];
    const dist2 = [];
    for (let j = 0; j < J; j++) {
      let dot = 0;
      let sq = 0;
      let abs = 0;
      let prod = 1;
      for (let d = 0; d < dim; d++) {
        const q = queries[i * dim + d];
        const k = keys[j * dim + d];
        const u = (q - k) / h[d];
        dot += q * k;
        sq += u * u;
        abs += Math.abs(u);
        if (kernel === 'epanechnikov') prod *= Math.max(0, 1 - u * u);
        if (kernel === 'tricube') prod *= Math.max(0, 1 - Math.abs(u) ** 3) ** 3;
        if (kernel === 'uniform') prod *= Math.abs(u) <= 1 ? 1 : 0;
      }
      dist2.push(sq);
      if (kernel === 'softmax') logw.push(s * dot);
      else if (kernel === 'gaussian') logw.push(-0.5 * sq);
      else if (kernel === 'laplacian') logw.push(-abs);
      else if (kernel === 'cauchy') logw.push(-Math.log1p(sq));
      else logw.push(prod > 0 ? Math.log(prod) : -Infinity);
    }
    const top = Math.max(...logw);
    if (top === -Infinity) {
      // Only compact kernels get here; 'nearest' averages the keys closest in u.
      if (empty === 'nearest') {
        const best = Math.min(...dist2);
        const nearest = dist2.flatMap((d2, j) => (d2 === best ? [j] : []));
        for (let c = 0; c < D; c++) {
          out[i * D + c] = nearest.reduce((acc, j) => acc + values[j * D + c], 0) / nearest.length;
        }
      } else {
        for (let c = 0; c < D; c++) out[i * D + c] = empty === 'zero' ? 0 : NaN;
      }
      continue;
    }
    let total = 0;
    for (let j = 0; j < J; j++) {
      const w = Math.exp(logw[j] - top);
      total += w;
      for (let c = 0; c < D; c++) out[i * D + c] += w * values[j * D + c];
    }
    for (let c = 0; c < D; c++) out[i * D + c] /= total;
  }
  return out;
}

function assertClose(actual, expected, tolerance, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  let worst = 0;
  let at = -1;
  for (let i = 0; i < expected.length; i++) {
    // NaN where a number is expected (or the reverse) counts as an infinite error; NaN where NaN is expected is exact.
    const bothNaN = Number.isNaN(actual[i]) && Number.isNaN(expected[i]);
    const err = bothNaN ? 0 : Math.abs(actual[i] - expected[i]);
    const size = Number.isNaN(err) ? Infinity : err;
    if (at < 0 || size > worst) {
      worst = size;
      at = i;
    }
  }
  assert.ok(
    worst <= tolerance,
    `${what}: |error| ${worst} at index ${at} (got ${actual[at]}, want ${expected[at]}) > ${tolerance}`,
  );
}

test('library page: attention matches a float64 loop', { timeout: 2 * PAGE_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage('/tests/browser/page.html', () => window.results);
  try {
    const results = await page.evaluate(() => window.results);
    assert.equal(results.error, undefined, `page threw: ${results.error}`);
    assert.equal(typeof results.simd, 'string');
    for (const name of ['gaussian', 'softmax']) {
      const r = results[name];
      // Values given as numbers: the output is a Float64Array (a Float32Array only for Float32Array values).
      assert.equal(r.type, 'Float64Array', `${name}: attention of plain numbers returns a Float64Array`);
      const expected = naiveAttention(r.queries, r.keys, r.values, r.options);
      assertClose(r.out, expected, 1e-5 * maxAbs(r.values), name);
    }
    assertNoProblems(problems);
  } finally {
    await page.close();
  }
});

// The demo page has its own file: demo.test.mjs.

test('README browser example computes a kernel regression', { timeout: 2 * PAGE_TIMEOUT_MS }, async () => {
  const { page, problems } = await openPage('/examples/browser.html', () => window.exampleResult);
  try {
    const r = await page.evaluate(() => window.exampleResult);
    const expected = naiveAttention(r.at, r.x, r.y, { dim: 1, kernel: 'gaussian', bandwidth: r.bandwidth });
    assertClose(r.fit, expected, 1e-5 * maxAbs(r.y), 'example');
    const text = await page.textContent('#out');
    assert.equal(
      text.trim().split('\n').length,
      r.at.length,
      `#out should show one line per query, got ${JSON.stringify(text)}`,
    );
    assertNoProblems(problems);
  } finally {
    await page.close();
  }
});
