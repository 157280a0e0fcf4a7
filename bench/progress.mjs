// The cost of progress reporting (issue 8 asks for under 2 %): attentionAsync with an onProgress callback against
// attention() on the same inputs (workload A), one thread. The two are timed alternately in one loop, so a change in
// the machine's load between them (the tables' rows are measured minutes apart) falls on both alike; the figure is the
// median of the per-pair ratios.
import { attentionCase } from './workloads.mjs';

const SIZES = [
  [1024, 31],
  [4096, 9],
]; // [I = J, timed pairs]

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};
const ms = (seconds) => `${(seconds * 1e3).toPrecision(3)} ms`;

/** Times `pairs` pairs of calls, the order alternating (sync first in even pairs), after two warm-ups of each. */
async function measure(ka, c, pairs) {
  const options = { dim: c.M };
  let steps = 0;
  const sync = async () => {
    const t = performance.now();
    ka.attention(c.q, c.k, c.v, options);
    return (performance.now() - t) / 1e3;
  };
  const async_ = async () => {
    steps = 0;
    const t = performance.now();
    await ka.attentionAsync(c.q, c.k, c.v, {
      ...options,
      onProgress: () => {
        steps += 1;
      },
    });
    return (performance.now() - t) / 1e3;
  };
  for (let n = 0; n < 2; n++) {
    await sync();
    await async_();
  }
  const times = { sync: [], async: [], ratios: [] };
  for (let n = 0; n < pairs; n++) {
    let a;
    let b;
    if (n % 2) {
      a = await async_();
      b = await sync();
    } else {
      b = await sync();
      a = await async_();
    }
    times.async.push(a);
    times.sync.push(b);
    times.ratios.push(a / b);
  }
  return { sync: median(times.sync), async: median(times.async), ratio: median(times.ratios), steps, pairs };
}

/** The section's Markdown; `log` receives progress lines. */
export async function benchProgress(log) {
  const { init } = await import('../web/src/index.js');
  const ka = await init({ threads: 1 });
  const lines = [
    '### Progress reporting: attentionAsync + onProgress against attention()',
    '',
    "One thread (the single-thread build), workload A's inputs; the two calls alternate, and the overhead is the median",
    'of the per-pair ratios (issue 8 asks for under 2 %).',
    '',
    '| case | attention() | attentionAsync + onProgress | steps reported | pairs | overhead |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const [n, pairs] of SIZES) {
    log(`progress overhead, I = J = ${n}…`);
    const r = await measure(ka, attentionCase(n), pairs);
    const overhead = (r.ratio - 1) * 100;
    lines.push(
      `| I = J = ${n.toLocaleString('en')}, M = D = 64 | ${ms(r.sync)} | ${ms(r.async)} | ${r.steps} | ${r.pairs} | ` +
        `${overhead >= 0 ? '+' : '−'}${Math.abs(overhead).toFixed(1)} % |`,
    );
  }
  return lines.join('\n');
}
