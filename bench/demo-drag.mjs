// A drag of the demo's bandwidth slider over a large example (issue 31, item 5: "a drag over 10⁶ points stays under
// 100 ms a frame"), in Debian's Chromium as the browser tests run it (tests/browser/demo-page.mjs): the "Sine + noise"
// example at `--n` points (default 10⁶), a 60-step drag, and for each live fit drawn meanwhile its round trip (the
// request to the compute worker until the answer is in the page), the worker's own time (the model at the new h and
// its curve) and the time between two drawn fits. `node bench/demo-drag.mjs [--n=1000000] [--runs=3]` prints the
// medians and the largest of each run with the machine line; docs/demo.md records them.
import { loadavg } from 'node:os';
import { launch, openDemo, waitForFit } from '../tests/browser/demo-page.mjs';
import { describeMachine, describeSource } from './machine.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const N = Number(arg('n', 1e6));
const RUNS = Number(arg('runs', 3));
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];

const session = await launch();
try {
  const { page, problems } = await openDemo(session);
  await page.fill('#example-n', String(N));
  await page.click('#generate');
  await waitForFit(page, problems, 's.n === a && s.fit.n === a', N, { timeout: 600_000 });
  const build = await page.evaluate(() => window.demoState.worker);
  console.log(`Sine + noise, ${N.toLocaleString('en')} points; compute worker: ${JSON.stringify(build)}`);
  // One watcher, once a frame, for every run: each new live fit drawn, with the page's timings of it.
  await page.evaluate(() => {
    window.draftsSeen = [];
    let last = null;
    const look = () => {
      const s = window.demoState;
      if (s.fit && s.fit.draft && s.fit.mean !== last) {
        last = s.fit.mean;
        const t = s.timings;
        window.draftsSeen.push({
          at: performance.now(),
          n: s.fit.n,
          curveOnly: s.fit.curveOnly,
          roundTrip: t.roundTrip,
          worker: (t.fit ?? 0) + (t.predict ?? 0),
        });
      }
      requestAnimationFrame(look);
    };
    look();
  });
  for (let run = 0; run < RUNS; run++) {
    await page.evaluate(() => window.draftsSeen.splice(0));
    const box = await page.locator('#bandwidth').boundingBox();
    const y = box.y + box.height / 2;
    const from = run % 2 ? 0.7 : 0.3;
    const to = run % 2 ? 0.3 : 0.7;
    await page.mouse.move(box.x + box.width * from, y);
    await page.mouse.down();
    for (let step = 0; step <= 60; step++) {
      await page.mouse.move(box.x + box.width * (from + ((to - from) * step) / 60), y);
      await page.waitForTimeout(25);
    }
    await page.mouse.up();
    await waitForFit(page, problems, '!s.fit.draft', null, { timeout: 600_000 });
    const drafts = await page.evaluate(() => window.draftsSeen);
    const gaps = drafts.slice(1).map((d, i) => d.at - drafts[i].at);
    const f = (v) => `${median(v).toFixed(0)} ms (largest ${Math.max(...v).toFixed(0)})`;
    console.log(
      `run ${run + 1}: ${drafts.length} live fits drawn, each on ${drafts[0]?.n.toLocaleString('en')} points` +
        `${drafts.every((d) => d.curveOnly) ? ' (the curve alone)' : ''}; round trip ${f(drafts.map((d) => d.roundTrip))}; ` +
        `in the worker ${f(drafts.map((d) => d.worker))}; between drawn fits ${gaps.length ? f(gaps) : '–'}`,
    );
  }
  await page.close();
} finally {
  await session.close();
}
console.log(
  `${describeMachine().join('; ')}; ${describeSource()}; load average ${loadavg()
    .map((v) => v.toFixed(1))
    .join(' ')}`,
);
