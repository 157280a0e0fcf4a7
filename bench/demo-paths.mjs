// Every path the demo's compute worker runs (web/demo/worker.js, loess-fit.js, attention-views.js), timed on the
// demo's own "Sine + noise" example at 10⁴, 10⁵ and 10⁶ points, on every point: what decides which of the demo's
// sample caps (web/demo/sampling.js) can go. One thread (the single-thread build; the page's compute worker runs the
// pthreads build, which can only be faster), one process; each cell the median of `--rounds` calls (default 3) after
// one warm-up, or the first call alone when it took over `--long` seconds (default 3). A path whose last size took
// over `--skip` seconds (default 20) is not run at the next size. `node bench/demo-paths.mjs [--sizes=1e4,1e5]
// [--paths=fit,span]` prints a Markdown table with the machine line; docs/demo.md records it.
import { init } from '../web/src/index.js';
import { generate } from '../web/demo/data.js';
import { samplesOf } from '../web/demo/sampling.js';
import { attentionMatrix, attentionView } from '../web/demo/attention-views.js';
import { describeMachine, describeSource } from './machine.mjs';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const SIZES = arg('sizes', '1e4,1e5,1e6').split(',').map(Number);
const ROUNDS = Number(arg('rounds', 3));
const LONG = Number(arg('long', 3));
const SKIP = Number(arg('skip', 20));
const ONLY = arg('paths', '');

const H = [0.1]; // about what CV chooses for the sine example at 10⁴–10⁵ points
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];

/** A model of s with these options, its band at the curve's queries (what worker.js's fit does), disposed. */
function fitAndBand(ka, s, queries, { variance = 'global', ...options }, extra = () => {}) {
  const model = ka.kernelRegression(s.x, s.y, { dim: 1, ...options });
  try {
    const band = model.predictInterval(queries, { level: 0.95, variance });
    void model.effectiveDegreesOfFreedom;
    void model.residualVariance[0];
    extra(model, band);
  } finally {
    model.dispose();
  }
}

// [name, what the page runs, fn(ka, sample) → void]. `sample` is sampling.js's samplesOf of the whole example.
const PATHS = [
  [
    'fit',
    'h fit (auto: the grid from 20,000 points) + band',
    (ka, s) => fitAndBand(ka, s.all, s.queries, { bandwidth: H }),
  ],
  [
    'exact',
    'h fit, method exact + band (local-quadratic runs so)',
    (ka, s) => fitAndBand(ka, s.all, s.queries, { bandwidth: H, method: 'exact' }),
  ],
  [
    'quadratic',
    'local-quadratic h fit + band',
    (ka, s) => fitAndBand(ka, s.all, s.queries, { bandwidth: H, estimator: 'local-quadratic' }),
  ],
  [
    'derivative',
    'h fit + band + derivative (gradient at 300 queries)',
    (ka, s) => fitAndBand(ka, s.all, s.queries, { bandwidth: H }, (m) => m.gradient(s.queries)),
  ],
  [
    'robust',
    'h fit, robust (3 iterations) + band',
    (ka, s) => fitAndBand(ka, s.all, s.queries, { bandwidth: H, robust: { iterations: 3 } }),
  ],
  [
    'local',
    'h fit + local σ(x) band',
    (ka, s) => fitAndBand(ka, s.all, s.queries, { bandwidth: H, variance: 'local' }),
  ],
  [
    'draft',
    'drag: withBandwidth(h) of a kept model + band',
    (ka, s, kept) => {
      const m = kept.model.withBandwidth([H[0] * (1 + 0.1 * Math.random())]);
      m.predictInterval(s.queries, { level: 0.95 });
      void m.effectiveDegreesOfFreedom;
      void m.residualVariance[0];
      m.dispose();
    },
  ],
  [
    'span-gauss',
    'span 0.3, Gaussian, local-linear + band',
    (ka, s) => fitAndBand(ka, s.all, s.queries, { bandwidth: { span: 0.3 } }),
  ],
  [
    'span-tricube',
    'span 0.3, tricube, local-linear + band',
    (ka, s) => fitAndBand(ka, s.all, s.queries, { kernel: 'tricube', bandwidth: { span: 0.3 } }),
  ],
  [
    'span-tricube-nw',
    'span 0.3, tricube, Nadaraya–Watson + band',
    (ka, s) =>
      fitAndBand(ka, s.all, s.queries, { kernel: 'tricube', estimator: 'nadaraya-watson', bandwidth: { span: 0.3 } }),
  ],
  ['lowess', 'LOWESS f = 0.67, 3 iterations', (ka, s) => ka.lowess(s.all.x, s.all.y, { frac: 0.67, iterations: 3 })],
  [
    'loess',
    'loess span 0.75, degree 2 + band',
    (ka, s) => {
      const m = ka.loess(s.all.x, s.all.y, { dim: 1, span: 0.75, degree: 2 });
      m.predictInterval(s.queries, { level: 0.95 });
      m.dispose();
    },
  ],
  [
    'views',
    'attention views: kernel + softmax identity (300 queries)',
    (ka, s) => attentionView(ka, s.all, s.queries, H),
  ],
  [
    'matrix',
    'attention matrix (40 queries, every key)',
    (ka, s) => attentionMatrix(ka, s.all, s.queries, H, 'gaussian', null),
  ],
  [
    'select',
    'bandwidth search: CV (selectBandwidthAsync)',
    (ka, s) => ka.selectBandwidthAsync(s.all.x, s.all.y, { dim: 1, rule: 'cv' }),
  ],
  [
    'blocked',
    'bandwidth search: blocked CV, exclude 0.05',
    (ka, s) => ka.selectBandwidthAsync(s.all.x, s.all.y, { dim: 1, rule: 'cv', exclude: 0.05 }),
  ],
  ['aicc', 'bandwidth search: AICc', (ka, s) => ka.selectBandwidthAsync(s.all.x, s.all.y, { dim: 1, rule: 'aicc' })],
].filter(([name]) => !ONLY || ONLY.split(',').includes(name));

async function time(fn) {
  const t0 = performance.now();
  await fn();
  return (performance.now() - t0) / 1000;
}

const ka = await init({ threads: 1 });
const results = new Map(PATHS.map(([name]) => [name, []]));
for (const n of SIZES) {
  const { x, y } = generate('sine', n);
  const s = samplesOf(x, y, 1);
  const kept = { model: ka.kernelRegression(s.all.x, s.all.y, { dim: 1, bandwidth: H }) };
  for (const [name, , fn] of PATHS) {
    const row = results.get(name);
    if (row.length && !(row.at(-1) <= SKIP)) {
      row.push(NaN);
      continue;
    }
    const first = await time(() => fn(ka, s, kept));
    let seconds = first;
    if (first < LONG) {
      const times = [];
      for (let r = 0; r < ROUNDS; r++) times.push(await time(() => fn(ka, s, kept)));
      seconds = median(times);
    }
    row.push(seconds);
    process.stderr.write(`${name} n=${n}: ${seconds.toFixed(3)} s\n`);
  }
  kept.model.dispose();
}
const fmt = (v) => (Number.isNaN(v) ? 'not run' : v < 1 ? `${(v * 1000).toPrecision(3)} ms` : `${v.toFixed(2)} s`);
console.log(`| path | what the page runs | ${SIZES.map((n) => `n = ${n.toLocaleString('en')}`).join(' | ')} |`);
console.log(`|---|---|${SIZES.map(() => '---|').join('')}`);
for (const [name, what] of PATHS) console.log(`| ${name} | ${what} | ${results.get(name).map(fmt).join(' | ')} |`);
console.log('');
console.log(
  `${describeMachine().join('; ')}; ${describeSource()}; load average ${(await import('node:os'))
    .loadavg()
    .map((v) => v.toFixed(1))
    .join(' ')}`,
);
