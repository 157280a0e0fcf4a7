// Exact span fits (issue 30, item 5): kernelRegression with the tricube kernel and `bandwidth: { span }` in 1-D, on one
// thread, against R's loess(surface = "direct") of the same degree on the same data in the same run: R's exact fit at
// every point, with the trace of its operator (statistics "approximate" computes the diagonal exactly for the direct
// surface), and ours: the model (its summary holds the trace) and predict() at every point. Timed inside each
// (ours: performance.now and process.cpuUsage around both calls; R: proc.time in bench/r_peer.R, through
// bench/peers/r.mjs). `node bench/span.mjs` prints the table (`npm run bench` includes it; `--cases=span` runs only
// it); without Rscript it prints ours alone with a note. Rounds alternate ours and R; each cell is the median over
// the rounds (after one warm-up call each), with the CPU seconds beside the elapsed ones: on a shared machine the CPU
// time is the steadier figure.
import { init } from '../web/src/index.js';
import { differsOverRange, mulberry32, normal } from './workloads.mjs';
import { rAvailable, rPeer } from './peers/r.mjs';

// [n, span, degree (0: nadaraya-watson, 1: local-linear), rounds]. R's direct surface is O(n·k) too (its neighbours
// by a selection among all n distances per point: O(n²)), about 1 s at 10⁴ points: larger n is left out.
const ROWS = [
  [10_000, 0.3, 1, 5],
  [10_000, 0.3, 0, 5],
  [10_000, 0.75, 1, 3],
  [10_000, 0.75, 0, 3],
];
const ESTIMATORS = ['nadaraya-watson', 'local-linear'];

/** x uniform on [0, 10] (unsorted), y = sin x + 0.3·N(0, 1): bench/loess.mjs's sample. */
function sample(n) {
  const rand = mulberry32(30 + n + 1);
  const x = Float64Array.from({ length: n }, () => 10 * rand());
  const y = Float64Array.from(x, (v) => Math.sin(v) + 0.3 * normal(rand));
  return { x, y };
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const fmt = (v, digits = 3) => (Number.isFinite(v) ? v.toPrecision(digits) : '–');

/** The model, its trace and the fitted values, timed: R's loess gives the same three. */
function timeOurs(ka, x, y, options) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const model = ka.kernelRegression(x, y, options);
  const trace = model.effectiveDegreesOfFreedom;
  const fitted = model.predict(x);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  model.dispose();
  return { fitted, trace, seconds, cpu: (cpu.user + cpu.system) / 1e6 };
}

export async function benchSpan(log = () => {}) {
  const ka = await init({ threads: 1 });
  const missing = rAvailable();
  const r = missing ? null : rPeer();
  const version = r ? await r.start() : null;
  const lines = [
    '### Exact span fits: kernelRegression with { span } against R\'s loess(surface = "direct")',
    '',
    `One thread (the single-thread WebAssembly build) against ${version ?? 'R'} on the same data (x uniform on ` +
      "[0, 10], y = sin x + 0.3·N(0, 1)): ours is `kernelRegression(x, y, { dim: 1, kernel: 'tricube', estimator, " +
      "bandwidth: { span } })`, its `effectiveDegreesOfFreedom` and `predict(x)`; R's is `loess(y ~ x, span, degree, " +
      'surface = "direct")` (its fitted values and the trace of its operator). Medians over alternating rounds; ' +
      '"CPU" is the process\'s CPU seconds, "differs" max |ours − R| / range(y) over the fitted values.',
    '',
    '| n | span | degree | ours (s) | ours CPU (s) | R (s) | R CPU (s) | R ÷ ours (CPU) | differs |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  if (missing) lines.splice(3, 0, '', `Note: ${missing}.`);
  try {
    for (const [n, span, degree, rounds] of ROWS) {
      const { x, y } = sample(n);
      const options = { dim: 1, kernel: 'tricube', estimator: ESTIMATORS[degree], bandwidth: { span } };
      const ours = [],
        theirs = [];
      timeOurs(ka, x, y, options); // warm-up
      if (r) await r.load('loess', x, y, n, [1, span, degree, 'gaussian', 'direct', 'approximate']);
      let fitted;
      for (let k = 0; k < rounds; k++) {
        const t = timeOurs(ka, x, y, options);
        fitted = t.fitted;
        ours.push(t);
        if (r) theirs.push(await r.run());
      }
      const differs = r ? differsOverRange(fitted, await r.output(), y) : NaN;
      const [os, oc] = [median(ours.map((t) => t.seconds)), median(ours.map((t) => t.cpu))];
      const [rs, rc] = r ? [median(theirs.map((t) => t.seconds)), median(theirs.map((t) => t.cpu))] : [NaN, NaN];
      const row = `| ${n.toLocaleString('en-US')} | ${span} | ${degree} | ${fmt(os)} | ${fmt(oc)} | ${fmt(rs)} | ${fmt(rc)} | ${fmt(rc / oc)} | ${fmt(differs, 2)} |`;
      lines.push(row);
      log(row);
    }
  } finally {
    await r?.close();
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { describeMachine, describeSource } = await import('./machine.mjs');
  const table = await benchSpan((row) => console.error(row));
  console.log(`${table}\n\nMachine: ${describeMachine().join('; ')}; ${describeSource()}.`);
}
