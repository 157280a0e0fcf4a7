// The scale table (issue 31, item 4): each smoother people run, at n = 10³ … 10⁶, ours beside every peer that
// computes the same thing (R's KernSmooth, loess and lowess; statsmodels; d3-regression's and vega-statistics'
// loess; fast-kde where a binned density applies), one thread, one run, the same data for all. The Markdown table
// gives seconds and each row's fitted order (the slope of log time against log n over n ≥ 10⁴); the SVG draws them
// on log–log axes (docs/benchmarks-scale.svg, written for a run of every row at every size, unless --no-write).
// `npm run bench` includes it (bench/run.mjs, section 'table').
//   node bench/scale-table.mjs [--sizes=1e3,1e4,1e5,1e6] [--rows=default,plugin,loess,span,lowess,binned,fit2]
//                              [--budget=4 (seconds: a contender slower than this at one n skips the larger ones)]
//                              [--no-write]
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { median } from './measure.mjs';
import { logLogChart } from './plot.mjs';
import { rAvailable, rPeer } from './peers/r.mjs';
import { sample, seconds } from './scale.mjs';

const ALL_ROWS = 'default,plugin,loess,span,lowess,binned,fit2';
const dataDir = fileURLToPath(new URL('../build/bench/data/', import.meta.url));
const figure = fileURLToPath(new URL('../docs/benchmarks-scale.svg', import.meta.url));

/** statsmodels' lowess on the same sample (bench/statsmodels_lowess.py times it inside Python). */
function statsmodelsLowess(x, y, n, frac, iterations) {
  mkdirSync(dataDir, { recursive: true });
  const [xp, yp, out] = ['x', 'y', 'fit'].map((name) => `${dataDir}table-${name}.f64`);
  writeFileSync(xp, x);
  writeFileSync(yp, y);
  const script = fileURLToPath(new URL('./statsmodels_lowess.py', import.meta.url));
  const args = [script, xp, yp, String(n), String(frac), String(iterations), '0', out];
  const reply = JSON.parse(execFileSync('/usr/bin/python3', args, { encoding: 'utf8' }).trim().split('\n').at(-1));
  if (reply.error) throw new Error(reply.error);
  return reply.seconds;
}

/** R's seconds: the median of three runs timed inside R (bench/r_peer.R). */
async function rTimed(r, command, x, y, n, args) {
  await r.load(command, x, y, n, args);
  return median([await r.run(), await r.run(), await r.run()].map((t) => t.seconds));
}

/**
 * The rows: for each, the contenders as [label, dim, (ka, x, y, n) → seconds]. Each row computes one thing: the
 * same estimator, span or bandwidth rule, and number of robustness iterations for every contender in it.
 */
function rows(ka, r, peers) {
  const rOr = (fn) => (r ? [fn] : []);
  const dpillLocpoly = async (x, y, n) => {
    const select = await rTimed(r, 'dpill', x, y, n, []);
    const [h] = await r.output();
    return select + (await rTimed(r, 'locpoly', x, y, n, [1, h, 401]));
  };
  const lowess = { frac: 0.3, iterations: 2 }; // d3-regression's and vega's fixed choices (2 robustness iterations)
  return {
    default: {
      title: '1-D default fit',
      what: "`kernelRegression(x, y, { dim: 1 })` (CV bandwidth, local-linear) against R's automatic smoother, `dpill` + `locpoly`",
      dim: 1,
      contenders: [
        ['ours', (x, y) => ka.kernelRegression(x, y, { dim: 1 }).dispose()],
        ...rOr(['R KernSmooth', dpillLocpoly]),
      ],
    },
    plugin: {
      title: '1-D plug-in fit',
      what: "`kernelRegression(x, y, { dim: 1, bandwidth: 'plugin' })` against `dpill` + `locpoly`",
      dim: 1,
      contenders: [
        ['ours', (x, y) => ka.kernelRegression(x, y, { dim: 1, bandwidth: 'plugin' }).dispose()],
        ...rOr(['R KernSmooth', dpillLocpoly]),
      ],
    },
    loess: {
      title: 'loess, span 0.3, degree 2',
      what: "`ka.loess(x, y, { span: 0.3 })` against R's `loess(span = 0.3)` (interpolating surface, approximate trace)",
      dim: 1,
      contenders: [
        ['ours', (x, y) => ka.loess(x, y, { span: 0.3 }).dispose()],
        ...rOr([
          'R loess',
          (x, y, n) => rTimed(r, 'loess', x, y, n, [1, 0.3, 2, 'gaussian', 'interpolate', 'approximate']),
        ]),
      ],
    },
    span: {
      title: 'exact span fit, span 0.3, degree 1',
      what: "`kernelRegression(x, y, { bandwidth: { span: 0.3 }, kernel: 'tricube' })` against R's `loess(span = 0.3, degree = 1, surface = 'direct')`",
      dim: 1,
      contenders: [
        [
          'ours',
          (x, y) => ka.kernelRegression(x, y, { dim: 1, bandwidth: { span: 0.3 }, kernel: 'tricube' }).dispose(),
        ],
        ...rOr(['R loess', (x, y, n) => rTimed(r, 'loess', x, y, n, [1, 0.3, 1, 'gaussian', 'direct', 'approximate'])]),
      ],
    },
    lowess: {
      title: 'LOWESS, f = 0.3, 2 robustness iterations, every point',
      what: 'f = 0.3, 2 robustness iterations and a fit at every point (delta 0), the choices d3-regression and vega fix',
      dim: 1,
      contenders: [
        ['ours', (x, y) => ka.lowess(x, y, { ...lowess, delta: 0 })],
        ...rOr(['R lowess', (x, y, n) => rTimed(r, 'lowess', x, y, n, [lowess.frac, lowess.iterations, 0])]),
        ...(peers.statsmodels
          ? [['statsmodels', (x, y, n) => statsmodelsLowess(x, y, n, lowess.frac, lowess.iterations)]]
          : []),
        ...(peers.d3 ? [['d3-regression', (x, y) => peers.d3().bandwidth(lowess.frac)(points(x, y))]] : []),
        ...(peers.vega
          ? [
              [
                'vega-statistics',
                (x, y) =>
                  peers.vega(
                    points(x, y),
                    (d) => d[0],
                    (d) => d[1],
                    lowess.frac,
                  ),
              ],
            ]
          : []),
      ],
    },
    binned: {
      title: 'binned density, 512 nodes',
      what: "`kernelRegression(x, y, { bandwidth: 0.01, estimator: 'nadaraya-watson', method: 'grid' })` (binned, as below 20,000 points `'auto'` is not) fitted and predicted at 512 nodes against fast-kde's `density1d` (the same Gaussian h, 512 bins): the density is NW's denominator",
      dim: 1,
      contenders: [
        [
          'ours',
          (x, y) => {
            const model = ka.kernelRegression(x, y, {
              dim: 1,
              bandwidth: 0.01,
              estimator: 'nadaraya-watson',
              method: 'grid',
            });
            model.predict(Float64Array.from({ length: 512 }, (_, i) => i / 511));
            model.dispose();
          },
        ],
        ...(peers.kde
          ? [['fast-kde', (x) => peers.kde(x, { bandwidth: 0.01, bins: 512, extent: [0, 1] }).grid()]]
          : []),
      ],
    },
    fit2: {
      title: '2-D default fit',
      what: "`kernelRegression(x, y, { dim: 2 })` against R's 2-D `loess` with its defaults (approximate trace)",
      dim: 2,
      contenders: [
        ['ours', (x, y) => ka.kernelRegression(x, y, { dim: 2 }).dispose()],
        ...rOr([
          'R loess',
          (x, y, n) => rTimed(r, 'loess', x, y, n, [2, 0.75, 2, 'gaussian', 'interpolate', 'approximate']),
        ]),
      ],
    },
  };
}

const points = (x, y) => Array.from(x, (v, i) => [v, y[i]]);

/** Least-squares slope of log t against log n over the points with n ≥ 10⁴ (fixed costs dominate below). */
function order(series) {
  const p = series
    .filter(([n, t]) => n >= 1e4 && Number.isFinite(t) && t > 0)
    .map(([n, t]) => [Math.log(n), Math.log(t)]);
  if (p.length < 2) return NaN;
  const mx = p.reduce((s, [a]) => s + a, 0) / p.length;
  const my = p.reduce((s, [, b]) => s + b, 0) / p.length;
  const sxy = p.reduce((s, [a, b]) => s + (a - mx) * (b - my), 0);
  const sxx = p.reduce((s, [a]) => s + (a - mx) ** 2, 0);
  return sxy / sxx;
}

async function optionalPeers(log) {
  const load = async (name, pick) => {
    try {
      return pick(await import(name)); // devDependencies (node_modules), as the other peers
    } catch (error) {
      log(`table: ${name} not available (${error.message.split('\n')[0]})`);
      return null;
    }
  };
  let statsmodels = true;
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import statsmodels'], { stdio: 'ignore' });
  } catch {
    statsmodels = false;
    log('table: statsmodels not available (Debian: apt-get install python3-statsmodels)');
  }
  return {
    statsmodels,
    d3: await load('d3-regression', (m) => m.regressionLoess),
    vega: await load('vega-statistics', (m) => m.regressionLoess),
    kde: await load('fast-kde', (m) => m.density1d),
  };
}

const fmt = (s) => (Number.isFinite(s) ? (s < 0.01 ? s.toPrecision(2) : s.toFixed(3)) : '—');

/** Runs the rows; returns the Markdown section and writes the figure (unless `write` is false). */
export async function benchScaleTable(
  log,
  { sizes = [1e3, 1e4, 1e5, 1e6], only = ALL_ROWS.split(','), budget = 4, write = true } = {},
) {
  const ka = await (await import('../web/src/index.js')).init({ threads: 1 });
  const missing = rAvailable();
  if (missing) log(`table: ${missing}`);
  const r = missing ? null : rPeer();
  const rVersion = r ? await r.start() : null;
  const table = rows(ka, r, await optionalPeers(log));
  const results = [];
  for (const id of only) {
    const row = table[id];
    const series = row.contenders.map(([label]) => ({ label, points: [] }));
    for (const n of sizes) {
      const { x, y } = sample(n, row.dim, 77); // the seed of the recorded table
      for (const [k, [label, run]] of row.contenders.entries()) {
        const [before, last] = series[k].points.slice(-2);
        // The next size's cost from the slope of the last two (at least linear): a quadratic contender that took
        // 2 s at 10⁴ is not asked for 10⁵ (about 200 s).
        const slope = before && last ? Math.max(1, Math.log(last[1] / before[1]) / Math.log(last[0] / before[0])) : 1;
        if (last && !(last[1] <= budget && last[1] * (n / last[0]) ** slope <= 15 * budget)) {
          series[k].points.push([n, NaN]);
          continue;
        }
        const t = await seconds(() => run(x, y, n)).catch((error) => {
          log(`table ${id} ${label} n=${n}: failed (${error.message.split('\n')[0]})`);
          return NaN;
        });
        series[k].points.push([n, t]);
        log(`table ${id} n=${n} ${label}: ${fmt(t)} s`);
      }
    }
    results.push({ id, row, series });
  }
  await r?.close();

  const header = `| row | contender | ${sizes.map((n) => `n = ${n.toExponential(0).replace('e+', 'e')}`).join(' | ')} | order | ours ÷ it at the largest n both ran |`;
  const lines = [];
  for (const { row, series } of results) {
    const ours = series[0].points;
    for (const s of series) {
      const both = s.points.filter(([n, t], i) => Number.isFinite(t) && Number.isFinite(ours[i][1])).at(-1);
      const ratio =
        s === series[0] || !both
          ? '—'
          : `${(ours[s.points.indexOf(both)][1] / both[1]).toPrecision(3)} (n = ${both[0].toExponential(0).replace('e+', 'e')})`;
      const o = order(s.points);
      lines.push(
        `| ${s === series[0] ? row.title : ''} | ${s.label} | ${s.points.map(([, t]) => fmt(t)).join(' | ')} | ${Number.isFinite(o) ? o.toFixed(2) : '—'} | ${ratio} |`,
      );
    }
  }
  if (write) {
    const panels = results.map(({ row, series }) => ({
      title: row.title,
      xLabel: 'n (points)',
      yLabel: 'seconds',
      series: series.map((s) => ({ name: s.label, points: s.points })),
    }));
    writeFileSync(figure, logLogChart(panels, { width: 360, height: 260, names: ['ours'] }));
  }
  return [
    '### The scale table',
    '',
    `Seconds against n, one thread, one run, the same sample for every contender (x uniform on [0, 1], y = sin 6x +`,
    `0.3·N(0, 1); 2-D: sin 6x₁ + cos 4x₂ + noise); the median of three calls after a warm-up where a call takes under`,
    `2 s; "—" where a contender took over ${budget} s at the size before or its slope says the next would take over ${15 * budget} s`,
    `(its order says what it would cost), or is not installed. ${rVersion ?? 'R not available'} times inside R, statsmodels inside Python. "order" is the`,
    'slope of log time against log n over n ≥ 10⁴ (1 is linear, 2 quadratic). The rows:',
    '',
    ...results.map(({ row }) => `- **${row.title}**: ${row.what}.`),
    '',
    header,
    `| --- | --- | ${sizes.map(() => '---:').join(' | ')} | ---: | ---: |`,
    ...lines,
    '',
    '![Seconds against n on log–log axes, one panel per row](benchmarks-scale.svg)',
  ].join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (name, fallback) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
  // The figure is the whole table's: a run of fewer rows or sizes leaves it as it is.
  const sizes = option('sizes', '1e3,1e4,1e5,1e6');
  const rows = option('rows', ALL_ROWS);
  const markdown = await benchScaleTable((line) => console.error(line), {
    sizes: sizes.split(',').map(Number),
    only: rows.split(','),
    budget: Number(option('budget', '4')),
    write: sizes === '1e3,1e4,1e5,1e6' && rows === ALL_ROWS && !args.includes('--no-write'),
  });
  console.log(markdown);
}
