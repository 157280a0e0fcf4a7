// Two threads against one on the exact span fits and ka.loess (issue 30, item 5: "two threads where they help,
// bit-identical"): the pthreads build with threads: 2 against the single-thread build, rounds alternating which goes
// first, elapsed seconds (performance.now) of the same calls as bench/span.mjs and bench/loess.mjs time. Each row gives
// the medians, the median of the rounds' ratios with their range, and whether the two gave the same bytes.
// `node bench/span-threads.mjs [--rounds=N]`. On a shared machine the ratio is what other processes leave free: the
// first row is the control, a plain JavaScript loop on two worker threads against one (twice the work; 2 on an idle
// 2-core machine), so a table is read against what the machine gave at the time.
import { Worker } from 'node:worker_threads';
import { init } from '../web/src/index.js';
import { mulberry32, normal } from './workloads.mjs';
import { median } from './measure.mjs';

const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.split('=')[1] ?? 5);

/** x uniform on [0, 10] (unsorted), y = sin x + 0.3·N(0, 1): bench/span.mjs's sample. */
function sample(n) {
  const rand = mulberry32(30 + n + 1);
  const x = Float64Array.from({ length: n }, () => 10 * rand());
  const y = Float64Array.from(x, (v) => Math.sin(v) + 0.3 * normal(rand));
  return { x, y };
}

const spanFit = (estimator, span) => (ka, x, y) => {
  const model = ka.kernelRegression(x, y, { dim: 1, kernel: 'tricube', estimator, bandwidth: { span } });
  try {
    const trace = model.effectiveDegreesOfFreedom;
    return { fitted: model.predict(x), trace };
  } finally {
    model.dispose();
  }
};
const loessFit = (options) => (ka, x, y) => {
  const model = ka.loess(x, y, { span: 0.3, ...options });
  try {
    return { fitted: model.fitted, trace: model.traceHat };
  } finally {
    model.dispose();
  }
};

// [label, n, call]
const CASES = [
  ['span 0.3, nadaraya-watson', 10_000, spanFit('nadaraya-watson', 0.3)],
  ['span 0.3, local-linear', 10_000, spanFit('local-linear', 0.3)],
  ['span 0.75, local-linear', 10_000, spanFit('local-linear', 0.75)],
  ['span 0.3, local-linear', 30_000, spanFit('local-linear', 0.3)],
  ['loess direct, degree 2', 10_000, loessFit({ surface: 'direct' })],
  ['loess interpolate, degree 2, approximate trace', 100_000, loessFit({ traceHat: 'approximate' })],
  ['loess interpolate, degree 2, approximate trace', 1_000_000, loessFit({ traceHat: 'approximate' })],
];

const LOOP = `const { parentPort } = require('node:worker_threads');
let s = 0;
for (let i = 0; i < 2e8; i++) s += i % 7;
parentPort.postMessage(s);`;

/** Seconds for `workers` worker threads each running LOOP. */
function loopSeconds(workers) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let done = 0;
    for (let w = 0; w < workers; w++) {
      const worker = new Worker(LOOP, { eval: true });
      worker.on('error', reject);
      worker.on('message', () => {
        worker.terminate();
        if (++done === workers) resolve((performance.now() - t0) / 1000);
      });
    }
  });
}

/** The control row: 2 × the seconds of one loop over those of two at once, per round. */
async function controlRow() {
  const ratios = [];
  for (let k = 0; k < rounds; k++) {
    const one = await loopSeconds(1);
    ratios.push((2 * one) / (await loopSeconds(2)));
  }
  ratios.sort((p, q) => p - q);
  return `| control: a JavaScript loop, 2 workers against 1 (twice the work) | – | – | – | ${fmt(median(ratios))} (${fmt(ratios[0])}–${fmt(ratios[ratios.length - 1])}) | – |`;
}

const bytes = (r) => Buffer.concat([Buffer.from(r.fitted.buffer), Buffer.from(Float64Array.of(r.trace).buffer)]);
const fmt = (v, digits = 3) => v.toPrecision(digits);

export async function benchSpanThreads(log = () => {}) {
  const one = await init({ threads: 1 });
  const two = await init({ threads: 2 });
  const lines = [
    '| case | n | 1 thread (s) | 2 threads (s) | speed-up (median, range) | same bytes |',
    '|---|---|---|---|---|---|',
  ];
  const control = await controlRow();
  lines.push(control);
  log(control);
  for (const [label, n, call] of CASES) {
    const { x, y } = sample(n);
    const time = (ka) => {
      const t0 = performance.now();
      const r = call(ka, x, y);
      return { seconds: (performance.now() - t0) / 1000, r };
    };
    const a = time(one); // warm-ups
    const b = time(two);
    const same = bytes(a.r).equals(bytes(b.r));
    const s1 = [],
      s2 = [];
    for (let k = 0; k < rounds; k++) {
      const order = k % 2 ? [two, one] : [one, two];
      for (const ka of order) (ka === one ? s1 : s2).push(time(ka).seconds);
    }
    const ratios = s1.map((v, k) => v / s2[k]).sort((p, q) => p - q);
    const row =
      `| ${label} | ${n.toLocaleString('en-US')} | ${fmt(median(s1))} | ${fmt(median(s2))} | ` +
      `${fmt(median(ratios))} (${fmt(ratios[0])}–${fmt(ratios[ratios.length - 1])}) | ${same ? 'yes' : 'NO'} |`;
    lines.push(row);
    log(row);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { describeMachine, describeSource } = await import('./machine.mjs');
  const table = await benchSpanThreads((row) => console.error(row));
  const load = (await import('node:os')).loadavg()[0].toFixed(1);
  console.log(
    `${table}\n\nMachine: ${describeMachine().join('; ')}; ${describeSource()}; load average ${load} at the end.`,
  );
}
