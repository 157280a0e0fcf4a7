// Bandwidth selection (issue 4): ours — the exact leave-one-out CV search of selectBandwidth, as kernelRegression
// runs it — against statsmodels' KernelReg(bw='cv_ls') on the same 1-D samples, in the same run. statsmodels is
// run where Debian's python3-statsmodels is present, up to the n its O(n²) Python loop finishes in reasonable time.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { timeCalls } from './measure.mjs';
import { mulberry32, normal } from './workloads.mjs';

const script = fileURLToPath(new URL('./statsmodels_select.py', import.meta.url));
const dataDir = fileURLToPath(new URL('../build/bench/data/', import.meta.url));
const SIZES = [200, 500, 1000, 10000];
const STATSMODELS_MAX_N = 1000; // cv_ls at 10,000 points would run for hours
const ESTIMATORS = [
  ['nadaraya-watson', 'lc'],
  ['local-linear', 'll'],
];

/** x uniform on [0, 1] (unsorted), y = sin(2πx) + 0.3·N(0, 1). */
function sample(n) {
  const rand = mulberry32(40 + n);
  const x = Float32Array.from({ length: n }, rand);
  const y = Float32Array.from(x, (t) => Math.sin(2 * Math.PI * t) + 0.3 * normal(rand));
  return { x, y };
}

function statsmodels(x, y, n, regType) {
  mkdirSync(dataDir, { recursive: true });
  const [xp, yp] = ['x', 'y'].map((name) => `${dataDir}select-${n}.${name}.f32`);
  writeFileSync(xp, x);
  writeFileSync(yp, y);
  const out = execFileSync('/usr/bin/python3', [script, xp, yp, String(n), regType], {
    encoding: 'utf8',
    timeout: 900e3,
  });
  const reply = JSON.parse(out.trim().split('\n').at(-1));
  if (reply.error) throw new Error(reply.error);
  return reply;
}

const fmt = (v, digits = 4) => (Number.isFinite(v) ? v.toPrecision(digits) : String(v));

// The gradient search (issue 9): method 'cv-gradient' against the line searches of method 'cv' on 10,000 points in
// 3-D, where y depends on x1 and x2 and not on x3.
const GRADIENT_N = 10000;

/** x uniform on [0, 1]^3, y = sin(2πx₁) + 0.5·x₂ + 0.3·N(0, 1). */
function sample3(n) {
  const rand = mulberry32(90 + n);
  const x = Float32Array.from({ length: 3 * n }, rand);
  const y = Float32Array.from(
    { length: n },
    (_, i) => Math.sin(2 * Math.PI * x[3 * i]) + 0.5 * x[3 * i + 1] + 0.3 * normal(rand),
  );
  return { x, y };
}

/** One run of each search (each takes seconds to minutes); the CV of each choice by cvScore (the exact CV). */
export function benchGradient(ka, log) {
  const { x, y } = sample3(GRADIENT_N);
  const rows = [];
  for (const [label, options] of [
    ["'cv' (common scale: scan + Brent)", { rule: 'cv' }],
    ["'cv', perDimension (coordinate descent, Brent per axis)", { rule: 'cv', perDimension: true }],
    ["'cv-gradient' (L-BFGS, exact gradient)", { rule: 'cv-gradient' }],
  ]) {
    const start = performance.now();
    const chosen = ka.selectBandwidth(x, y, { dim: 3, estimator: 'nadaraya-watson', method: 'exact', ...options });
    const seconds = (performance.now() - start) / 1e3;
    const cv = ka.cvScore(x, y, {
      dim: 3,
      estimator: 'nadaraya-watson',
      bandwidth: Array.from(chosen.bandwidth),
      method: 'exact',
    });
    log(`select ${label} n=${GRADIENT_N} 3-D: ${seconds.toFixed(2)} s, CV ${cv}`);
    rows.push({ label, seconds, chosen, cv });
  }
  return [
    '',
    `### Bandwidth selection: line searches against the gradient search, ${GRADIENT_N.toLocaleString('en')} points in 3-D`,
    '',
    'x uniform on [0, 1]³, y = sin(2πx₁) + 0.5·x₂ + 0.3·N(0, 1) (x₃ irrelevant); Nadaraya–Watson, Gaussian kernel, exact',
    'CV, one thread, one run each. "CV" is `cvScore` at the chosen bandwidths. `\'cv-gradient\'` evaluations are a forward',
    'and (when the line search accepts the point) a backward pass; the backward runs on one thread in double precision.',
    '',
    '| search | time (s) | evaluations | iterations | h₁, h₂, h₃ | CV |',
    '| --- | ---: | ---: | ---: | --- | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${r.seconds.toFixed(2)} | ${r.chosen.curve.scores.length}${r.chosen.method === 'cv' && r.chosen.curve.scores.length >= 256 ? '+' : ''} | ` +
        `${r.chosen.iterations ?? '—'} | ${Array.from(r.chosen.bandwidth, (h) => fmt(h, 3)).join(', ')} | ${fmt(r.cv, 6)} |`,
    ),
  ];
}

/** Runs the rows and returns their Markdown section; `log` receives progress lines. */
export async function benchSelection(log) {
  const { init } = await import('../web/src/index.js');
  const one = await init({ threads: 1 });
  let two = null;
  try {
    two = await init({ threads: 2 });
  } catch (error) {
    log(`selection: no 2-thread build (${error.message})`);
  }
  let statsmodelsNote = '';
  const rows = [];
  for (const n of SIZES) {
    const { x, y } = sample(n);
    for (const [estimator, regType] of ESTIMATORS) {
      const select = (ka) => {
        const start = performance.now();
        const result = ka.selectBandwidth(x, y, { dim: 1, estimator });
        return { seconds: (performance.now() - start) / 1e3, result };
      };
      const last = {};
      const time = async (ka) =>
        timeCalls(
          async () => {
            const r = select(ka);
            last.result = r.result;
            return r.seconds;
          },
          { budget: 3, maxRuns: 3 },
        );
      const ours = await time(one);
      const chosen = last.result;
      const ours2 = two ? await time(two) : null;
      const row = { n, estimator, ours, ours2, chosen };
      if (n <= STATSMODELS_MAX_N && statsmodelsNote !== 'missing') {
        try {
          row.theirs = statsmodels(x, y, n, regType);
          statsmodelsNote = `statsmodels ${row.theirs.statsmodels}`;
          row.ourCvAtTheirs =
            row.theirs.bandwidth > 0 ? one.cvScore(x, y, { dim: 1, bandwidth: row.theirs.bandwidth, estimator }) : NaN;
        } catch (error) {
          statsmodelsNote = 'missing';
          log(`selection: statsmodels not available (${error.message.split('\n')[0]})`);
        }
      }
      log(
        `select n=${n} ${estimator}: ours ${ours.seconds.toFixed(4)} s` +
          (row.theirs ? `, statsmodels ${row.theirs.seconds.toFixed(2)} s` : ''),
      );
      rows.push(row);
    }
  }
  const lines = [
    '### Bandwidth selection: leave-one-out CV, 1-D, Gaussian kernel',
    '',
    'x uniform on [0, 1], y = sin(2πx) + 0.3·N(0, 1). Ours: `selectBandwidth(x, y, { dim: 1, estimator })` (the search',
    '`kernelRegression` runs by default), median of up to 3 runs after a warm-up. statsmodels: `KernelReg(y, x, "c",',
    `reg_type, bw="cv_ls")\`, one run (${statsmodelsNote === 'missing' || !statsmodelsNote ? 'not available in this run' : statsmodelsNote}` +
      `), only up to n = ${STATSMODELS_MAX_N}. "CV" is the leave-one-out score at the chosen bandwidth (statsmodels' own`,
    '`cv_loo` for its row; ours at its bandwidth in brackets, which agree to 1e-4 by the conformance tests).',
    '',
    '| n | estimator | ours, 1 thread (s) | ours, 2 threads (s) | evaluations | h | CV | statsmodels cv_ls (s) | its h | its CV (ours) | ours faster by |',
    '| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const r of rows) {
    const t = r.theirs;
    lines.push(
      `| ${r.n.toLocaleString('en')} | ${r.estimator} | ${r.ours.seconds.toFixed(4)} | ` +
        `${r.ours2 ? r.ours2.seconds.toFixed(4) : '—'} | ${r.chosen.curve.scores.length} | ${fmt(r.chosen.bandwidth[0])} | ` +
        `${fmt(r.chosen.score, 6)} | ${t ? t.seconds.toFixed(2) : '—'} | ${t ? fmt(t.bandwidth) : '—'} | ` +
        `${t ? `${fmt(t.cv, 6)} (${fmt(r.ourCvAtTheirs, 6)})` : '—'} | ${t ? `${Math.round(t.seconds / r.ours.seconds)}×` : '—'} |`,
    );
  }
  lines.push(...benchGradient(one, log));
  return lines.join('\n');
}
