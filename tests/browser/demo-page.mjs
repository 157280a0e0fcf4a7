// Shared by the demo's browser tests: Debian's Chromium, the demo served by scripts/serve.mjs (with its strict
// Content-Security-Policy), and waiting on window.demoState, the numbers the page publishes for tests.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { DEMO_CSP, startServer } from '../../scripts/serve.mjs';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const TIMEOUT_MS = 30_000;

/** Starts the server and the browser; `close()` stops both. */
export async function launch() {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: install Debian's chromium (scripts/setup.sh)`);
  const server = await startServer({ port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: TIMEOUT_MS });
  return {
    server,
    browser,
    close: async () => {
      await browser.close();
      await server.close();
    },
  };
}

/**
 * Opens the demo and waits for its first full fit. `problems` collects errors, requests to other origins, failed
 * requests, dialogs (alert() from injected markup) and the Content-Security-Policy violations the document reports,
 * seen by a listener of the test's own (the page's workers report theirs to demoState.cspViolations; see assertClean).
 * `pageOptions` go to browser.newPage (a phone's viewport and touch, say).
 */
export async function openDemo({ server, browser }, hash = '', { wait = true, pageOptions = {} } = {}) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, ...pageOptions });
  page.setDefaultTimeout(TIMEOUT_MS);
  const problems = [];
  const origin = new URL(server.url).origin;
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console.error: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('request', (req) => {
    const url = new URL(req.url());
    if (url.protocol !== 'data:' && url.origin !== origin) problems.push(`request to another origin: ${req.url()}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400) problems.push(`HTTP ${res.status()} ${res.url()}`);
  });
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.url()}`));
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.type()} ${dialog.message()}`);
    dialog.dismiss();
  });
  await page.exposeBinding('reportCspViolation', (_, text) => problems.push(`CSP violation: ${text}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      window.reportCspViolation(`${e.violatedDirective} ${e.blockedURI} at ${e.sourceFile}:${e.lineNumber}`),
    );
  });
  const response = await page.goto(`${server.url}/web/demo/${hash}`);
  const headers = response.headers();
  assert.equal(headers['content-security-policy'], DEMO_CSP);
  assert.deepEqual(
    [headers['cross-origin-opener-policy'], headers['cross-origin-embedder-policy']],
    ['same-origin', 'require-corp'],
  );
  if (wait) await waitForFit(page, problems);
  return { page, problems };
}

/**
 * Waits until the demo has drawn a full fit for which `condition` (an expression in `s`, the page's demoState, and
 * `a`, the argument) holds. The predicate is compiled here and sent as a function: under the demo's CSP the page
 * itself may not evaluate strings.
 */
export async function waitForFit(page, problems, condition = 'true', arg = null, options = {}) {
  const predicate = new Function('a', `const s = window.demoState; return s.error || (s.ready && (${condition}));`);
  try {
    await page.waitForFunction(predicate, arg, options);
  } catch (err) {
    throw new Error(`demo did not finish a fit (${condition}): ${problems.join('\n') || err.message}`);
  }
  const error = await page.evaluate(() => window.demoState.error);
  assert.equal(error, null, `demo error: ${error}`);
}

/** No problem seen by the test, and no CSP violation reported by the page or its workers. */
export async function assertClean(page, problems) {
  assert.deepEqual(await page.evaluate(() => window.demoState.cspViolations), []);
  assert.deepEqual(problems, []);
}

/** What clicking `selector` downloads: its file name, bytes and text (UTF-8). */
export async function downloadText(page, selector) {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  const bytes = Buffer.concat(await (await download.createReadStream()).toArray());
  return { name: download.suggestedFilename(), bytes, text: bytes.toString('utf8') };
}

/** Parses SVG files in the page with DOMParser; per file: parser error, root, texts, paths, images and markup found. */
export function parseSvgs(page, files) {
  return page.evaluate(
    (texts) =>
      Object.fromEntries(
        Object.entries(texts).map(([name, text]) => {
          const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
          const root = doc.documentElement;
          const all = (selector) => [...doc.querySelectorAll(selector)];
          return [
            name,
            {
              error: doc.querySelector('parsererror')?.textContent ?? null,
              root: root.localName,
              namespace: root.namespaceURI,
              viewBox: root.getAttribute('viewBox'),
              title: doc.querySelector('title')?.textContent,
              texts: all('text').map((t) => t.textContent),
              paths: all('path').map((p) => ({
                d: p.getAttribute('d'),
                stroke: p.getAttribute('stroke'),
                fill: p.getAttribute('fill'),
              })),
              images: all('image').map((i) => i.getAttribute('href').slice(0, 22)),
              // Elements outside SVG's namespace or with event-handler attributes: what injected markup would leave.
              foreign: all('*')
                .filter(
                  (e) =>
                    e.namespaceURI !== 'http://www.w3.org/2000/svg' ||
                    [...e.attributes].some((a) => /^on/i.test(a.name)),
                )
                .map((e) => e.outerHTML.slice(0, 80)),
            },
          ];
        }),
      ),
    files,
  );
}

/**
 * Starts recording the main thread's long tasks (over 50 ms) and long animation frames (Chromium's Long Animation
 * Frames API, over 50 ms, with the time the page's own scripts took in each) in window.longWork.
 */
export async function observeLongWork(page) {
  assert.ok(
    await page.evaluate(() => PerformanceObserver.supportedEntryTypes.includes('long-animation-frame')),
    'this Chromium has no Long Animation Frames API',
  );
  await page.evaluate(() => {
    window.longWork = { tasks: [], frames: [] };
    new PerformanceObserver((list) =>
      window.longWork.tasks.push(...list.getEntries().map((e) => ({ start: e.startTime, duration: e.duration }))),
    ).observe({ type: 'longtask' });
    new PerformanceObserver((list) =>
      window.longWork.frames.push(
        ...list.getEntries().map((e) => ({
          start: e.startTime,
          duration: e.duration,
          scripts: e.scripts.reduce((sum, s) => sum + s.duration, 0),
          invokers: e.scripts.map((s) => `${s.invoker} ${Math.round(s.duration)}`),
        })),
      ),
    ).observe({ type: 'long-animation-frame' });
  });
}

/**
 * The budget for the main thread: no task over `taskMs` (100). On this shared 2-core machine Chromium's long
 * tasks also count the browser's painting and every wait for a core (the compute and parse workers, other
 * processes), which the page cannot shorten; so a task over `taskMs` counts against the page when its own scripts in
 * the frames overlapping it took `scriptMs` (50) or more, or when no frame accounts for it; every task over
 * `hardMs` (250) counts whatever ran in it. Returns the recorded work, the tasks that break the budget and those
 * excused (the machine's), for the test to assert on and print.
 */
export async function longWorkReport(page, { taskMs = 100, scriptMs = 50, hardMs = 250 } = {}) {
  const { tasks, frames } = await page.evaluate(() => window.longWork);
  const over = [];
  const excused = [];
  for (const t of tasks.filter((task) => task.duration > taskMs)) {
    const overlapping = frames.filter((f) => f.start < t.start + t.duration && t.start < f.start + f.duration);
    const scripts = overlapping.reduce((sum, f) => sum + f.scripts, 0);
    const entry = {
      task: Math.round(t.duration),
      scripts: Math.round(scripts),
      invokers: overlapping.flatMap((f) => f.invokers),
    };
    (t.duration > hardMs || !overlapping.length || scripts >= scriptMs ? over : excused).push(entry);
  }
  const text =
    `long tasks (ms) [${tasks.map((t) => Math.round(t.duration)).join(', ')}], long frames (ms, of which the ` +
    `page's scripts; invokers) ${JSON.stringify(frames.map((f) => [Math.round(f.duration), Math.round(f.scripts), ...f.invokers]))}` +
    (excused.length
      ? `; over ${taskMs} ms with under ${scriptMs} ms of the page's scripts: ${JSON.stringify(excused)}`
      : '');
  return { tasks, frames, over, excused, text };
}
