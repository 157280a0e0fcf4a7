// The 2-D default fit (issue 31): `kernelRegression(x, y, { dim: 2 })` (CV bandwidth, local-linear, method auto)
// against R's 2-D loess with its defaults (approximate trace), and optionally a reference copy of web/src, called in
// turn each round on the same sample (bench/scale.mjs's) so that the shared machine's load falls on all alike; prints
// each one's median seconds, spread and the load average, then the same of CPU seconds (ours: this process's user +
// system time over the call; R's: its own proc.time), which a machine loaded beyond its cores inflates far less.
// `--shape` picks the sample: uniform (bench/scale.mjs's, the default), clusters (eight clusters along a line, as
// correlated predictors give), lognormal (both axes), ridges (uniform, y = sin 6x₁ + sin 12x₂: its CV minimum lower).
//   node bench/fit2d.mjs [--sizes=1e4,1e5] [--rounds=5] [--shape=uniform] [--reference=<web/src>] [--reference-up-to=1e4]
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { rPeer } from './peers/r.mjs';
import { sample } from './scale.mjs';
import { mulberry32, normal } from './workloads.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const sizes = arg('sizes', '1e4,1e5').split(',').map(Number);
const rounds = Number(arg('rounds', '5'));
const refDir = arg('reference', '');
const refUpTo = Number(arg('reference-up-to', '1e4'));
const shape = arg('shape', 'uniform');
// The sample of `shape`: x two columns, y = sin 6x₁ + cos 4x₂ (sin 12x₂ for ridges) + 0.3·N(0, 1).
const shaped = (n) => {
  if (shape === 'uniform') return sample(n, 2);
  const rand = mulberry32(57 + n);
  const x = new Float64Array(2 * n);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const c = Math.floor(8 * rand());
    const [a, b] =
      shape === 'clusters'
        ? [0.1 * c + 0.01 * normal(rand), 0.05 * c + 0.01 * normal(rand)]
        : shape === 'lognormal'
          ? [Math.exp(normal(rand)), Math.exp(normal(rand))]
          : [rand(), rand()];
    x[2 * i] = a;
    x[2 * i + 1] = b;
    y[i] = Math.sin(6 * a) + (shape === 'ridges' ? Math.sin(12 * b) : Math.cos(4 * b)) + 0.3 * normal(rand);
  }
  return { x, y };
};
if (!['uniform', 'clusters', 'lognormal', 'ridges'].includes(shape)) throw new Error(`--shape: ${shape}?`);
const load = async (dir) => (await import(pathToFileURL(resolve(dir, 'index.js')).href)).init({ threads: 1 });
const tested = await load(new URL('../web/src', import.meta.url).pathname);
const reference = refDir ? await load(refDir) : null;
const r = rPeer();
console.log(`R: ${await r.start()}`);
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
// Wall and CPU seconds of one call.
const seconds = async (run) => {
  const [t0, c0] = [performance.now(), process.cpuUsage()];
  await run();
  const c = process.cpuUsage(c0);
  return { seconds: (performance.now() - t0) / 1e3, cpu: (c.user + c.system) / 1e6 };
};

for (const n of sizes) {
  const { x, y } = shaped(n);
  await r.load('loess', x, y, n, [2, 0.75, 2, 'gaussian', 'interpolate', 'approximate']);
  const runs = [
    ['ours', () => tested.kernelRegression(x, y, { dim: 2 }).dispose()],
    ...(reference && n <= refUpTo ? [['reference', () => reference.kernelRegression(x, y, { dim: 2 }).dispose()]] : []),
    ['R loess', () => r.run()],
  ];
  const times = runs.map(() => []);
  const cpus = runs.map(() => []);
  const loads = [];
  for (let round = 0; round < rounds; round++) {
    loads.push(loadavg()[0]);
    for (let k = 0; k < runs.length; k++) {
      const j = (k + round) % runs.length;
      // R's own timing (inside R); ours from the call's start to its end.
      const t = runs[j][0] === 'R loess' ? await runs[j][1]() : await seconds(runs[j][1]);
      times[j].push(t.seconds);
      cpus[j].push(t.cpu);
    }
  }
  const summary = (of) =>
    runs
      .map(
        ([name], j) =>
          `${name} ${median(of[j]).toFixed(3)} s (${Math.min(...of[j]).toFixed(3)}–${Math.max(...of[j]).toFixed(3)})`,
      )
      .join(', ');
  const ratio = (of) => (median(of[0]) / median(of.at(-1))).toFixed(1);
  console.log(
    `${shape}, n = ${n}: ${summary(times)}; ours ÷ R ${ratio(times)}; load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
  );
  console.log(`  CPU seconds: ${summary(cpus)}; ours ÷ R ${ratio(cpus)}`);
}
r.close();
process.exit(0);
