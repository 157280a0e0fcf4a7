// The 2-D default fit (issue 31): `kernelRegression(x, y, { dim: 2 })` (CV bandwidth, local-linear, method auto)
// against R's 2-D loess with its defaults (approximate trace), and optionally a reference copy of web/src, called in
// turn each round on the same sample (bench/scale.mjs's) so that the shared machine's load falls on all alike; prints
// each one's median seconds, spread and the load average.
//   node bench/fit2d.mjs [--sizes=1e4,1e5] [--rounds=5] [--reference=<web/src>] [--reference-up-to=1e4]
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { rPeer } from './peers/r.mjs';
import { sample } from './scale.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const sizes = arg('sizes', '1e4,1e5').split(',').map(Number);
const rounds = Number(arg('rounds', '5'));
const refDir = arg('reference', '');
const refUpTo = Number(arg('reference-up-to', '1e4'));
const load = async (dir) => (await import(pathToFileURL(resolve(dir, 'index.js')).href)).init({ threads: 1 });
const tested = await load(new URL('../web/src', import.meta.url).pathname);
const reference = refDir ? await load(refDir) : null;
const r = rPeer();
console.log(`R: ${await r.start()}`);
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const seconds = async (run) => {
  const t0 = performance.now();
  await run();
  return (performance.now() - t0) / 1e3;
};

for (const n of sizes) {
  const { x, y } = sample(n, 2);
  await r.load('loess', x, y, n, [2, 0.75, 2, 'gaussian', 'interpolate', 'approximate']);
  const runs = [
    ['ours', () => tested.kernelRegression(x, y, { dim: 2 }).dispose()],
    ...(reference && n <= refUpTo ? [['reference', () => reference.kernelRegression(x, y, { dim: 2 }).dispose()]] : []),
    ['R loess', async () => (await r.run()).seconds],
  ];
  const times = runs.map(() => []);
  const loads = [];
  for (let round = 0; round < rounds; round++) {
    loads.push(loadavg()[0]);
    for (let k = 0; k < runs.length; k++) {
      const j = (k + round) % runs.length;
      // R's own timing (inside R); ours from the call's start to its end.
      times[j].push(runs[j][0] === 'R loess' ? await runs[j][1]() : await seconds(runs[j][1]));
    }
  }
  const line = runs.map(
    ([name], j) =>
      `${name} ${median(times[j]).toFixed(3)} s (${Math.min(...times[j]).toFixed(3)}–${Math.max(...times[j]).toFixed(3)})`,
  );
  console.log(
    `n = ${n}: ${line.join(', ')}; ours ÷ R ${(median(times[0]) / median(times.at(-1))).toFixed(1)}; load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`,
  );
}
r.close();
process.exit(0);
