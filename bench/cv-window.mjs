// One exact CV evaluation at small bandwidths on two builds, interleaved in one process (docs/benchmarks.md, "CV at
// small bandwidths"): cvScore(x, y, { dim: 1, bandwidth: h, method: 'exact' }) on x uniform on [0, 1], y = sin 6x +
// 0.3·N(0, 1) (bench/scale.mjs's sample), one thread; per h the median of three calls of each build, and each score.
//   node bench/cv-window.mjs <web/src A> <web/src B> [--n=1e5] [--h=1.1e-5,2.4e-5] [--exclude=r]
import { pathToFileURL } from 'node:url';
import { mulberry32, normal } from './workloads.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const srcs = args.filter((a) => !a.startsWith('--'));
const n = Number(option('n', '1e5'));
const hs = option('h', '1.1e-5,1.66e-5,2.4e-5,3.5e-5').split(',').map(Number);
const exclude = Number(option('exclude', '0'));
const builds = [];
for (const src of srcs) builds.push(await (await import(pathToFileURL(`${src}/index.js`).href)).init({ threads: 1 }));
const rand = mulberry32(31 + n + 1);
const x = Float64Array.from({ length: n }, rand);
const y = Float64Array.from({ length: n }, (_, i) => Math.sin(6 * x[i]) + 0.3 * normal(rand));
const options = (h) => ({ dim: 1, bandwidth: h, method: 'exact', ...(exclude > 0 ? { exclude } : {}) });
for (const h of hs) {
  const times = builds.map(() => []);
  const scores = [];
  for (let round = 0; round < 3; round++)
    builds.forEach((ka, b) => {
      const start = performance.now();
      scores[b] = ka.cvScore(x, y, options(h));
      times[b].push(performance.now() - start);
    });
  const median = (t) => t.sort((p, q) => p - q)[1];
  console.log(
    `n=${n} h=${h}${exclude > 0 ? ` exclude=${exclude}` : ''}: ` +
      builds.map((_, b) => `${median(times[b]).toFixed(1)} ms (CV ${scores[b].toPrecision(10)})`).join(' | '),
  );
}
