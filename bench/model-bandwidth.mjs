// A bandwidth change on a fitted grid model (withBandwidth) against a fresh fit, as a bandwidth slider would do it:
// 10⁶ 1-D points, local-linear, Gaussian, 512 queries; each round fits fresh at the slider's next bandwidth and
// predicts, then asks the kept model for that bandwidth and predicts, alternately, on one thread.
//   node bench/model-bandwidth.mjs [rounds, default 11]
import { init } from '../web/src/index.js';

const rounds = Number(process.argv[2] ?? 11);
const ka = await init({ threads: 1 });
const n = 1e6;
const I = 512;
let seed = 1;
const rand = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
const x = Float64Array.from({ length: n }, rand);
const y = x.map((t) => Math.sin(6 * t) + t + 0.3 * (rand() - 0.5));
const xq = Float64Array.from({ length: I }, (_, i) => i / (I - 1));
const h = (r) => 0.02 * (1 + 0.03 * (r % 10)); // the slider's positions

const base = ka.kernelRegression(x, y, { dim: 1, bandwidth: h(0) });
console.log(`model: ${base.method} (${base.reason})`);
const time = (run) => {
  const t0 = performance.now();
  run();
  return performance.now() - t0;
};
const t = { fresh: [], withBandwidth: [] };
for (let r = 1; r <= rounds; r++) {
  const order = r % 2 ? ['fresh', 'withBandwidth'] : ['withBandwidth', 'fresh'];
  for (const name of order) {
    t[name].push(
      time(() => {
        const m = name === 'fresh' ? ka.kernelRegression(x, y, { dim: 1, bandwidth: h(r) }) : base.withBandwidth(h(r));
        m.predict(xq);
        m.dispose();
      }),
    );
  }
}
base.dispose();
const median = (a) => [...a].sort((p, q) => p - q)[a.length >> 1];
const [a, b] = [median(t.fresh), median(t.withBandwidth)];
console.log(
  `fresh fit + predict ${a.toFixed(1)} ms, withBandwidth + predict ${b.toFixed(2)} ms (medians of ${rounds}): ` +
    `${(a / b).toFixed(0)}× faster`,
);
