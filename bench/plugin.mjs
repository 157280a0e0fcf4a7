// The plug-in bandwidth (issue 30): selectBandwidth(x, y, { dim: 1, rule: 'plugin' }) on one thread against
// KernSmooth's dpill() in R on the same data in the same run, timed inside each (ours: performance.now and
// process.cpuUsage around the public call, which includes the copies into WebAssembly memory and the selection's
// warnings; R: proc.time in bench/r_peer.R, through bench/peers/r.mjs). `node bench/plugin.mjs` prints the table
// (docs/benchmarks.md, "Plug-in bandwidth"); without Rscript it prints ours alone with a note. Rounds alternate ours
// and R after one warm-up call each; each cell is the median over the rounds, with the CPU seconds beside the elapsed
// ones: on a shared machine the CPU time is the steadier figure.
import { fileURLToPath } from 'node:url';
import { init } from '../web/src/index.js';
import { rAvailable, rPeer } from './peers/r.mjs';
import { mulberry32, normal } from './workloads.mjs';

// [n, rounds]
const ROWS = [
  [10_000, 9],
  [100_000, 7],
  [1_000_000, 5],
];

/** x uniform on [0, 1] (unsorted), y = sin(2πx) + 0.3·N(0, 1). */
function sample(n) {
  const rand = mulberry32(30 + n);
  const x = Float64Array.from({ length: n }, () => rand());
  const y = Float64Array.from(x, (t) => Math.sin(2 * Math.PI * t) + 0.3 * normal(rand));
  return { x, y };
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const fmt = (v, digits = 3) => (Number.isFinite(v) ? v.toPrecision(digits) : '–');

function timeOurs(select) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const h = select();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { h, seconds, cpu: (cpu.user + cpu.system) / 1e6 };
}

export async function benchPlugin(log = () => {}) {
  const ka = await init({ threads: 1 });
  const select = (x, y) => ka.selectBandwidth(x, y, { dim: 1, rule: 'plugin' }).bandwidth[0];
  const missing = rAvailable();
  const r = missing ? null : rPeer();
  const version = r ? await r.start() : null;
  const lines = [
    "### Plug-in bandwidth: selectBandwidth rule 'plugin' against KernSmooth's dpill",
    '',
    `One thread (the single-thread WebAssembly build) against ${version ?? 'R'}'s \`dpill(x, y)\` on the same data ` +
      '(x uniform on [0, 1] unsorted, y = sin(2πx) + 0.3·N(0, 1)). Medians over alternating rounds; "CPU" is the ' +
      'process\'s CPU seconds, "differs" |h / h_R − 1|.',
    '',
    '| n | ours (s) | ours CPU (s) | R (s) | R CPU (s) | R ÷ ours (CPU) | differs |',
    '|---|---|---|---|---|---|---|',
  ];
  if (missing) lines.splice(3, 0, '', `Note: ${missing}.`);
  try {
    for (const [n, rounds] of ROWS) {
      const { x, y } = sample(n);
      const ours = [];
      const theirs = [];
      timeOurs(() => select(x, y)); // warm-up (V8 tiers the loops up)
      if (r) await r.load('dpill', x, y, n, []);
      for (let k = 0; k < rounds; k++) {
        ours.push(timeOurs(() => select(x, y)));
        if (r) theirs.push(await r.run());
        log(
          `plugin n=${n} round ${k + 1}: ours ${ours.at(-1).seconds.toFixed(3)} s, R ${fmt(theirs.at(-1)?.seconds)} s`,
        );
      }
      const h = ours.at(-1).h;
      const hR = r ? (await r.output())[0] : NaN;
      const [oursS, oursCpu] = [median(ours.map((t) => t.seconds)), median(ours.map((t) => t.cpu))];
      const [rS, rCpu] = r ? [median(theirs.map((t) => t.seconds)), median(theirs.map((t) => t.cpu))] : [NaN, NaN];
      lines.push(
        `| ${n.toLocaleString('en-US')} | ${fmt(oursS)} | ${fmt(oursCpu)} | ${fmt(rS)} | ${fmt(rCpu)} | ` +
          `${fmt(rCpu / oursCpu)} | ${r ? Math.abs(h / hR - 1).toExponential(1) : '–'} |`,
      );
    }
  } finally {
    r?.close();
  }
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await benchPlugin((line) => console.error(line)));
}
