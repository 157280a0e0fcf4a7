// Shared by the demo's browser tests: Debian's Chromium, the demo served by scripts/serve.mjs (with its strict
// Content-Security-Policy), and waiting on window.demoState, the numbers the page publishes for tests.
import assert from 'node:assert/strict';
import { launchChromium } from '../chromium.mjs';
import { DEMO_CSP, startServer } from '../../scripts/serve.mjs';

export const TIMEOUT_MS = 30_000;

/** Starts the server and the browser; `close()` stops both. */
export async function launch() {
  const server = await startServer({ port: 0 });
  const browser = await launchChromium({ timeout: TIMEOUT_MS });
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
 * The long animation frames recorded since observeLongWork (over 50 ms, each with the time the page's own scripts
 * took in it and who ran them) and the long tasks the Long Tasks API saw, as text for the log; the budget itself is
 * taskTraceReport's, which knows how long the thread ran in each task.
 */
export async function longWorkReport(page) {
  const { tasks, frames } = await page.evaluate(() => window.longWork);
  const text =
    `long tasks (ms) [${tasks.map((t) => Math.round(t.duration)).join(', ')}], long frames (ms, of which the ` +
    `page's scripts; invokers) ${JSON.stringify(frames.map((f) => [Math.round(f.duration), Math.round(f.scripts), ...f.invokers]))}`;
  return { tasks, frames, text };
}

// What a Chromium trace records of the main thread's tasks: the scheduler's tasks (toplevel) with the thread's CPU
// time (tdur), and inside them the timeline's events (style, layout, paint, scripts, messages) and V8's collections.
const TRACE_CATEGORIES = [
  'toplevel',
  'devtools.timeline',
  'disabled-by-default-devtools.timeline',
  'v8',
  'blink.gc',
  'disabled-by-default-v8.gc',
];
const TASK = 'ThreadControllerImpl::RunTask';

/** Where the main thread's time inside a task went, by the name of the innermost event running. */
const KINDS = [
  ['gc', /GC|Sweep|Scaveng|Mark|Compact|Heap/],
  ['style and layout', /[Ss]tyle|Layout|Shape|Text|Font/],
  ['paint and commit', /Paint|Raster|Canvas|Commit|Layer|Composit|Image|Decode|Draw/],
  ['messages', /Serializ|PostMessage/],
  ['history', /FrameLoader|Navigation/],
  ['loading', /Parse|Loader|SVGDocument/],
  ['scripts', /^v8\.|^V8\.|FunctionCall|EvaluateScript|TimerFire|AnimationFrame|EventDispatch|Microtask/],
];
const kindOf = (name) => KINDS.find(([, pattern]) => pattern.test(name))?.[0] ?? 'other';

/** Starts a Chromium trace (Playwright's browser.startTracing) of the page's main-thread tasks; taskTraceReport reads it. */
export async function startTaskTrace(browser, page) {
  await browser.startTracing(page, { categories: TRACE_CATEGORIES });
}

/**
 * Stops the trace and returns the page's main-thread tasks over `reportMs` (50): each one's wall time, the time its
 * thread ran (thread CPU time: the rest of the wall time it was ready but waited for a core, which on this shared
 * 2-core machine the compute and parse workers, other builds and the browser's own processes hold), and that CPU time
 * by kind of work (the innermost event running: scripts, style and layout, paint and commit, messages, history, gc,
 * other). The budget: a task over `taskMs` (100) fails when its thread ran `cpuMs` (50) or more of it, or
 * when it took over `hardMs` (250) at all; one that was long only by waiting for a core is listed in `excused`.
 */
export async function taskTraceReport(browser, { reportMs = 50, taskMs = 100, cpuMs = 50, hardMs = 250 } = {}) {
  const { traceEvents } = JSON.parse((await browser.stopTracing()).toString('utf8'));
  const threadNames = new Map();
  for (const e of traceEvents)
    if (e.ph === 'M' && e.name === 'thread_name') threadNames.set(`${e.pid}:${e.tid}`, e.args.name);
  // The page's renderer main thread: the busiest CrRendererMain (the test's page is the only one open).
  const counts = new Map();
  for (const e of traceEvents) {
    const key = `${e.pid}:${e.tid}`;
    if (threadNames.get(key) === 'CrRendererMain') counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const main = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  assert.ok(main, 'the trace holds no renderer main thread');
  // Complete events of that thread, begin/end pairs joined; wall and thread time in µs.
  const events = [];
  const open = [];
  for (const e of traceEvents) {
    if (`${e.pid}:${e.tid}` !== main) continue;
    if (e.ph === 'X') events.push({ name: e.name, ts: e.ts, dur: e.dur ?? 0, tdur: e.tdur });
    else if (e.ph === 'B') open.push(e);
    else if (e.ph === 'E' && open.length) {
      const b = open.pop();
      events.push({
        name: b.name,
        ts: b.ts,
        dur: e.ts - b.ts,
        tdur: b.tts !== undefined && e.tts !== undefined ? e.tts - b.tts : undefined,
      });
    }
  }
  events.sort((a, b) => a.ts - b.ts || b.dur - a.dur);
  const ms = (us) => Math.round(us / 100) / 10;
  const long = events.filter((e) => e.name === TASK && e.dur > reportMs * 1000 && e.tdur !== undefined);
  const tasks = long.map((task) => {
    // Self thread time of each event inside the task (its own less its children's), summed by kind.
    const inside = events.filter((e) => e !== task && e.ts >= task.ts && e.ts + e.dur <= task.ts + task.dur);
    const cpu = {};
    const stack = [];
    const close = (node) => {
      const self = (node.e.tdur ?? 0) - node.children;
      const kind = kindOf(node.e.name);
      cpu[kind] = (cpu[kind] ?? 0) + Math.max(0, self);
    };
    for (const e of inside) {
      while (stack.length && stack.at(-1).e.ts + stack.at(-1).e.dur <= e.ts) close(stack.pop());
      if (stack.length) stack.at(-1).children += e.tdur ?? 0;
      stack.push({ e, children: 0 });
    }
    while (stack.length) close(stack.pop());
    const traced = Object.values(cpu).reduce((a, b) => a + b, 0);
    if (task.tdur > traced) cpu.untraced = task.tdur - traced;
    return {
      wall: ms(task.dur),
      cpu: ms(task.tdur),
      waited: ms(task.dur - task.tdur),
      byKind: Object.fromEntries(
        Object.entries(cpu)
          .filter(([, v]) => v >= 100)
          .sort((a, b) => b[1] - a[1])
          .map(([k, v]) => [k, ms(v)]),
      ),
    };
  });
  const over = tasks.filter((t) => t.wall > hardMs || (t.wall > taskMs && t.cpu >= cpuMs));
  const excused = tasks.filter((t) => t.wall > taskMs && !over.includes(t));
  const text =
    `main-thread tasks over ${reportMs} ms (wall ms, thread CPU ms, waiting for a core ms, CPU by kind): ` +
    (tasks.length ? JSON.stringify(tasks.map((t) => [t.wall, t.cpu, t.waited, t.byKind])) : 'none');
  return { tasks, over, excused, text };
}
