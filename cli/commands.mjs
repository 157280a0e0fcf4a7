// The CLI's commands: fit, predict, select-bandwidth and attention, each with its help text. Each takes its arguments
// and `api` (a function resolving to init()'s API, called only once the input has been read and checked), and returns
// its help text or writes its output; kernel-attention.mjs handles errors and exit codes.
import { choice, columnList, number, parseCommand, readInput, required, UsageError, writeOutput } from './args.mjs';
import { formatCsv, numericColumns, readTable, resolveColumns } from './csv.mjs';
import { readFloat32 } from './float32.mjs';
import { progressBar } from './progress.mjs';

const KERNELS = ['gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'];
const ESTIMATORS = ['local-linear', 'nadaraya-watson'];
const RULES = ['cv', 'aicc', 'scott', 'silverman'];

const SAMPLE_HELP = `
  --x COLS            the input column(s): names from the header or 1-based indices, comma-separated
  --y COLS            the output column(s), likewise
  --kernel K          ${KERNELS.join(', ')} (default gaussian)
  --estimator E       local-linear (default) or nadaraya-watson
  --bandwidth H       a number, one per x column (comma-separated), or a rule: ${RULES.join(', ')} (default cv)
  --delimiter D       the field separator (default: tab for .tsv files or tab-only first lines, else comma)
  --no-header         the first row is data (default: it is a header when any field is not a number)`;
const OUTPUT_HELP = `
  --format F          csv or json (default: json when --output ends in .json, else csv)
  --output FILE       write there instead of to stdout
  -q, --quiet         no progress bar (one is drawn on stderr when it is a terminal)
  -h, --help          this help`;

const SAMPLE_OPTIONS = {
  x: { type: 'string' }, y: { type: 'string' }, kernel: { type: 'string' }, estimator: { type: 'string' },
  bandwidth: { type: 'string' }, delimiter: { type: 'string' }, 'no-header': { type: 'boolean' },
  format: { type: 'string' }, output: { type: 'string' }, quiet: { type: 'boolean', short: 'q' },
};

/** Runs `work(onProgress)` with a progress bar labelled `label` on stderr (see progress.mjs), erased at the end. */
async function withProgress(label, values, work) {
  const bar = progressBar(label, { quiet: Boolean(values.quiet) });
  try {
    return await work(bar.onProgress);
  } finally {
    bar.done();
  }
}

function dataFile(positionals) {
  if (positionals[0] === undefined) throw new UsageError('the data file (FILE) is missing');
  return positionals[0];
}

const readText = (file) => readInput(file, 'utf8');

async function loadTable(file, values) {
  const delimiter = values.delimiter === '\\t' ? '\t' : values.delimiter;
  if (delimiter !== undefined && delimiter.length !== 1) throw new UsageError(`--delimiter must be one character; got ${JSON.stringify(values.delimiter)}`);
  return readTable(await readText(file), file, { delimiter, header: values['no-header'] ? false : 'auto' });
}

/** The sample of a CSV: x (n × dim), y (n × width), and the column names for output. */
async function loadSample(file, values) {
  const table = await loadTable(file, values);
  const xCols = resolveColumns(table, columnList(values, 'x'), '--x');
  const yCols = resolveColumns(table, columnList(values, 'y'), '--y');
  const name = (c, prefix, k) => (table.names ? table.names[c] : `${prefix}${k + 1}`);
  return {
    table, xCols,
    x: numericColumns(table, xCols), y: numericColumns(table, yCols), n: table.rows.length,
    dim: xCols.length, xNames: xCols.map((c, k) => name(c, 'x', k)), yNames: yCols.map((c, k) => name(c, 'y', k)),
  };
}

function bandwidthOption(values, dim) {
  const text = values.bandwidth ?? 'cv';
  if (RULES.includes(text)) return text;
  const list = text.split(',').map(Number);
  if (list.some((h) => !(h > 0) || !Number.isFinite(h)) || (list.length !== 1 && list.length !== dim)) {
    throw new UsageError(`--bandwidth must be ${RULES.join(', ')}, a positive number, or ${dim} of them; got ${JSON.stringify(text)}`);
  }
  return list.length === 1 ? list[0] : list;
}

function regressionOptions(values, dim) {
  return {
    dim,
    kernel: choice(values, 'kernel', KERNELS, 'gaussian'),
    estimator: choice(values, 'estimator', ESTIMATORS, 'local-linear'),
    bandwidth: bandwidthOption(values, dim),
  };
}

function outputFormat(values) {
  return choice(values, 'format', ['csv', 'json'], values.output?.toLowerCase().endsWith('.json') ? 'json' : 'csv');
}

/** Writes `text` to --output or stdout. */
async function emit(values, text) {
  if (values.output) await writeOutput(values.output, text);
  else process.stdout.write(text);
}

const round = (v) => (Number.isFinite(v) ? Number(v.toPrecision(9)) : v);

// ---- fit ----

const fitHelp = `Usage: kernel-attention fit FILE --x COLS --y COLS [options]

Fits a kernel regression to the columns of a CSV or TSV file and prints the model: the bandwidth (and how it was
chosen), its CV score, the effective degrees of freedom and the residual variance of each y column.
${SAMPLE_HELP}
${OUTPUT_HELP}

Example: kernel-attention fit data.csv --x time --y level --bandwidth cv --format json`;

async function fit(argv, api) {
  const { values, positionals } = parseCommand(argv, SAMPLE_OPTIONS, { positionals: 1 });
  if (values.help) return fitHelp;
  const file = dataFile(positionals);
  const format = outputFormat(values);
  const s = await loadSample(file, values);
  const ka = await api();
  const model = await withProgress('fit', values,
    (onProgress) => ka.kernelRegressionAsync(s.x, s.y, { ...regressionOptions(values, s.dim), onProgress }));
  const summary = {
    file, n: s.n, x: s.xNames, y: s.yNames, kernel: model.kernel, estimator: model.estimator,
    bandwidth: Array.from(model.bandwidth, round), method: model.selection.method,
    score: model.selection.score === null ? null : round(model.selection.score),
    effectiveDegreesOfFreedom: round(model.effectiveDegreesOfFreedom), residualVariance: Array.from(model.residualVariance, round),
  };
  model.dispose();
  if (format === 'json') return emit(values, JSON.stringify(summary, null, 2) + '\n');
  const rows = [['n', s.n], ['kernel', summary.kernel], ['estimator', summary.estimator], ['method', summary.method],
    ...s.xNames.map((name, d) => [`bandwidth.${name}`, summary.bandwidth[d]]), ['score', summary.score ?? ''],
    ['effectiveDegreesOfFreedom', summary.effectiveDegreesOfFreedom],
    ...s.yNames.map((name, c) => [`residualVariance.${name}`, summary.residualVariance[c]])];
  return emit(values, formatCsv(['name', 'value'], rows));
}

// ---- predict ----

const predictHelp = `Usage: kernel-attention predict FILE --x COLS --y COLS (--at FILE2 | --grid N) [options]

Fits a kernel regression to FILE (as \`fit\` does) and prints its predictions: at the rows of FILE2 (the columns of
--at-x, by default the --x names, or the same indices when FILE2 has no header), or at N evenly spaced points from
--from to --to (default: the range of x; one x column only). With --level, adds a pointwise confidence band.
${SAMPLE_HELP}
  --at FILE2          predict at the rows of this CSV/TSV file
  --at-x COLS         its input columns (default: as --x)
  --grid N            predict at N evenly spaced points instead (N ≥ 2)
  --from A, --to B    the grid's ends (default: the smallest and largest x)
  --level L           add <y>.lower, <y>.upper and <y>.stderr columns for a band of level L (e.g. 0.95)
${OUTPUT_HELP}

Example: kernel-attention predict data.csv --x time --y level --grid 101 --level 0.95 --output fit.csv`;

async function predict(argv, api) {
  const { values, positionals } = parseCommand(argv, {
    ...SAMPLE_OPTIONS, at: { type: 'string' }, 'at-x': { type: 'string' }, grid: { type: 'string' },
    from: { type: 'string' }, to: { type: 'string' }, level: { type: 'string' },
  }, { positionals: 1 });
  if (values.help) return predictHelp;
  const file = dataFile(positionals);
  if ((values.at === undefined) === (values.grid === undefined)) throw new UsageError('give one of --at FILE2 or --grid N');
  const format = outputFormat(values);
  const level = number(values, 'level');
  if (level !== undefined && !(level > 0 && level < 1)) throw new UsageError(`--level must be between 0 and 1; got ${values.level}`);
  const grid = number(values, 'grid', { integer: true });
  if (grid !== undefined && grid < 2) throw new UsageError(`--grid must be an integer ≥ 2; got ${values.grid}`);
  const s = await loadSample(file, values);

  let xq;
  if (grid !== undefined) {
    if (s.dim !== 1) throw new UsageError(`--grid needs exactly one --x column; got ${s.dim} (use --at for more)`);
    const lo = number(values, 'from') ?? s.x.reduce((a, b) => Math.min(a, b));
    const hi = number(values, 'to') ?? s.x.reduce((a, b) => Math.max(a, b));
    xq = Float64Array.from({ length: grid }, (_, i) => lo + ((hi - lo) * i) / (grid - 1));
  } else {
    const at = await loadTable(values.at, values);
    const specs = values['at-x'] ? columnList(values, 'at-x')
      : at.names && s.table.names ? s.xNames : s.xCols.map((c) => String(c + 1));
    const cols = resolveColumns(at, specs, '--at-x');
    if (cols.length !== s.dim) throw new UsageError(`--at-x names ${cols.length} columns; --x has ${s.dim}`);
    xq = numericColumns(at, cols);
  }

  const ka = await api();
  const model = await withProgress('fit', values,
    (onProgress) => ka.kernelRegressionAsync(s.x, s.y, { ...regressionOptions(values, s.dim), onProgress }));
  const width = s.yNames.length;
  const result = await withProgress('predict', values, async (onProgress) => (level === undefined
    ? { mean: await model.predictAsync(xq, { onProgress }) } : model.predictIntervalAsync(xq, { level, onProgress })));
  model.dispose();
  const I = xq.length / s.dim;
  const header = [...s.xNames, ...s.yNames.flatMap((y) => (level === undefined ? [y] : [y, `${y}.lower`, `${y}.upper`, `${y}.stderr`]))];
  const rows = Array.from({ length: I }, (_, i) => [
    ...Array.from(xq.subarray(i * s.dim, (i + 1) * s.dim), round),
    ...s.yNames.flatMap((_, c) => {
      const at = i * width + c;
      return level === undefined ? [round(result.mean[at])]
        : [result.mean[at], result.lower[at], result.upper[at], result.stderr[at]].map(round);
    }),
  ]);
  if (format === 'csv') return emit(values, formatCsv(header, rows));
  return emit(values, JSON.stringify(rows.map((r) => Object.fromEntries(header.map((h, k) => [h, r[k]])))) + '\n');
}

// ---- select-bandwidth ----

const selectHelp = `Usage: kernel-attention select-bandwidth FILE --x COLS --y COLS [options]

Chooses the bandwidth for FILE's columns and prints it with the search's curve: every bandwidth tried and its score
(CSV: one row per evaluation, the chosen one marked; JSON: { bandwidth, score, curve }).
${SAMPLE_HELP.replace(/\n  --bandwidth.*/, '')}
  --method M          ${RULES.join(', ')} (default cv)
  --per-dimension     search one bandwidth per x column (default: one shared bandwidth, scaled per column)
${OUTPUT_HELP}

Example: kernel-attention select-bandwidth data.csv --x time --y level --method aicc`;

async function selectBandwidth(argv, api) {
  const { values, positionals } = parseCommand(argv, {
    ...SAMPLE_OPTIONS, method: { type: 'string' }, 'per-dimension': { type: 'boolean' },
  }, { positionals: 1 });
  if (values.help) return selectHelp;
  const file = dataFile(positionals);
  if (values.bandwidth !== undefined) throw new UsageError('select-bandwidth takes --method, not --bandwidth');
  const format = outputFormat(values);
  const method = choice(values, 'method', RULES, 'cv');
  const s = await loadSample(file, values);
  const { kernel, estimator } = regressionOptions(values, s.dim);
  const ka = await api();
  const r = await withProgress('select-bandwidth', values, (onProgress) => ka.selectBandwidthAsync(s.x, s.y, {
    dim: s.dim, kernel, estimator, method, perDimension: Boolean(values['per-dimension']), onProgress,
  }));
  const bandwidth = Array.from(r.bandwidth, round);
  const curve = Array.from(r.curve.scores, (score, k) => ({
    bandwidth: Array.from(r.curve.bandwidths.subarray(k * s.dim, (k + 1) * s.dim), round), score: round(score),
  }));
  if (format === 'json') {
    return emit(values, JSON.stringify({ method, x: s.xNames, bandwidth, score: round(r.score), curve }, null, 2) + '\n');
  }
  const same = (h) => h.every((v, d) => v === bandwidth[d]);
  const rows = curve.map((c) => [...c.bandwidth, c.score, same(c.bandwidth) ? 1 : 0]);
  if (!curve.some((c) => same(c.bandwidth))) rows.push([...bandwidth, round(r.score), 1]);
  return emit(values, formatCsv([...s.xNames.map((x) => `bandwidth.${x}`), 'score', 'chosen'], rows));
}

// ---- attention ----

const attentionHelp = `Usage: kernel-attention attention --queries Q --keys K --values V --dim M [options]

Exact scaled dot-product (or kernel) attention over raw little-endian float32 files (row-major; Q has I×M floats, K has
J×M, V has J×D) or .npy files of float32. Prints the I×D result.
  --queries Q, --keys K, --values V   the input files
  --dim M             the width of a query/key row
  --heads H           split M and D into H heads (default 1)
  --kernel K          softmax (default), ${KERNELS.join(', ')}
  --scale S           softmax only (default 1/√(M/H))
  --bandwidth H       distance kernels only (default 1)
  --causal            query i sees keys 0 … i only
  --format F          csv (one row per query), json (array of rows) or f32 (raw float32; needs --output)
  --output FILE       write there instead of to stdout
  -q, --quiet         no progress bar (one is drawn on stderr when it is a terminal)
  -h, --help          this help

Example: kernel-attention attention --queries q.f32 --keys k.f32 --values v.f32 --dim 64 --heads 4 --format f32 --output out.f32`;

async function attention(argv, api) {
  const { values } = parseCommand(argv, {
    queries: { type: 'string' }, keys: { type: 'string' }, values: { type: 'string' }, dim: { type: 'string' },
    heads: { type: 'string' }, kernel: { type: 'string' }, scale: { type: 'string' }, bandwidth: { type: 'string' },
    causal: { type: 'boolean' }, format: { type: 'string' }, output: { type: 'string' }, quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) return attentionHelp;
  const dim = number({ dim: required(values, 'dim') }, 'dim', { positive: true, integer: true });
  const heads = number(values, 'heads', { positive: true, integer: true }) ?? 1;
  const format = choice(values, 'format', ['csv', 'json', 'f32'],
    values.output?.toLowerCase().endsWith('.json') ? 'json' : values.output?.toLowerCase().endsWith('.f32') ? 'f32' : 'csv');
  if (format === 'f32' && !values.output) throw new UsageError('--format f32 needs --output FILE');
  // Exact, as the help says: the library's default 'auto' may skip keys within its tolerance on large low-dimensional calls.
  const options = {
    dim, heads, kernel: choice(values, 'kernel', ['softmax', ...KERNELS], 'softmax'), causal: Boolean(values.causal), method: 'exact',
  };
  if (values.scale !== undefined) options.scale = number(values, 'scale');
  if (values.bandwidth !== undefined) options.bandwidth = number(values, 'bandwidth', { positive: true });
  const [q, k, v] = await Promise.all(['queries', 'keys', 'values'].map((name) => readFloat32(required(values, name))));
  const ka = await api();
  const out = await withProgress('attention', values, (onProgress) => ka.attentionAsync(q, k, v, { ...options, onProgress }));
  if (format === 'f32') return writeOutput(values.output, new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
  const J = k.length / dim;
  const D = v.length / J;
  const rows = Array.from({ length: out.length / D }, (_, i) => Array.from(out.subarray(i * D, (i + 1) * D)));
  if (format === 'json') return emit(values, JSON.stringify(rows) + '\n');
  return emit(values, formatCsv(Array.from({ length: D }, (_, d) => `out${d + 1}`), rows));
}

export const COMMANDS = {
  fit: { run: fit, summary: 'fit a kernel regression to columns of a CSV/TSV file and print the model' },
  predict: { run: predict, summary: 'predict at the rows of another file or on an evenly spaced grid' },
  'select-bandwidth': { run: selectBandwidth, summary: 'choose the bandwidth and print the CV (or AICc) curve' },
  attention: { run: attention, summary: 'attention over raw float32 or .npy files' },
};
