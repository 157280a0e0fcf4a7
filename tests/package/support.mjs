// Shared by the package tests: running commands, packing the working tree, float64 references, and a Chromium page
// run that records what the page downloaded.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { launchChromium as launchBrowser } from '../chromium.mjs';
import { startServer } from '../../scripts/serve.mjs';

const execFileAsync = promisify(execFile);

/** Runs a command; on failure the error shows its exit code and the tail of its output. */
export async function run(file, args, options) {
  try {
    return await execFileAsync(file, args, { encoding: 'utf8', maxBuffer: 64 << 20, ...options });
  } catch (e) {
    const tail = (text) => String(text ?? '').slice(-2500);
    throw new Error(
      `${file} ${args.join(' ')} failed (exit ${e.code}):\n${tail(e.stdout)}\n${tail(e.stderr) || tail(e.message)}`,
    );
  }
}

export function referenceRegression({ x, y, at }, h) {
  return at.map((q) => {
    let num = 0;
    let den = 0;
    x.forEach((k, j) => {
      const w = Math.exp(-0.5 * ((q - k) / h) ** 2);
      num += w * y[j];
      den += w;
    });
    return num / den;
  });
}

export function referenceAttention({ q, k, v }, dim, heads) {
  const hd = dim / heads;
  const I = q.length / dim;
  const J = k.length / dim;
  const out = [];
  for (let i = 0; i < I; i++) {
    for (let h = 0; h < heads; h++) {
      const s = Array.from({ length: J }, (_, j) => {
        let dot = 0;
        for (let d = 0; d < hd; d++) dot += q[i * dim + h * hd + d] * k[j * dim + h * hd + d];
        return dot / Math.sqrt(hd);
      });
      const top = Math.max(...s);
      const w = s.map((t) => Math.exp(t - top));
      const total = w.reduce((a, b) => a + b, 0);
      for (let d = 0; d < hd; d++) out.push(w.reduce((acc, wj, j) => acc + wj * v[j * dim + h * hd + d], 0) / total);
    }
  }
  return out;
}

export function assertClose(got, want, tolerance, what) {
  assert.equal(got.length, want.length, `${what}: length`);
  got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) <= tolerance, `${what}[${i}]: got ${g}, want ${want[i]}`));
}

/** Checks results of tests/package/consumers/app/compute.js against the float64 loops. */
export function checkResults(results, what) {
  assert.ok(Array.isArray(results) && results.length > 0, `${what}: no results (${JSON.stringify(results)})`);
  for (const r of results) {
    assert.equal(r.error, undefined, `${what}: ${r.error}`);
    assert.ok(r.build === 'single' || r.build === 'threads', `${what}: build ${r.build}`);
    assertClose(r.regression.fit, referenceRegression(r.regression, 0.3), 1e-5, `${what} (${r.build}) regression`);
    assertClose(r.attention.out, referenceAttention(r.attention, 4, 2), 1e-5, `${what} (${r.build}) attention`);
  }
}

export async function launchChromium() {
  return launchBrowser({ timeout: 60_000 });
}

/**
 * Opens `path` of a static server on `root` (cross-origin isolated: scripts/serve.mjs sends COOP/COEP) and waits for
 * window.results. Any page error, console error, failed request or HTTP error fails it, except responses whose URL
 * `allow` matches (and the console line Chromium prints for them). Returns the results and the files fetched, each
 * with its gzip -9 size.
 */
export async function resultsInChromium(browser, root, path, { allow = null, timeout = 60_000 } = {}) {
  const server = await startServer({ port: 0, root });
  const page = await browser.newPage();
  try {
    const problems = [];
    const fetched = new Map();
    let allowed = 0;
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      if (allow && allowed > 0 && /Failed to load resource/.test(m.text())) return;
      problems.push(`console.error: ${m.text().slice(0, 1500)}`);
    });
    page.on('response', (r) => {
      const url = new URL(r.url());
      if (url.origin !== server.url) return;
      if (r.status() >= 400) {
        if (allow?.test(url.pathname)) allowed += 1;
        else problems.push(`HTTP ${r.status()} ${url.pathname}`);
        return;
      }
      const file = join(root, decodeURIComponent(url.pathname));
      if (existsSync(file)) fetched.set(url.pathname, gzipSync(readFileSync(file), { level: 9 }).length);
    });
    page.on('requestfailed', (r) => {
      if (!allow?.test(new URL(r.url()).pathname)) problems.push(`request failed: ${r.url()}`);
    });
    await page.goto(server.url + path);
    try {
      await page.waitForFunction(() => window.results, null, { timeout });
    } catch (e) {
      throw new Error(`${path} did not finish: ${problems.join('\n') || e.message}`);
    }
    const results = await page.evaluate(() => window.results);
    assert.deepEqual(problems, [], `${path}: problems`);
    return { results, fetched, cores: await page.evaluate(() => navigator.hardwareConcurrency) };
  } finally {
    await page.close();
    await server.close();
  }
}
