// `npm run bench`: every contender on every case, one cell at a time (never two at once), then the tables on stdout
// and in docs/benchmarks.md; then the approximations (approximations.mjs, also runnable alone) into
// docs/benchmarks-approximations.md. The policy for each cell is in measure.mjs.
//   node bench/run.mjs [--cases=A-1024,B-1000,select,approx,progress,backward,span] [--no-write]   (a --cases run never writes the docs)
import { fileURLToPath } from 'node:url';
import { approximationsSection } from './approximations.mjs';
import { chooseCpu, useAll, useOne } from './affinity.mjs';
import { measureCeilings } from './ceiling.mjs';
import { describeMachine, describeSource, watchOtherLoad } from './machine.mjs';
import { measureCell, median } from './measure.mjs';
import { kernelSmooth } from './peers/kernel-smooth.mjs';
import { naiveJs } from './peers/naive.mjs';
import { native } from './peers/native.mjs';
import { ours } from './peers/ours.mjs';
import { tfjsWasm } from './peers/tfjs.mjs';
import { torch } from './peers/torch.mjs';
import { renderReport, table, writeReport } from './report.mjs';
import { benchSelection } from './selection.mjs';
import { benchBackward } from './backward.mjs';
import { benchLoess } from './loess.mjs';
import { benchSpan } from './span.mjs';
import { benchLowess } from './lowess.mjs';
import { benchMixed } from './mixed.mjs';
import { benchScale } from './scale.mjs';
import { benchScaleTable } from './scale-table.mjs';
import { benchProgress } from './progress.mjs';
import { attentionCase, checkedRows, naiveRows, regressionCase, relativeError } from './workloads.mjs';

// One line per row of every table. The first is ours: the "ours ÷ this" column of every row refers to it.
const contenders = [
  ours(),
  ours({ label: 'ours: wasm SIMD, 2 threads', initOptions: { threads: 2 }, threads: 2 }),
  native('sse4.1'),
  native('avx2'),
  naiveJs(),
  kernelSmooth(),
  tfjsWasm(),
  torch(1),
  torch(2),
];

const caseMakers = [
  () => attentionCase(1024),
  () => attentionCase(4096),
  () => regressionCase(1e3),
  () => regressionCase(1e4),
  () => regressionCase(1e5),
];

const args = process.argv.slice(2);
const only = args
  .find((a) => a.startsWith('--cases='))
  ?.slice('--cases='.length)
  .split(',');
const write = !only && !args.includes('--no-write');
// The exact engine's tables run unless --cases names only the separate sections (select, approx, lowess, …).
const sections = ['select', 'approx', 'progress', 'backward', 'lowess', 'loess', 'span', 'scale', 'table', 'mixed'];
const runCases = !only || only.some((id) => !sections.includes(id));
const log = (line) => process.stderr.write(`${line}\n`);
const started = performance.now();
const machine = describeMachine(); // before any pinning narrows what the process sees
const otherLoad = watchOtherLoad();

const available = [];
const notes = [];
for (const who of runCases ? contenders : []) {
  try {
    const note = await who.start();
    available.push(who);
    notes.push(`${who.label}: ${note || 'started'}`);
  } catch (error) {
    notes.push(`${who.label}: not available (${error.message.split('\n')[0]})`);
  }
  log(notes.at(-1));
}

const natives = available.filter((who) => who.probe);

// The probe that picks the vCPU for one-thread cells (affinity.mjs): workload A at 1,024² through our single-thread
// contender, median of 5 calls. The L1 dot probe missed a difference between the vCPUs that this workload showed (1.47×).
async function attentionProbe(who) {
  const c = attentionCase(1024);
  const cell = await who.load(c, c.I);
  return async () => {
    const seconds = [];
    for (let n = 0; n < 5; n++) seconds.push(await cell.run());
    return c.work / median(seconds) / 1e9;
  };
}
const ours1 = available.includes(contenders[0]) && contenders[0];
const pinning =
  runCases && ours1 && (await chooseCpu(await attentionProbe(ours1), `attention 1,024² (${ours1.label})`));
if (pinning) log(pinning);
if (runCases) log('ceiling probes…');
let ceilings = runCases ? await measureCeilings(natives) : {}; // again after every case: see ceiling.mjs

const cases = [];
const results = new Map();
const previous = new Map(); // `${label} ${kind}` → that contender's result on the previous case of the workload
for (const make of caseMakers) {
  const c = make();
  if (only && !only.includes(c.id)) continue;
  cases.push(c);
  const rows = checkedRows(c);
  const reference = naiveRows(c, rows);
  const cells = [];
  for (const who of available) {
    if (who.supports && !who.supports(c)) continue;
    const key = `${who.label} ${c.kind}`;
    try {
      if (who.threads > 1) useAll();
      else useOne();
      const result = await measureCell(who, c, previous.get(key), rows);
      result.error = relativeError(c, reference, result.output);
      delete result.output;
      previous.set(key, result);
      cells.push({ who, result });
      log(
        `${c.id.padEnd(8)} ${who.label.padEnd(40)} ${result.seconds.toFixed(4)} s × ${result.runs}` +
          `${result.rows < c.I ? ` on ${result.rows} rows` : ''}  ${result.throughput.toPrecision(3)} ${c.unit}` +
          `  error ${result.error.toExponential(1)}`,
      );
    } catch (error) {
      cells.push({ who, failure: error.message.split('\n')[0] });
      log(`${c.id.padEnd(8)} ${who.label.padEnd(40)} failed: ${error.stack}`);
    }
  }
  results.set(c.id, cells);
  ceilings = await measureCeilings(natives, ceilings);
}

for (const who of available) await Promise.resolve(who.close?.()).catch(() => {});

// Bandwidth selection against statsmodels (its own table; `--cases=select` runs only this).
let selection = '';
if (!only || only.includes('select')) {
  log('bandwidth selection…');
  selection = await benchSelection(log).catch((error) => `### Bandwidth selection\n\nfailed: ${error.message}`);
}

// Progress reporting's cost (issue 8) and the backward pass against the forward (issue 9): each times its two calls
// side by side on one thread (`--cases=progress`, `--cases=backward` run only these).
const extra = [];
useOne(); // these sections and the approximations run on one thread
if (!only || only.includes('progress')) {
  log('progress reporting…');
  extra.push(await benchProgress(log).catch((error) => `### Progress reporting\n\nfailed: ${error.message}`));
}
if (!only || only.includes('backward')) {
  log('backward pass…');
  extra.push(
    await benchBackward()
      .then(({ header, rows }) =>
        [
          '### Backward pass: attentionGradients against attention()',
          '',
          'Softmax, one thread; the backward alone is the difference of the two medians (issue 9 asks for at most 2.5× the forward).',
          '',
          table(header, rows),
        ].join('\n'),
      )
      .catch((error) => `### Backward pass\n\nfailed: ${error.message}`),
  );
}

// LOWESS against statsmodels (issue 23; `--cases=lowess` runs only this): minutes, most of them statsmodels'.
if (!only || only.includes('lowess')) {
  log('lowess…');
  extra.push(await benchLowess(log).catch((error) => `### LOWESS\n\nfailed: ${error.message}`));
}

// loess against R's loess() (issue 30; `--cases=loess` runs only this): R's rows are skipped without Rscript.
if (!only || only.includes('loess')) {
  log('loess…');
  extra.push(await benchLoess(log).catch((error) => `### loess\n\nfailed: ${error.message}`));
}
// Exact span fits against R's loess(surface = "direct") (issue 30; `--cases=span` runs only this).
if (!only || only.includes('span')) {
  log('span…');
  extra.push(await benchSpan(log).catch((error) => `### Exact span fits\n\nfailed: ${error.message}`));
}

// Mixed data (issue 33; `--cases=mixed` runs only this): a mixed fit against the continuous fit, and the (h, λ) search
// against statsmodels' cv_ls at n = 1,000 (a minute or two, most of it statsmodels').
if (!only || only.includes('mixed')) {
  log('mixed data…');
  extra.push(await benchMixed(log).catch((error) => `### Mixed data\n\nfailed: ${error.message}`));
}

// Every entry point at 10⁴–10⁶ points against R and statsmodels, and as ratios to the plain fit (issue 31;
// `--cases=scale` runs only this): minutes.
if (!only || only.includes('scale')) {
  log('scale…');
  extra.push(await benchScale(log).catch((error) => `### Every entry point at scale\n\nfailed: ${error.message}`));
}

// Each smoother against every peer at n = 10³ … 10⁶, with its log–log figure docs/benchmarks-scale.svg (issue 31;
// `--cases=table` runs only this): minutes.
if (!only || only.includes('table')) {
  log('scale table…');
  // Its figure whenever the whole table runs (`--cases=table` too), unless --no-write.
  const figure = !args.includes('--no-write');
  extra.push(
    await benchScaleTable(log, { write: figure }).catch((error) => `### The scale table\n\nfailed: ${error.message}`),
  );
}

const markdown =
  runCases &&
  renderReport({
    command: 'npm run bench',
    date: new Date().toISOString().slice(0, 10),
    seconds: (performance.now() - started) / 1e3,
    machine: [
      ...machine,
      `other processes kept ${otherLoad().toFixed(2)} cores busy on average during the run`,
      pinning || 'one-thread cells not pinned',
    ],
    source: describeSource(),
    notes,
    ceilings,
    cases,
    results,
    baseline: contenders[0],
  });
const report = [markdown, selection, ...extra].filter(Boolean).join('\n\n');
if (report) console.log(report);
if (write) {
  const path = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url));
  writeReport(path, report);
  log(`written to ${path}`);
}

// The approximations (issue 5, item 7): their own page and figures, docs/benchmarks-approximations.md.
if (!only || only.includes('approx')) {
  log('approximations…');
  await approximationsSection({ command: 'npm run bench', write, log }).catch((error) => {
    log(`approximations failed: ${error.stack}`);
    process.exitCode = 1;
  });
}
