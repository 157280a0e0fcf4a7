// Every entry point at scale (issue 31): the default fits against R's automatic smoothers (KernSmooth's dpill +
// locpoly in 1-D, loess in 2-D and 3-D; the R peer, bench/peers/r.mjs), the n = 1,000 selection against statsmodels' KernelReg cv_ls, and each
// other entry point as a ratio to the plain fit or prediction of the same model, at n = 10⁴, 10⁵, 10⁶: one thread,
// one run, the same data for every contender. `npm run bench` includes it (bench/run.mjs, section 'scale').
//   node bench/scale.mjs [--sizes=1e4,1e5,1e6] [--cases=fit1,fit2,fit3,mixed,select,far,far2,robust,interval,gradient,async,
//                        exclude] [--far2-h=0.02,0.05 (far2's bandwidths)]
//                        [--src=DIR (web/src by default: another build to compare)] [--no-peers]
//                        [--fit-rounds=3 (interleaved rounds of the fits and searches compared)]
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median } from './measure.mjs';
import { rAvailable, rPeer } from './peers/r.mjs';
import { mulberry32, normal } from './workloads.mjs';

const ALL_CASES = 'fit1,fit2,fit3,mixed,select,far,far2,robust,interval,gradient,async,exclude';
const dataDir = fileURLToPath(new URL('../build/bench/data/', import.meta.url));

/**
 * x uniform on [0, 1]^dim (unsorted), y = sin(6x) + 0.3·N(0, 1); 2-D: y = sin(6x₁) + cos(4x₂) + 0.3·N(0, 1); 3-D:
 * y = sin(6x₁) + cos(4x₂) + x₃ + 0.3·N(0, 1).
 */
export function sample(n, dim = 1, seed = 31) {
  const rand = mulberry32(seed + n + dim);
  const x = Float64Array.from({ length: n * dim }, rand);
  const y = Float64Array.from({ length: n }, (_, i) =>
    dim === 1
      ? Math.sin(6 * x[i]) + 0.3 * normal(rand)
      : Math.sin(6 * x[dim * i]) + Math.cos(4 * x[dim * i + 1]) + (dim === 3 ? x[3 * i + 2] : 0) + 0.3 * normal(rand),
  );
  return { x, y };
}

/**
 * sample(n)'s x beside an unordered column of 4 levels (x₁, level per row), y shifted by 0.5 per level: mixed data.
 */
export function mixedSample(n, seed = 33) {
  const { x, y } = sample(n);
  const rand = mulberry32(seed + n);
  const xm = new Float64Array(2 * n);
  const ym = Float64Array.from(y);
  for (let i = 0; i < n; i++) {
    const level = Math.floor(4 * rand());
    xm[2 * i] = x[i];
    xm[2 * i + 1] = level;
    ym[i] += 0.5 * level;
  }
  return { x: xm, y: ym };
}

/** Seconds of `run` (sync or async): the median of `runs` calls after one warm-up (none when a call takes > 2 s). */
export async function seconds(run, runs = 3) {
  // A run that times itself (a peer timed inside R or Python) returns its own seconds: the wall clock would add the
  // peer's data loading, its process start, and every repetition it makes.
  const once = async () => {
    const start = performance.now();
    const own = await run();
    const wall = (performance.now() - start) / 1e3;
    return typeof own === 'number' && Number.isFinite(own) ? own : wall;
  };
  const first = await once();
  if (first > 2) return first;
  const times = [];
  for (let k = 0; k < runs; k++) times.push(await once());
  return median(times);
}

/**
 * Median seconds of each of `runs` (sync or async), called in turn `rounds` times with the order rotating each round,
 * so that the shared machine's drifting load falls on all alike; after one warm-up call each, unless a first call
 * takes over 2 s (it then counts as a round).
 */
async function interleavedSeconds(runs, rounds) {
  const once = async (run) => {
    const start = performance.now();
    await run();
    return (performance.now() - start) / 1e3;
  };
  const times = [];
  for (const run of runs) {
    const first = await once(run);
    times.push(first > 2 ? [first] : []);
  }
  for (let r = times[0].length; r < rounds; r++)
    for (let k = 0; k < runs.length; k++) {
      const j = (k + r) % runs.length;
      times[j].push(await once(runs[j]));
    }
  return times.map(median);
}

/**
 * R's seconds on the same sample, through the R peer (bench/peers/r.mjs): KernSmooth's dpill then locpoly at the
 * bandwidth it chose (1-D; locpoly's defaults: local-linear, 401 grid points), or loess with its defaults but the
 * approximate trace R recommends above about 1,000 points (2-D); each the median of three timed runs. NaN without R.
 */
async function rSeconds(r, what, x, y, n, dim) {
  if (!r) return NaN;
  const timed = async () => median([await r.run(), await r.run(), await r.run()].map((t) => t.seconds));
  if (what === 'loess') {
    await r.load('loess', x, y, n, [dim, 0.75, 2, 'gaussian', 'interpolate', 'approximate']);
    return timed();
  }
  await r.load('dpill', x, y, n, []);
  const select = await timed();
  const [h] = await r.output();
  await r.load('locpoly', x, y, n, [1, h, 401]);
  return select + (await timed());
}

/** statsmodels' KernelReg cv_ls (bench/statsmodels_select.py, Nadaraya–Watson) on the same sample; NaN without it. */
function statsmodelsSeconds(x, y, n, log) {
  mkdirSync(dataDir, { recursive: true });
  const [xp, yp] = ['x', 'y'].map((name) => `${dataDir}scale-select-${n}.${name}.f32`);
  writeFileSync(xp, Float32Array.from(x));
  writeFileSync(yp, Float32Array.from(y));
  try {
    const script = fileURLToPath(new URL('./statsmodels_select.py', import.meta.url));
    const out = execFileSync('/usr/bin/python3', [script, xp, yp, String(n), 'lc'], { encoding: 'utf8' });
    const reply = JSON.parse(out.trim().split('\n').at(-1));
    if (reply.error) throw new Error(reply.error);
    return reply.seconds;
  } catch (error) {
    log(`statsmodels: not available (${error.message.split('\n')[0]})`);
    return NaN;
  }
}

/**
 * A 2-D grid model's predictions beyond the data against those inside (issue 31): 512 rows 15 h right of the data
 * against 512 inside, and a 100 × 100 grid over the data padded 10 % on every side against one over the data, all
 * interleaved on one model (21 rounds: the shared machine's load moves these millisecond calls by 2-3×) (Gaussian, local-linear, bandwidth h on both axes); then a fresh model's fit and its first
 * padded grid (which makes the far tables), each the median of three models.
 */
async function farRows2d(ka, n, h, row) {
  const { x, y } = sample(n, 2);
  const rand = mulberry32(7 + n);
  const inside = Float64Array.from({ length: 1024 }, () => 0.1 + 0.8 * rand());
  const right = Float64Array.from(inside, (q, i) => (i % 2 ? q : 1 + 15 * h * (1 + 0.2 * q)));
  const lattice = (lo, hi) =>
    Float64Array.from({ length: 2e4 }, (_, k) => {
      const i = Math.floor(k / 2) % 100,
        j = Math.floor(k / 200);
      return lo + ((hi - lo) * (k % 2 ? j : i)) / 99;
    });
  const within = lattice(0, 1),
    padded = lattice(-0.1, 1.1);
  const options = { dim: 2, bandwidth: [h, h] };
  const model = ka.kernelRegression(x, y, options);
  const [a, b, c, d] = await interleavedSeconds(
    [() => model.predict(inside), () => model.predict(right), () => model.predict(within), () => model.predict(padded)],
    21,
  );
  row(n, `2-D h=${h}: predict 512 15 h right of the data`, b, a, 'predict 512 inside');
  row(n, `2-D h=${h}: predict 100 x 100 padded 10 %`, d, c, 'predict 100 x 100 over the data');
  model.dispose();
  const fits = [],
    firsts = [];
  for (let k = 0; k < 3; k++) {
    let start = performance.now();
    const fresh = ka.kernelRegression(x, y, options);
    fresh.predict(within);
    fits.push((performance.now() - start) / 1e3);
    start = performance.now();
    fresh.predict(padded);
    firsts.push((performance.now() - start) / 1e3);
    fresh.dispose();
  }
  row(
    n,
    `2-D h=${h}: a model's first padded 100 x 100 (far tables made)`,
    median(firsts),
    median(fits),
    'fit + predict 100 x 100 over the data',
  );
}

const fmt = (s) => (Number.isFinite(s) ? (s < 0.01 ? s.toPrecision(2) : s.toFixed(3)) : '—');
const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? (a / b).toFixed(2) : '—');

/** Runs the rows and returns their Markdown table; `log` receives a line per row. */
export async function benchScale(
  log,
  {
    sizes = [1e4, 1e5, 1e6],
    cases = ALL_CASES.split(','),
    src = null,
    peers = true,
    fitRounds = 3,
    far2h = [0.02, 0.05],
  } = {},
) {
  const index = src ? pathToFileURL(`${src}/index.js`).href : new URL('../web/src/index.js', import.meta.url).href;
  const ka = await (await import(index)).init({ threads: 1 });
  const missing = peers ? rAvailable() : 'R not asked for';
  if (missing) log(`scale: ${missing}`);
  const r = missing ? null : rPeer();
  const rVersion = r ? await r.start() : null;
  const rows = [];
  const row = (n, what, ours, peer, peerLabel) => {
    rows.push({ n, what, ours, peer, peerLabel });
    log(
      `scale n=${n} ${what}: ${fmt(ours)} s${peerLabel ? `, ${peerLabel} ${fmt(peer)} s (${ratio(ours, peer)})` : ''}`,
    );
  };
  const has = (c) => cases.includes(c);
  for (const n of sizes) {
    const { x, y } = sample(n);
    const inside = Float64Array.from({ length: 512 }, (_, i) => (i + 0.5) / 512);
    if (has('fit1')) {
      const ours = await seconds(() => ka.kernelRegression(x, y, { dim: 1 }).dispose());
      row(n, '1-D default fit', ours, await rSeconds(r, 'locpoly', x, y, n, 1), 'R dpill + locpoly');
    }
    if (has('fit2') && n <= 1e5) {
      const s2 = sample(n, 2);
      const ours = await seconds(() => ka.kernelRegression(s2.x, s2.y, { dim: 2 }).dispose(), 1);
      row(n, '2-D default fit', ours, await rSeconds(r, 'loess', s2.x, s2.y, n, 2), 'R loess (2-D)');
    }
    // 3-D runs exactly (no grid in 3-D): each CV score near the minimum and above it visits about half the pairs,
    // some 8 s a fit at 10⁴ points, so 10⁵ (about 100 times that) is left out.
    if (has('fit3') && n <= 1e4) {
      const s3 = sample(n, 3);
      const ours = await seconds(() => ka.kernelRegression(s3.x, s3.y, { dim: 3 }).dispose(), 1);
      row(n, '3-D default fit', ours, await rSeconds(r, 'loess', s3.x, s3.y, n, 3), 'R loess (3-D)');
    }
    // Mixed data: the joint search over (h, λ) scores on grids per combination of levels, and the model's fits bin
    // each group over every point (docs/regression.md, "On the grid").
    if (has('mixed')) {
      const m = mixedSample(n);
      const types = ['continuous', 'unordered'];
      const [mixed, plain] = await interleavedSeconds(
        [
          () => ka.kernelRegression(m.x, m.y, { dim: 2, types }).dispose(),
          () => ka.kernelRegression(x, y, { dim: 1 }).dispose(),
        ],
        fitRounds,
      );
      row(n, 'default fit, 1 continuous + 1 unordered (4 levels)', mixed, plain, '1-D default fit');
    }
    // The grid model's far tables: from 10⁵ points (at 10⁴ the model is exact under 'auto', and 21 rounds of exact
    // padded lattices would take minutes).
    if (has('far2') && n >= 1e5) for (const h of far2h) await farRows2d(ka, n, h, row);
    if (['far', 'robust', 'interval', 'gradient'].some(has)) {
      const fitted = () => ka.kernelRegression(x, y, { dim: 1 });
      const model = fitted();
      const predict = () => model.predict(inside);
      if (has('far')) {
        // 20 bandwidths and more beyond either end: the rows no grid node reaches. Interleaved with the predictions
        // inside; and the first such call of a model at that bandwidth, which makes its far tables.
        const h = model.bandwidth[0];
        const right = Float64Array.from(inside, (q) => 1 + 20 * h + q);
        const left = Float64Array.from(inside, (q) => -20 * h - q);
        const [within, r, l] = await interleavedSeconds(
          [predict, () => model.predict(right), () => model.predict(left)],
          11,
        );
        row(n, 'predict 512 beyond the right end', r, within, 'predict 512 inside');
        row(n, 'predict 512 beyond the left end', l, within, 'predict 512 inside');
        const firsts = [];
        for (let k = 0; k < 3; k++) {
          const fresh = ka.kernelRegression(x, y, { dim: 1, bandwidth: h });
          fresh.predict(inside);
          const start = performance.now();
          fresh.predict(right);
          fresh.predict(left);
          firsts.push((performance.now() - start) / 2e3);
          fresh.dispose();
        }
        row(n, "predict 512 beyond an end, a model's first call", median(firsts), within, 'predict 512 inside');
        // The first such call at another bandwidth of the same model (withBandwidth keeps the sorted sample): the
        // far tables alone.
        const others = [];
        for (let k = 0; k < 3; k++) {
          const other = model.withBandwidth(h * (1.1 + 0.1 * k));
          other.predict(inside);
          const start = performance.now();
          other.predict(right);
          other.predict(left);
          others.push((performance.now() - start) / 2e3);
          other.dispose();
        }
        row(
          n,
          'predict 512 beyond an end, first call at another bandwidth',
          median(others),
          within,
          'predict 512 inside',
        );
      }
      if (has('gradient')) {
        const [p, g] = await interleavedSeconds([predict, () => model.gradient(inside)], 11);
        row(n, 'gradient 512', g, p, 'predict 512');
      }
      model.dispose();
      const heavy = [];
      if (has('robust'))
        heavy.push(['robust fit (3 iterations)', () => ka.kernelRegression(x, y, { dim: 1, robust: true }).dispose()]);
      if (has('interval'))
        heavy.push([
          "fit + predictInterval, variance 'local'",
          () => {
            const m = fitted();
            m.predictInterval(inside, { variance: 'local' });
            m.dispose();
          },
        ]);
      if (heavy.length) {
        const [fit, ...others] = await interleavedSeconds(
          [() => fitted().dispose(), ...heavy.map(([, run]) => run)],
          fitRounds,
        );
        heavy.forEach(([what], k) => row(n, what, others[k], fit, 'fit'));
      }
    }
    if (has('async')) {
      const [sync, stepped] = await interleavedSeconds(
        [() => ka.selectBandwidth(x, y, { dim: 1 }), () => ka.selectBandwidthAsync(x, y, { dim: 1 })],
        fitRounds,
      );
      row(n, 'selectBandwidthAsync', stepped, sync, 'selectBandwidth');
    }
    if (has('exclude') && n <= 1e5) {
      const blocked = await seconds(() => ka.selectBandwidth(x, y, { dim: 1, exclude: 5 / n }), 1);
      row(n, 'blocked CV search (exclude: 5 spacings)', blocked);
    }
  }
  if (has('select')) {
    // bench/selection.mjs's sample at n = 1,000.
    const rand = mulberry32(40 + 1000);
    const x = Float32Array.from({ length: 1000 }, rand);
    const y = Float32Array.from(x, (t) => Math.sin(2 * Math.PI * t) + 0.3 * normal(rand));
    const ours = await seconds(() => ka.selectBandwidth(x, y, { dim: 1, estimator: 'nadaraya-watson' }), 7);
    row(
      1000,
      'LOO-CV selection, Nadaraya–Watson',
      ours,
      peers ? statsmodelsSeconds(x, y, 1000, log) : NaN,
      'statsmodels cv_ls',
    );
  }
  await r?.close();
  return [
    '### Every entry point at scale',
    '',
    'x uniform on [0, 1], y = sin 6x + 0.3·N(0, 1) (2-D: sin 6x₁ + cos 4x₂ + noise; 3-D: plus x₃); the default fit is',
    '`kernelRegression(x, y, { dim })` (bandwidth by CV, local-linear, method auto); one thread, one run (median of',
    `three calls after a warm-up where a call takes under 2 s); R ${rVersion ?? 'not available'}, timed inside R.`,
    'Ratios to the plain fit or prediction are of medians of interleaved calls (11 rounds for predictions and',
    `gradients, ${fitRounds} for fits and searches; the order rotating each round). "ratio" is ours ÷ the other column.`,
    '',
    '| n | case | ours (s) | against | its time (s) | ratio |',
    '| ---: | --- | ---: | --- | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.n.toLocaleString('en')} | ${r.what} | ${fmt(r.ours)} | ${r.peerLabel ?? '—'} | ${fmt(r.peer)} | ${ratio(r.ours, r.peer)} |`,
    ),
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name, fallback) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
  const markdown = await benchScale((line) => console.error(line), {
    sizes: option('sizes', '1e4,1e5,1e6').split(',').map(Number),
    cases: option('cases', ALL_CASES).split(','),
    src: option('src', null),
    peers: !args.includes('--no-peers'),
    fitRounds: Number(option('fit-rounds', '3')),
    far2h: option('far2-h', '0.02,0.05').split(',').map(Number),
  });
  console.log(markdown);
}
