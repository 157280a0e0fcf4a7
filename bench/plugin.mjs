// The plug-in bandwidth (issue 30): selectBandwidth(x, y, { dim: 1, rule: 'plugin' }) on one thread against
// KernSmooth's dpill() in R on the same data, in the same run, interleaved round by round. `node bench/plugin.mjs
// [rounds]` prints the table (docs/benchmarks.md, "Plug-in bandwidth"); without Rscript (or KernSmooth) R's column
// says so. R times each dpill() call inside R (bench/dpill.R), so its start-up is not counted; ours is the whole
// public call after one warm-up call: the copies into WebAssembly memory, the rule, and the CV score at the chosen
// bandwidth that every rule reports.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init } from '../web/src/index.js';
import { describeMachine, describeSource } from './machine.mjs';
import { median } from './measure.mjs';
import { mulberry32, normal } from './workloads.mjs';

const script = fileURLToPath(new URL('./dpill.R', import.meta.url));
const dataDir = fileURLToPath(new URL('../build/bench/data/', import.meta.url));
const SIZES = [10_000, 100_000, 1_000_000];

/** x uniform on [0, 1] (unsorted), y = sin(2πx) + 0.3·N(0, 1). */
function sample(n) {
  const rand = mulberry32(30 + n);
  const x = Float64Array.from({ length: n }, () => rand());
  const y = Float64Array.from(x, (t) => Math.sin(2 * Math.PI * t) + 0.3 * normal(rand));
  return { x, y };
}

/** Whether Rscript with KernSmooth is there: null when it is, else why not. */
function rMissing() {
  const r = spawnSync('Rscript', ['-e', 'library(KernSmooth)'], { encoding: 'utf8' });
  if (r.error) return 'Rscript not found';
  return r.status === 0 ? null : 'R has no KernSmooth';
}

/** One Rscript run of dpill on the files: { h, seconds }. */
function dpill(files, n) {
  const r = spawnSync('Rscript', [script, files.x, files.y, String(n), '1'], { encoding: 'utf8', timeout: 600e3 });
  if (r.status !== 0) throw new Error(`Rscript failed: ${(r.stderr || '').slice(0, 300)}`);
  const reply = JSON.parse(r.stdout.trim().split('\n').at(-1));
  return { h: reply.h, seconds: reply.seconds[0], version: `${reply.R}, KernSmooth ${reply.KernSmooth}` };
}

const fmt = (v, digits = 3) => (Number.isFinite(v) ? v.toPrecision(digits) : '–');
const spread = (values) => `${fmt(median(values))} (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})`;

export async function benchPlugin(log = () => {}, rounds = 5) {
  const ka = await init({ threads: 1 });
  const plugin = (x, y) => ka.selectBandwidth(x, y, { dim: 1, rule: 'plugin' }).bandwidth[0];
  const missing = rMissing();
  let rVersion = missing ?? '';
  const rows = [];
  for (const n of SIZES) {
    const { x, y } = sample(n);
    mkdirSync(dataDir, { recursive: true });
    const files = { x: `${dataDir}plugin-${n}.x.f64`, y: `${dataDir}plugin-${n}.y.f64` };
    writeFileSync(files.x, x);
    writeFileSync(files.y, y);
    const ours = [];
    const theirs = [];
    let h = NaN;
    let hR = NaN;
    plugin(x, y); // warm-up (V8 tiers the loops up)
    for (let round = 0; round < rounds; round++) {
      const start = performance.now();
      h = plugin(x, y);
      ours.push((performance.now() - start) / 1e3);
      if (!missing) {
        const r = dpill(files, n);
        theirs.push(r.seconds);
        hR = r.h;
        rVersion = r.version;
      }
      log(`plugin n=${n} round ${round + 1}: ours ${ours.at(-1).toFixed(3)} s, dpill ${fmt(theirs.at(-1))} s`);
    }
    rows.push(
      `| ${n.toLocaleString('en-US')} | ${spread(ours)} | ${missing ? '–' : spread(theirs)} | ` +
        `${missing ? '–' : fmt(median(theirs) / median(ours))} | ${missing ? '–' : Math.abs(h / hR - 1).toExponential(1)} |`,
    );
  }
  return [
    "### Plug-in bandwidth: selectBandwidth rule 'plugin' against KernSmooth's dpill",
    '',
    `One thread (the single-thread WebAssembly build) against R's \`dpill(x, y)\` (${rVersion}) on the same data: ` +
      `x uniform on [0, 1] unsorted, y = sin(2πx) + 0.3·N(0, 1); ${rounds} interleaved rounds, median (min–max) ` +
      'seconds. "differs" is |h / h_R − 1|.',
    '',
    '| n | ours (s) | dpill (s) | dpill ÷ ours | differs |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    ...describeMachine().map((line) => `- ${line}`),
    `- ${describeSource()}`,
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await benchPlugin((line) => console.error(line), Number(process.argv[2] ?? 5)));
}
