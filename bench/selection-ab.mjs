// The n = 1,000 Nadaraya–Watson selection of issue 31 (bench/selection.mjs's sample: x uniform on [0, 1], y =
// sin 2πx + 0.3·N(0, 1)), `selectBandwidth(x, y, { dim: 1, estimator: 'nadaraya-watson' })` on one thread, on two
// copies of web/src in alternating rounds, with statsmodels' KernelReg(bw='cv_ls') on the same data in the same run
// (bench/statsmodels_select.py, between the rounds: each side meets the shared machine's load over the same minutes).
// Elapsed and CPU seconds (this process's for ours, Python's time.process_time for statsmodels); medians and ranges;
// whether the two builds choose the same bytes.
//   node bench/selection-ab.mjs <reference web/src> [<web/src under test>] [rounds, default 11] [statsmodels runs, 3]
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { loadPair } from './interleave.mjs';
import { describeMachine, describeSource } from './machine.mjs';
import { mulberry32, normal } from './workloads.mjs';

const pair = await loadPair('selection-ab.mjs');
const statsmodelsRuns = Number(process.argv[5] ?? 3);
const n = 1000;
const rand = mulberry32(40 + n);
const x = Float32Array.from({ length: n }, rand);
const y = Float32Array.from(x, (t) => Math.sin(2 * Math.PI * t) + 0.3 * normal(rand));
const options = { dim: 1, estimator: 'nadaraya-watson' };

function statsmodels() {
  const dir = fileURLToPath(new URL('../build/bench/data/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  const [xp, yp] = ['x', 'y'].map((name) => `${dir}selection-ab-${n}.${name}.f32`);
  writeFileSync(xp, x);
  writeFileSync(yp, y);
  const script = fileURLToPath(new URL('./statsmodels_select.py', import.meta.url));
  const out = execFileSync('/usr/bin/python3', [script, xp, yp, String(n), 'lc'], { encoding: 'utf8' });
  const reply = JSON.parse(out.trim().split('\n').at(-1));
  if (reply.error) throw new Error(reply.error);
  return reply;
}

const median = (a) => [...a].sort((p, q) => p - q)[a.length >> 1];
const range = (a) => `${Math.min(...a).toFixed(1)}–${Math.max(...a).toFixed(1)}`;
const times = { reference: { ms: [], cpu: [] }, tested: { ms: [], cpu: [] } };
const chosen = {};
const once = (name) => {
  const ka = pair[name];
  const [t, c] = [performance.now(), process.cpuUsage()];
  const r = ka.selectBandwidth(x, y, options);
  const used = process.cpuUsage(c);
  times[name].ms.push(performance.now() - t);
  times[name].cpu.push((used.user + used.system) / 1e3);
  chosen[name] = r;
};
for (const name of ['reference', 'tested']) pair[name].selectBandwidth(x, y, options); // warm-up
const theirs = [];
const every = Math.max(1, Math.floor(pair.rounds / Math.max(1, statsmodelsRuns)));
for (let r = 0; r < pair.rounds; r++) {
  for (const name of r % 2 ? ['tested', 'reference'] : ['reference', 'tested']) once(name);
  if (theirs.length < statsmodelsRuns && r % every === every - 1) theirs.push(statsmodels());
}
const [a, b] = [chosen.reference, chosen.tested];
const same = Buffer.from(a.bandwidth.buffer).equals(Buffer.from(b.bandwidth.buffer)) && Object.is(a.score, b.score);
console.log(describeMachine().join('\n'));
console.log(describeSource());
console.log(
  `load average ${(await import('node:os'))
    .loadavg()
    .map((v) => v.toFixed(2))
    .join(' ')}`,
);
console.log(`chosen: reference h ${a.bandwidth[0]}, CV ${a.score}, ${a.curve.scores.length} evaluations;`);
console.log(
  `        tested    h ${b.bandwidth[0]}, CV ${b.score}, ${b.curve.scores.length} evaluations; identical ${same}`,
);
for (const name of ['reference', 'tested']) {
  const t = times[name];
  console.log(
    `${name}: ${pair.rounds} rounds, median ${median(t.ms).toFixed(1)} ms (${range(t.ms)}), ` +
      `CPU ${median(t.cpu).toFixed(1)} ms (${range(t.cpu)})`,
  );
}
if (theirs.length) {
  const s = theirs.map((r) => r.seconds * 1e3);
  const c = theirs.map((r) => r.cpu * 1e3);
  console.log(
    `statsmodels ${theirs[0].statsmodels} cv_ls: ${theirs.length} runs, median ${(median(s) / 1e3).toFixed(2)} s ` +
      `(${(Math.min(...s) / 1e3).toFixed(2)}–${(Math.max(...s) / 1e3).toFixed(2)}), CPU ${(median(c) / 1e3).toFixed(2)} s; ` +
      `h ${theirs[0].bandwidth}`,
  );
  for (const name of ['reference', 'tested'])
    console.log(
      `statsmodels ÷ ${name}: ${(median(s) / median(times[name].ms)).toFixed(0)}× elapsed, ` +
        `${(median(c) / median(times[name].cpu)).toFixed(0)}× CPU`,
    );
}
