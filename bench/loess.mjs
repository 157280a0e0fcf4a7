// loess (issue 30): ka.loess on one thread against R's loess() on the same data in the same run, timed inside each
// (ours: performance.now and process.cpuUsage around the call; R: proc.time in bench/r_peer.R). `node bench/loess.mjs`
// prints the table (`npm run bench` includes it; `--cases=loess` runs only it); without Rscript it prints ours alone
// with a note. Rounds alternate ours and R; each cell is the
// median over the rounds (after one warm-up call each), with the CPU seconds beside the elapsed ones: on a shared
// machine the CPU time is the steadier figure.
import { init } from '../web/src/index.js';
import { differsOverRange, mulberry32, normal } from './workloads.mjs';
import { rAvailable, rPeer } from './peers/r.mjs';

// [label, n, dims, span, surface, traceHat, rounds]; degree 2, family gaussian. trace.hat 'approximate' is R's advice
// above about 1,000 points (issue 30's targets); the row with 'exact' (R's default at every n) shows what it costs.
const ROWS = [
  ['1-D interpolate', 100_000, 1, 0.3, 'interpolate', 'approximate', 7],
  ['1-D interpolate', 1_000_000, 1, 0.3, 'interpolate', 'approximate', 3],
  ['1-D interpolate, exact trace', 20_000, 1, 0.3, 'interpolate', 'exact', 3], // R's exact trace is O(n²)
  ['1-D direct', 10_000, 1, 0.3, 'direct', 'approximate', 5],
  ['2-D interpolate', 100_000, 2, 0.75, 'interpolate', 'approximate', 5],
];

/** x uniform on [0, 10]^dims (unsorted), y = Σ sin(x_j) + 0.3·N(0, 1). */
function sample(n, dims) {
  const rand = mulberry32(30 + n + dims);
  const x = Float64Array.from({ length: n * dims }, () => 10 * rand());
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < dims; j++) s += Math.sin(x[i * dims + j]);
    y[i] = s + 0.3 * normal(rand);
  }
  return { x, y };
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const fmt = (v, digits = 3) => (Number.isFinite(v) ? v.toPrecision(digits) : '–');

function timeOurs(fit) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const model = fit();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { model, seconds, cpu: (cpu.user + cpu.system) / 1e6 };
}

export async function benchLoess(log = () => {}) {
  const ka = await init({ threads: 1 });
  const missing = rAvailable();
  const r = missing ? null : rPeer();
  const version = r ? await r.start() : null;
  const lines = [
    "### loess: ka.loess against R's loess()",
    '',
    `One thread (the single-thread WebAssembly build) against ${version ?? 'R'} on the same data (x uniform on ` +
      "[0, 10]^d, y = Σ sin x_j + 0.3·N(0, 1)); degree 2, gaussian, `traceHat: 'approximate'` (R: " +
      '`trace.hat = "approximate"`) unless the row says exact. Medians over alternating rounds; "CPU" is the process\'s CPU seconds, ' +
      '"differs" max |ours − R| / range(y) over the fitted values.',
    '',
    '| case | n | span | ours (s) | ours CPU (s) | R (s) | R CPU (s) | R ÷ ours (CPU) | differs |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  if (missing) lines.splice(3, 0, '', `Note: ${missing}.`);
  try {
    for (const [label, n, dims, span, surface, traceHat, rounds] of ROWS) {
      const { x, y } = sample(n, dims);
      const options = { dim: dims, span, degree: 2, surface, traceHat };
      const ours = [],
        theirs = [];
      let fitted;
      timeOurs(() => ka.loess(x, y, options)).model.dispose(); // warm-up
      if (r) await r.load('loess', x, y, n, [dims, span, 2, 'gaussian', surface, traceHat]);
      for (let k = 0; k < rounds; k++) {
        const t = timeOurs(() => ka.loess(x, y, options));
        fitted = t.model.fitted;
        t.model.dispose();
        ours.push(t);
        if (r) theirs.push(await r.run());
      }
      const differs = r ? differsOverRange(fitted, await r.output(), y) : NaN;
      const [os, oc] = [median(ours.map((t) => t.seconds)), median(ours.map((t) => t.cpu))];
      const [rs, rc] = r ? [median(theirs.map((t) => t.seconds)), median(theirs.map((t) => t.cpu))] : [NaN, NaN];
      const row = `| ${label} | ${n.toLocaleString('en-US')} | ${span} | ${fmt(os)} | ${fmt(oc)} | ${fmt(rs)} | ${fmt(rc)} | ${fmt(rc / oc)} | ${fmt(differs, 2)} |`;
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
  const table = await benchLoess((row) => console.error(row));
  console.log(`${table}\n\nMachine: ${describeMachine().join('; ')}; ${describeSource()}.`);
}
