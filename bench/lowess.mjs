// LOWESS (issue 23): ka.lowess on one thread against statsmodels' lowess on the same data, in the same run, and
// 10⁶ points alone. `node bench/lowess.mjs` prints the table; `npm run bench` includes it (bench/run.mjs).
// Each call takes seconds (statsmodels: minutes at 10⁵), so each cell is one call, ours after one warm-up call.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { init } from '../web/src/index.js';
import { mulberry32, normal } from './workloads.mjs';

const script = fileURLToPath(new URL('./statsmodels_lowess.py', import.meta.url));
const dataDir = fileURLToPath(new URL('../build/bench/data/', import.meta.url));

// [n, frac, delta ('R' for R's default 0.01·range(x)), run statsmodels]; 3 robustness iterations throughout.
const ROWS = [
  [10_000, 0.1, 0, true],
  [100_000, 0.1, 0, true],
  [1_000_000, 0.1, 'R', true],
];

/** x uniform on [0, 10] (unsorted), y = sin(x) + 0.3·N(0, 1) + a 2 % share of gross outliers. */
function sample(n) {
  const rand = mulberry32(23 + n);
  const x = Float64Array.from({ length: n }, () => 10 * rand());
  const y = Float64Array.from(x, (t) => Math.sin(t) + 0.3 * normal(rand) + (rand() < 0.02 ? 5 * normal(rand) : 0));
  return { x, y };
}

function statsmodels(x, y, frac, delta) {
  mkdirSync(dataDir, { recursive: true });
  const n = x.length;
  const [xp, yp, fp] = ['x', 'y', 'fitted'].map((name) => `${dataDir}lowess-${n}.${name}.f64`);
  writeFileSync(xp, x);
  writeFileSync(yp, y);
  const out = execFileSync('/usr/bin/python3', [script, xp, yp, String(n), String(frac), '3', String(delta), fp], {
    encoding: 'utf8',
    timeout: 3600e3,
  });
  const reply = JSON.parse(out.trim().split('\n').at(-1));
  if (reply.error) throw new Error(reply.error);
  const buf = readFileSync(fp);
  return { ...reply, fitted: new Float64Array(buf.buffer, buf.byteOffset, n) };
}

const fmt = (v, digits = 3) => (Number.isFinite(v) ? v.toPrecision(digits) : String(v));

export async function benchLowess(log = () => {}) {
  const ka = await init({ threads: 1 });
  const lines = [
    '### LOWESS: ka.lowess against statsmodels',
    '',
    "One thread (the single-thread WebAssembly build) against statsmodels' Cython `lowess` (Debian python3-statsmodels) on the " +
      'same data; 3 robustness iterations. "differs" is max |ours − statsmodels| / range(y) (they differ where ' +
      'statsmodels departs from R: docs/regression.md, "LOWESS").',
    '',
    '| n | frac | delta | ours (s) | statsmodels (s) | statsmodels ÷ ours | differs |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const [n, frac, deltaSpec, withStatsmodels] of ROWS) {
    const { x, y } = sample(n);
    let lo = Infinity,
      hi = -Infinity,
      ylo = Infinity,
      yhi = -Infinity;
    for (let j = 0; j < n; j++) {
      lo = Math.min(lo, x[j]);
      hi = Math.max(hi, x[j]);
      ylo = Math.min(ylo, y[j]);
      yhi = Math.max(yhi, y[j]);
    }
    const delta = deltaSpec === 'R' ? 0.01 * (hi - lo) : deltaSpec;
    ka.lowess(x, y, { frac, delta }); // warm-up (V8 tiers the kernel up)
    const start = performance.now();
    const { fitted } = ka.lowess(x, y, { frac, delta });
    const ours = (performance.now() - start) / 1e3;
    log(`lowess n=${n}: ours ${ours.toFixed(3)} s`);
    let theirs = NaN,
      differs = NaN;
    if (withStatsmodels) {
      try {
        const sm = statsmodels(x, y, frac, delta);
        theirs = sm.seconds;
        differs = 0;
        for (let j = 0; j < n; j++) differs = Math.max(differs, Math.abs(fitted[j] - sm.fitted[j]));
        differs /= yhi - ylo;
        log(`lowess n=${n}: statsmodels ${sm.statsmodels} ${theirs.toFixed(3)} s`);
      } catch (error) {
        log(`lowess n=${n}: statsmodels failed: ${error.message}`);
      }
    }
    const deltaText = deltaSpec === 'R' ? `0.01·range(x) = ${fmt(delta)}` : String(delta);
    lines.push(
      `| ${n.toLocaleString('en-US')} | ${frac} | ${deltaText} | ${fmt(ours)} | ${fmt(theirs)} | ` +
        `${fmt(theirs / ours)} | ${Number.isFinite(differs) ? differs.toExponential(1) : '–'} |`,
    );
  }
  return lines.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await benchLowess((line) => console.error(line)));
}
