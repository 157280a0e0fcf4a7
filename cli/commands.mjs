// The CLI's commands: fit, predict, select-bandwidth, lowess and attention, each with its help text. Each takes its arguments
// and `api` (a function resolving to init()'s API, called only once the input has been read and checked), and returns
// its help text or writes its output; kernel-attention.mjs handles errors and exit codes.
import { choice, columnList, number, parseCommand, readInput, required, UsageError, writeOutput } from './args.mjs';
import { KernelAttentionError } from '../web/src/errors.js';
import { parseDate, parseNumber } from '../web/src/table-values.js';
import { formatCsv, InputError, readColumns } from './csv.mjs';
import { readFloat32 } from './float32.mjs';
import { progressBar } from './progress.mjs';
import { codeQueries, codeSample, TYPES_HELP, TYPES_OPTIONS, typesFields, typesOption } from './types.mjs';

const KERNELS = ['gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'];
const ESTIMATORS = ['local-linear', 'nadaraya-watson'];
const RULES = ['cv', 'aicc', 'scott', 'silverman'];

// The reader's flags (web/src/table.js), shared by every command that reads a table.
const READING_HELP = `  --missing M         skip (drop rows with an empty, NA or NaN cell in the columns used) or error (default)
  --delimiter D       the field separator: one character, tab or whitespace (default: detected among comma,
                      tab, semicolon, bar and whitespace)
  --decimal M         the decimal mark, . or , (default: detected; a file where it is unclear is refused)
  --encoding E        utf-8, latin1, utf-16le or utf-16be (default: detected from the bytes)
  --date-order O      day-first or month-first, for dates like 03/04/1958 (default: detected, else day-first)
  --no-header         the first row is data (default: it is a header when a cell is text above values)`;
const SAMPLE_HELP = `
  --x COLS            the input column(s): names from the header or 1-based indices, comma-separated
  --y COLS            the output column(s), likewise
  --kernel K          ${KERNELS.join(', ')} (default gaussian)
  --estimator E       local-linear (default) or nadaraya-watson
  --bandwidth H       a number, one per x column (comma-separated), or a rule: ${RULES.join(', ')} (default cv)
  --exclude R         cv only: blocked CV for serial data, each held-out row fitted without the rows within R of it
                      along the first x column (in its units; seconds for dates); default 0, leave-one-out
  --span F            instead of --bandwidth: a nearest-neighbour span, 0 < F ≤ 1 (each point's bandwidth reaches its
                      ⌈F·n⌉ nearest points; several x columns scaled by their trimmed standard deviations)
${TYPES_HELP}
${READING_HELP}`;
const READING_NOTE = `FILE may be - for stdin. Lines starting with # are skipped. Digit groups (1,234.5), U+2212 minus, and dates or times
(1958-03-29, 1958-03-29T12:00, 29/03/1958, 19-Sep-03, Mar 1958, 12:30) are read; a date column used as --x is fitted
in seconds (the bandwidth is in seconds) and printed as ISO 8601.`;
const OUTPUT_HELP = `
  --format F          csv or json (default: json when --output ends in .json, else csv)
  --output FILE       write there instead of to stdout (- is stdout)
  -q, --quiet         no progress bar (one is drawn on stderr when it is a terminal)
  -h, --help          this help`;

// How a file is read (READING_HELP) and the result written: every command that reads a table takes these.
const FILE_OPTIONS = {
  delimiter: { type: 'string' },
  'no-header': { type: 'boolean' },
  missing: { type: 'string' },
  decimal: { type: 'string' },
  encoding: { type: 'string' },
  'date-order': { type: 'string' },
  format: { type: 'string' },
  output: { type: 'string' },
};

const SAMPLE_OPTIONS = {
  x: { type: 'string' },
  y: { type: 'string' },
  kernel: { type: 'string' },
  estimator: { type: 'string' },
  bandwidth: { type: 'string' },
  span: { type: 'string' },
  ...FILE_OPTIONS,
  quiet: { type: 'boolean', short: 'q' },
  exclude: { type: 'string' },
  ...TYPES_OPTIONS,
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

/** The reader's options from the flags. */
function readerOptions(values) {
  const named = { '\\t': '\t', tab: '\t', whitespace: 'whitespace', space: 'whitespace' };
  const delimiter = named[values.delimiter] ?? values.delimiter ?? 'auto';
  if (delimiter !== 'auto' && delimiter !== 'whitespace' && (delimiter.length !== 1 || /["\r\n]/.test(delimiter))) {
    throw new UsageError(
      `--delimiter must be one character (not a quote or line break), tab or whitespace; got ${JSON.stringify(values.delimiter)}`,
    );
  }
  return {
    delimiter,
    header: values['no-header'] ? false : 'auto',
    missing: choice(values, 'missing', ['skip', 'error'], 'error'),
    decimal: choice(values, 'decimal', ['.', ',']) ?? 'auto',
    encoding: choice(values, 'encoding', ['utf-8', 'latin1', 'utf-16le', 'utf-16be']) ?? 'auto',
    dateOrder: choice(values, 'date-order', ['day-first', 'month-first']) ?? 'auto',
  };
}

// Dates and times are fitted as seconds from the middle of their range, which float32 (the engine's type) holds more
// finely than seconds since 1970; printed back as ISO 8601 (times of day as hh:mm:ss).
const DATE_KINDS = new Set(['date', 'time']);
function formatter(kind) {
  if (kind === 'date')
    return (v) =>
      new Date(Math.round(v * 1000))
        .toISOString()
        .replace(/T00:00:00\.000Z$/, '')
        .replace(/\.000Z$/, 'Z');
  if (kind === 'time') return (v) => new Date(Math.round(v * 1000)).toISOString().slice(11, 19);
  return round;
}

/** The sample of a file: x (n × dim, dates centred), y (n × width), the column names and x's formats for output. */
async function loadSample(file, values) {
  const t = await readColumns(
    file,
    { '--x': columnList(values, 'x'), '--y': columnList(values, 'y') },
    readerOptions(values),
  );
  const x = t.groups['--x'];
  const y = t.groups['--y'];
  const dim = x.columns.length;
  const name = (c, prefix, k) => (t.header ? t.names[c] : `${prefix}${k + 1}`);
  const kinds = x.columns.map((c) => t.settings.kinds[c]);
  const centre = kinds.map((kind, d) => {
    if (!DATE_KINDS.has(kind)) return 0;
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = d; i < x.data.length; i += dim) {
      lo = Math.min(lo, x.data[i]);
      hi = Math.max(hi, x.data[i]);
    }
    return Math.round((lo + hi) / 2);
  });
  for (let i = 0; i < x.data.length; i++) x.data[i] -= centre[i % dim];
  // Discrete columns (--types) coded 0 … c − 1: cli/types.mjs.
  return codeSample(
    {
      file,
      header: t.header,
      xCols: x.columns,
      x: x.data,
      y: y.data,
      n: t.n,
      dim,
      lines: t.lines,
      kinds,
      centre,
      xNames: x.columns.map((c, k) => name(c, 'x', k)),
      yNames: y.columns.map((c, k) => name(c, 'y', k)),
      formats: kinds.map((kind, d) => {
        const f = formatter(kind);
        return (v) => f(v + centre[d]);
      }),
    },
    values,
  );
}

// The API's names for its arguments, as this command line's flags.
const API_FLAGS = {
  q: '--queries',
  k: '--keys',
  v: '--values',
  queries: '--queries',
  keys: '--keys',
  values: '--values',
  x: '--x',
  y: '--y',
};

/**
 * Runs `call` and rewords a KernelAttentionError for the command line: option names become flags (`options.dim` →
 * --dim), and an element of x or y (`x[12]`) becomes the line and column of `s`'s file it came from.
 */
async function apiCall(call, s) {
  try {
    return await call();
  } catch (e) {
    if (!(e instanceof KernelAttentionError)) throw e;
    const at = s && /^`([xy])\[(\d+)\]`/.exec(e.message);
    if (at) {
      const names = at[1] === 'x' ? s.xNames : s.yNames;
      const row = Math.floor(Number(at[2]) / names.length);
      const value = e.message.replace(/^`[xy]\[\d+\]`\s*/, '');
      throw new InputError(
        s.file,
        s.lines[row],
        null,
        `column ${JSON.stringify(names[Number(at[2]) % names.length])}: the value ${value}`,
      );
    }
    e.message = e.message
      .replace(/`options\.(\w+)`/g, (_, name) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`)
      .replace(/`(\w+)`/g, (all, name) => API_FLAGS[name] ?? all);
    throw e;
  }
}

function bandwidthOption(values, dim) {
  const text = values.bandwidth ?? 'cv';
  if (RULES.includes(text)) return text;
  const list = text.split(',').map((h) => parseNumber(h));
  // A discrete column's entry is λ, which may be 0 (the library checks its range).
  const discrete = typesOption(values, dim) ?? [];
  const bad = (h, d) => !(discrete[d] && discrete[d] !== 'continuous' ? h >= 0 : h > 0) || !Number.isFinite(h);
  if (list.some(bad) || (list.length !== 1 && list.length !== dim)) {
    throw new UsageError(
      `--bandwidth must be ${RULES.join(', ')}, a positive number, or ${dim} of them; got ${JSON.stringify(text)}`,
    );
  }
  return list.length === 1 ? list[0] : list;
}

/** --span as kernelRegression's `{ span }` (null without it); it replaces --bandwidth. */
function spanOption(values) {
  if (values.span === undefined) return null;
  if (values.bandwidth !== undefined) throw new UsageError('give --bandwidth or --span, not both');
  const span = parseNumber(values.span);
  if (!(span > 0 && span <= 1))
    throw new UsageError(`--span must be a number in (0, 1]; got ${JSON.stringify(values.span)}`);
  return { span };
}

function regressionOptions(values, dim) {
  const iterations = number(values, 'robust', { positive: true, integer: true });
  return {
    dim,
    kernel: choice(values, 'kernel', KERNELS, 'gaussian'),
    estimator: choice(values, 'estimator', ESTIMATORS, 'local-linear'),
    bandwidth: spanOption(values) ?? bandwidthOption(values, dim),
    ...(iterations !== undefined && { robust: { iterations } }),
    ...excludeOption(values),
    ...typesFields(values, dim),
  };
}

const ROBUST_HELP = `  --robust [N]        N bisquare robustness iterations after the fit, as LOWESS's (default N: 3; one --y column)`;
/**
 * --robust takes an optional count, which parseArgs cannot express: `--robust N` (N digits) becomes `--robust=N`,
 * a bare `--robust` becomes `--robust=3`.
 */
function robustArgv(argv) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '--robust') out.push(argv[i]);
    else if (/^\d+$/.test(argv[i + 1] ?? '')) out.push(`--robust=${argv[++i]}`);
    else out.push('--robust=3');
  }
  return out;
}

/** --exclude R (blocked CV's radius, >= 0), as the library's `exclude`; nothing when absent. */
function excludeOption(values) {
  const exclude = number(values, 'exclude');
  if (exclude === undefined) return {};
  if (!(exclude >= 0)) throw new UsageError(`--exclude must be a number >= 0; got ${JSON.stringify(values.exclude)}`);
  return { exclude };
}

/** A model's bandwidth for the printed summary: { bandwidth } per x column, or { span, scale } for a span model. */
function bandwidthSummary(model) {
  const h = model.bandwidth;
  return h instanceof Float64Array
    ? { bandwidth: Array.from(h, round) }
    : { span: h.span, scale: Array.from(h.scale, round) };
}

function outputFormat(values) {
  return choice(values, 'format', ['csv', 'json'], values.output?.toLowerCase().endsWith('.json') ? 'json' : 'csv');
}

/** Writes `text` to --output or stdout. */
async function emit(values, text) {
  if (values.output && values.output !== '-') await writeOutput(values.output, text);
  else process.stdout.write(text);
}

const round = (v) => (Number.isFinite(v) ? Number(v.toPrecision(9)) : v);

/**
 * The result's `warnings` (interpolating, precision, guard: docs/regression.md, "Warnings"), one line each on stderr,
 * so that stdout stays the data.
 */
function printWarnings(result) {
  for (const { code, message } of result.warnings ?? []) process.stderr.write(`warning [${code}]: ${message}\n`);
}

// ---- fit ----

const fitHelp = `Usage: kernel-attention fit FILE --x COLS --y COLS [options]

Fits a kernel regression to the columns of a CSV or TSV file and prints the model: the bandwidth and its rule (how it
was chosen: cv, aicc, scott, silverman, or fixed), the method the fit runs on (exact or grid), its CV score, the effective degrees of freedom and the residual variance of each y column; with --robust,
also the data rows the robust fit rejects (robustness weight 0; 1-based, in the order read).
${SAMPLE_HELP}
${ROBUST_HELP}
${OUTPUT_HELP}

${READING_NOTE}

Example: kernel-attention fit data.csv --x time --y level --bandwidth cv --format json`;

async function fit(argv, api) {
  const { values, positionals } = parseCommand(
    robustArgv(argv),
    { ...SAMPLE_OPTIONS, robust: { type: 'string' } },
    { positionals: 1 },
  );
  if (values.help) return fitHelp;
  const file = dataFile(positionals);
  const format = outputFormat(values);
  const s = await loadSample(file, values);
  const ka = await api();
  const model = await withProgress('fit', values, (onProgress) =>
    apiCall(() => ka.kernelRegressionAsync(s.x, s.y, { ...regressionOptions(values, s.dim), onProgress }), s),
  );
  const summary = {
    file,
    n: s.n,
    x: s.xNames,
    y: s.yNames,
    kernel: model.kernel,
    estimator: model.estimator,
    ...bandwidthSummary(model),
    rule: model.selection.rule,
    method: model.method,
    score: model.selection.score === null ? null : round(model.selection.score),
    effectiveDegreesOfFreedom: round(model.effectiveDegreesOfFreedom),
    residualVariance: Array.from(model.residualVariance, round),
    // With --robust: the points the final fit leaves out (robustness weight 0), 1-based data rows.
    ...(model.robustnessWeights && {
      rejected: Array.from(model.robustnessWeights).flatMap((w, j) => (w === 0 ? [j + 1] : [])),
    }),
  };
  printWarnings(model);
  model.dispose();
  if (format === 'json') return emit(values, JSON.stringify(summary, null, 2) + '\n');
  const rows = [
    ['n', s.n],
    ['kernel', summary.kernel],
    ['estimator', summary.estimator],
    ['rule', summary.rule],
    ['method', summary.method],
    ...(summary.span === undefined
      ? s.xNames.map((name, d) => [`bandwidth.${name}`, summary.bandwidth[d]])
      : [['span', summary.span], ...s.xNames.map((name, d) => [`scale.${name}`, summary.scale[d]])]),
    ['score', summary.score ?? ''],
    ['effectiveDegreesOfFreedom', summary.effectiveDegreesOfFreedom],
    ...s.yNames.map((name, c) => [`residualVariance.${name}`, summary.residualVariance[c]]),
    ...(summary.rejected ? [['rejected', summary.rejected.join(' ')]] : []),
  ];
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
  --gradient          add a <y>.d.<x> column per y and x column: the fit's derivative ∂y/∂x (per second for a
                      date column), exactly; with --level also its standard error, <y>.d.<x>.stderr
  --variance V        the band's noise variance: global (one per --y column, default) or local (following x)
${ROBUST_HELP}
${OUTPUT_HELP}

${READING_NOTE}

Example: kernel-attention predict data.csv --x time --y level --grid 101 --level 0.95 --output fit.csv`;

async function predict(argv, api) {
  const { values, positionals } = parseCommand(
    robustArgv(argv),
    {
      ...SAMPLE_OPTIONS,
      at: { type: 'string' },
      'at-x': { type: 'string' },
      grid: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      level: { type: 'string' },
      variance: { type: 'string' },
      robust: { type: 'string' },
      gradient: { type: 'boolean' },
    },
    { positionals: 1 },
  );
  if (values.help) return predictHelp;
  const file = dataFile(positionals);
  if ((values.at === undefined) === (values.grid === undefined))
    throw new UsageError('give one of --at FILE2 or --grid N');
  const format = outputFormat(values);
  const level = number(values, 'level');
  if (level !== undefined && !(level > 0 && level < 1))
    throw new UsageError(`--level must be between 0 and 1; got ${values.level}`);
  const variance = choice(values, 'variance', ['global', 'local'], 'global');
  if (values.variance !== undefined && level === undefined)
    throw new UsageError('--variance needs --level (it shapes the band)');
  const grid = number(values, 'grid', { integer: true });
  if (grid !== undefined && grid < 2) throw new UsageError(`--grid must be an integer ≥ 2; got ${values.grid}`);
  if (file === '-' && values.at === '-') throw new UsageError('FILE and --at cannot both be - (stdin)');
  const s = await loadSample(file, values);

  let xq;
  if (grid !== undefined) {
    if (s.dim !== 1) throw new UsageError(`--grid needs exactly one --x column; got ${s.dim} (use --at for more)`);
    if (s.levels[0]) throw new UsageError('--grid needs a continuous --x column (use --at for a discrete one)');
    // --from and --to are numbers; for a date column they are read as dates too.
    const end = (name) => {
      if (values[name] === undefined || !DATE_KINDS.has(s.kinds[0])) return number(values, name);
      const d = parseDate(values[name]);
      if (!d)
        throw new UsageError(`--${name} must be a date or time like the column's; got ${JSON.stringify(values[name])}`);
      return d.value - s.centre[0];
    };
    const lo = end('from') ?? s.x.reduce((a, b) => Math.min(a, b));
    const hi = end('to') ?? s.x.reduce((a, b) => Math.max(a, b));
    xq = Float64Array.from({ length: grid }, (_, i) => lo + ((hi - lo) * i) / (grid - 1));
  } else {
    const specs = values['at-x'] ? columnList(values, 'at-x') : null;
    const at = await readColumns(
      values.at,
      {
        '--at-x': (found) => specs ?? (found.header && s.header ? s.xNames : s.xCols.map((c) => String(c + 1))),
      },
      readerOptions(values),
    );
    const cols = at.groups['--at-x'].columns;
    if (cols.length !== s.dim) throw new UsageError(`--at-x names ${cols.length} columns; --x has ${s.dim}`);
    xq = at.groups['--at-x'].data;
    for (let i = 0; i < xq.length; i++) xq[i] -= s.centre[i % s.dim];
    codeQueries(s, xq);
  }

  const ka = await api();
  const model = await withProgress('fit', values, (onProgress) =>
    apiCall(() => ka.kernelRegressionAsync(s.x, s.y, { ...regressionOptions(values, s.dim), onProgress }), s),
  );
  const width = s.yNames.length;
  const result = await withProgress('predict', values, (onProgress) =>
    apiCall(async () =>
      level === undefined
        ? { mean: await model.predictAsync(xq, { onProgress }) }
        : model.predictIntervalAsync(xq, { level, variance, onProgress }),
    ),
  );
  const slopes = values.gradient ? await apiCall(() => model.gradient(xq)) : null;
  printWarnings(model);
  model.dispose();
  const I = xq.length / s.dim;
  const header = [
    ...s.xNames,
    ...s.yNames.flatMap((y) => (level === undefined ? [y] : [y, `${y}.lower`, `${y}.upper`, `${y}.stderr`])),
  ];
  // Gradient columns follow, per y then per x: [(i·dim + d)·width + c] in gradient()'s layout.
  const slopeColumns = slopes
    ? s.yNames.flatMap((y, c) => s.xNames.map((x, d) => ({ c, d, name: `${y}.d.${x}` })))
    : [];
  for (const { name } of slopeColumns) header.push(...(level === undefined ? [name] : [name, `${name}.stderr`]));
  const rows = Array.from({ length: I }, (_, i) => [
    ...Array.from(xq.subarray(i * s.dim, (i + 1) * s.dim), (v, d) => s.formats[d](v)),
    ...s.yNames.flatMap((_, c) => {
      const at = i * width + c;
      // Float64Array results (y's units, shifted back in double): printed as read back, every digit kept, so that y
      // with a large offset (1.7e9 + …) keeps its fit's precision.
      return level === undefined
        ? [result.mean[at]]
        : [result.mean[at], result.lower[at], result.upper[at], result.stderr[at]];
    }),
    ...slopeColumns.flatMap(({ c, d }) => {
      const at = (i * s.dim + d) * width + c;
      return (level === undefined ? [slopes.gradient[at]] : [slopes.gradient[at], slopes.stderr[at]]).map(round);
    }),
  ]);
  if (format === 'csv') return emit(values, formatCsv(header, rows));
  return emit(values, JSON.stringify(rows.map((r) => Object.fromEntries(header.map((h, k) => [h, r[k]])))) + '\n');
}

// ---- select-bandwidth ----

const selectHelp = `Usage: kernel-attention select-bandwidth FILE --x COLS --y COLS [options]

Chooses the bandwidth for FILE's columns and prints it with the search's curve: every bandwidth tried and its score
(CSV: one row per evaluation, the chosen one marked; JSON: { rule, method, bandwidth, score, curve }, method being how
the scores were computed: exact or grid).
${SAMPLE_HELP.replace(/\n  --bandwidth.*/, '').replace(/\n  --span.*\n.*/, '')}
  --rule R            ${RULES.join(', ')} (default cv); --method R is its deprecated spelling (before 0.2.0)
  --per-dimension     search one bandwidth per x column (default: one shared bandwidth, scaled per column)
${OUTPUT_HELP}

${READING_NOTE}

Example: kernel-attention select-bandwidth data.csv --x time --y level --rule aicc`;

async function selectBandwidth(argv, api) {
  const { values, positionals } = parseCommand(
    argv,
    {
      ...SAMPLE_OPTIONS,
      rule: { type: 'string' },
      method: { type: 'string' },
      'per-dimension': { type: 'boolean' },
    },
    { positionals: 1 },
  );
  if (values.help) return selectHelp;
  const file = dataFile(positionals);
  if (values.bandwidth !== undefined) throw new UsageError('select-bandwidth takes --rule, not --bandwidth');
  if (values.span !== undefined) throw new UsageError('select-bandwidth takes --rule, not --span');
  const format = outputFormat(values);
  // --method was the rule's flag before 0.2.0 (the API's `method` is now how the scores are computed): still read.
  if (values.method !== undefined) {
    if (values.rule !== undefined)
      throw new UsageError('--method is the deprecated spelling of --rule; pass only --rule');
    process.stderr.write('deprecated: --method is now --rule (--method is removed in the next minor version)\n');
  }
  const rule = choice(values, values.method !== undefined ? 'method' : 'rule', RULES, 'cv');
  const s = await loadSample(file, values);
  const { kernel, estimator, exclude, types, orderedKernel } = regressionOptions(values, s.dim);
  const ka = await api();
  const r = await withProgress('select-bandwidth', values, (onProgress) =>
    apiCall(
      () =>
        ka.selectBandwidthAsync(s.x, s.y, {
          dim: s.dim,
          kernel,
          estimator,
          rule,
          perDimension: Boolean(values['per-dimension']),
          onProgress,
          ...(exclude === undefined ? {} : { exclude }),
          ...(types && { types, ...(orderedKernel && { orderedKernel }) }),
        }),
      s,
    ),
  );
  printWarnings(r);
  const bandwidth = Array.from(r.bandwidth, round);
  const curve = Array.from(r.curve.scores, (score, k) => ({
    bandwidth: Array.from(r.curve.bandwidths.subarray(k * s.dim, (k + 1) * s.dim), round),
    score: round(score),
  }));
  if (format === 'json') {
    return emit(
      values,
      JSON.stringify({ rule, method: r.method, x: s.xNames, bandwidth, score: round(r.score), curve }, null, 2) + '\n',
    );
  }
  const same = (h) => h.every((v, d) => v === bandwidth[d]);
  const rows = curve.map((c) => [...c.bandwidth, c.score, same(c.bandwidth) ? 1 : 0]);
  if (!curve.some((c) => same(c.bandwidth))) rows.push([...bandwidth, round(r.score), 1]);
  return emit(values, formatCsv([...s.xNames.map((x) => `bandwidth.${x}`), 'score', 'chosen'], rows));
}

// ---- lowess ----

const lowessHelp = `Usage: kernel-attention lowess FILE --x COL --y COL [--frac F] [--iterations N] [--delta D] [options]

Smooths one column against another by LOWESS (Cleveland 1979) as R's lowess() computes it: at each x a local-linear
fit, tricube-weighted over the nearest ⌊f·n⌋ points, then N rounds of bisquare robustness weights. Prints, one row per
data row in the file's order: x, y, fitted (the smoothed value) and weight (the robustness weight of the final fit).
The fit runs in float64. There is no confidence band.
  --x COL             the input column: a name from the header or a 1-based index
  --y COL             the output column, likewise
  --frac F            the span: the fraction of the points each local fit uses, in (0, 1] (default 2/3, as R's)
  --iterations N      robustness iterations, an integer ≥ 0 (default 3, as R's)
  --delta D           points within D of the last fitted x are interpolated linearly, not fitted (≥ 0; 0 fits at
                      every point; default: 1 % of the range of x, as R's; in seconds for a date column)
${READING_HELP}
  --format F          csv or json (default: json when --output ends in .json, else csv)
  --output FILE       write there instead of to stdout (- is stdout)
  -h, --help          this help

${READING_NOTE}

Example: kernel-attention lowess nile.csv --x year --y flow --frac 0.3 --output smooth.csv`;

async function lowess(argv, api) {
  const { values, positionals } = parseCommand(
    argv,
    {
      x: { type: 'string' },
      y: { type: 'string' },
      frac: { type: 'string' },
      iterations: { type: 'string' },
      delta: { type: 'string' },
      ...FILE_OPTIONS,
    },
    { positionals: 1 },
  );
  if (values.help) return lowessHelp;
  const file = dataFile(positionals);
  const format = outputFormat(values);
  for (const name of ['x', 'y']) {
    if (columnList(values, name).length !== 1)
      throw new UsageError(`--${name} must name one column; got ${JSON.stringify(values[name])}`);
  }
  // Checked here, before the file is read, with the flag's name: the ranges are lowess()'s own.
  const frac = number(values, 'frac');
  if (frac !== undefined && !(frac > 0 && frac <= 1))
    throw new UsageError(`--frac must be a number in (0, 1]; got ${JSON.stringify(values.frac)}`);
  const iterations = number(values, 'iterations', { integer: true });
  if (iterations !== undefined && iterations < 0)
    throw new UsageError(`--iterations must be an integer ≥ 0; got ${JSON.stringify(values.iterations)}`);
  const delta = number(values, 'delta');
  if (delta !== undefined && !(delta >= 0))
    throw new UsageError(`--delta must be a number ≥ 0; got ${JSON.stringify(values.delta)}`);
  const s = await loadSample(file, values);
  const options = {};
  if (frac !== undefined) options.frac = frac;
  if (iterations !== undefined) options.iterations = iterations;
  if (delta !== undefined) options.delta = delta;
  const ka = await api();
  const { fitted, weights } = await apiCall(() => ka.lowess(s.x, s.y, options), s);
  const header = [s.xNames[0], s.yNames[0], 'fitted', 'weight'];
  // x and y as read (full float64; dates as ISO 8601), the smooth to 9 significant digits as the other commands write.
  const rows = Array.from(fitted, (f, i) => [
    DATE_KINDS.has(s.kinds[0]) ? s.formats[0](s.x[i]) : s.x[i],
    s.y[i],
    round(f),
    round(weights[i]),
  ]);
  if (format === 'csv') return emit(values, formatCsv(header, rows));
  return emit(values, JSON.stringify(rows.map((r) => Object.fromEntries(header.map((h, k) => [h, r[k]])))) + '\n');
}

// ---- attention ----

const attentionHelp = `Usage: kernel-attention attention --queries Q --keys K --values V [--dim M] [options]

Exact scaled dot-product (or kernel) attention over raw little-endian float32 files (row-major; Q has I×M floats, K has
J×M, V has J×D) or .npy files of float32. Prints the I×D result.
  --queries Q, --keys K, --values V   the input files (one of them may be - for stdin); a 2-D .npy file's shape
                      gives its rows and width, a 1-D one is a flat list like a raw file
  --dim M             the width of a query/key row (needed unless Q or K is a 2-D .npy file; must match it)
  --heads H           split M and D into H heads (default 1)
  --kernel K          softmax (default), ${KERNELS.join(', ')}
  --scale S           softmax only (default 1/√(M/H))
  --bandwidth H       distance kernels only (default 1)
  --causal            query i sees keys 0 … i only
  --format F          csv (one row per query), json (array of rows) or f32 (raw float32; needs --output)
  --output FILE       write there instead of to stdout (- is stdout, also for f32)
  -q, --quiet         no progress bar (one is drawn on stderr when it is a terminal)
  -h, --help          this help

Example: kernel-attention attention --queries q.f32 --keys k.f32 --values v.f32 --dim 64 --heads 4 --format f32 --output out.f32`;

async function attention(argv, api) {
  const { values } = parseCommand(argv, {
    queries: { type: 'string' },
    keys: { type: 'string' },
    values: { type: 'string' },
    dim: { type: 'string' },
    heads: { type: 'string' },
    kernel: { type: 'string' },
    scale: { type: 'string' },
    bandwidth: { type: 'string' },
    causal: { type: 'boolean' },
    format: { type: 'string' },
    output: { type: 'string' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help) return attentionHelp;
  const names = ['queries', 'keys', 'values'];
  const files = names.map((name) => required(values, name));
  if (files.filter((f) => f === '-').length > 1)
    throw new UsageError('only one of --queries, --keys and --values can be - (stdin)');
  const heads = number(values, 'heads', { positive: true, integer: true }) ?? 1;
  const format = choice(
    values,
    'format',
    ['csv', 'json', 'f32'],
    values.output?.toLowerCase().endsWith('.json')
      ? 'json'
      : values.output?.toLowerCase().endsWith('.f32')
        ? 'f32'
        : 'csv',
  );
  if (format === 'f32' && !values.output)
    throw new UsageError('--format f32 needs --output FILE (or --output - for stdout)');
  const kernel = choice(values, 'kernel', ['softmax', ...KERNELS], 'softmax');
  const scale = number(values, 'scale');
  const bandwidth = number(values, 'bandwidth', { positive: true });
  let dim = number(values, 'dim', { positive: true, integer: true });
  const [q, k, v] = await Promise.all(files.map((f) => readFloat32(f)));
  // A 2-D .npy file says its rows and width: --dim must agree with it, or is taken from it.
  const shown = (a) => `(${a.shape.join(', ')})`;
  for (const [name, a] of [
    ['queries', q],
    ['keys', k],
  ]) {
    if (a.shape?.length !== 2) continue;
    if (dim === undefined) dim = a.shape[1];
    else if (dim !== a.shape[1]) {
      throw new UsageError(
        `--dim ${dim} does not match --${name} ${a.file}, of shape ${shown(a)}: rows of ${a.shape[1]}`,
      );
    }
  }
  if (dim === undefined) throw new UsageError('--dim is required (unless --queries or --keys is a 2-D .npy file)');
  if (v.shape?.length === 2 && k.data.length % dim === 0 && v.shape[0] !== k.data.length / dim) {
    throw new InputError(
      v.file,
      null,
      null,
      `--values has shape ${shown(v)}: ${v.shape[0]} rows, for ${k.data.length / dim} keys`,
    );
  }
  // Exact, as the help says: the library's default 'auto' may skip keys within its tolerance on large low-dimensional calls.
  const options = { dim, heads, kernel, causal: Boolean(values.causal), method: 'exact' };
  if (scale !== undefined) options.scale = scale;
  if (bandwidth !== undefined) options.bandwidth = bandwidth;
  const ka = await api();
  const out = await withProgress('attention', values, (onProgress) =>
    apiCall(() => ka.attentionAsync(q.data, k.data, v.data, { ...options, onProgress })),
  );
  if (format === 'f32') return writeOutput(values.output, new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
  const J = k.data.length / dim;
  const D = v.data.length / J;
  const rows = Array.from({ length: out.length / D }, (_, i) => Array.from(out.subarray(i * D, (i + 1) * D)));
  if (format === 'json') return emit(values, JSON.stringify(rows) + '\n');
  return emit(
    values,
    formatCsv(
      Array.from({ length: D }, (_, d) => `out${d + 1}`),
      rows,
    ),
  );
}

export const COMMANDS = {
  fit: { run: fit, summary: 'fit a kernel regression to columns of a CSV/TSV file and print the model' },
  predict: { run: predict, summary: 'predict at the rows of another file or on an evenly spaced grid' },
  'select-bandwidth': { run: selectBandwidth, summary: 'choose the bandwidth and print the CV (or AICc) curve' },
  lowess: { run: lowess, summary: "smooth a column by LOWESS (R's lowess()): fitted values and robustness weights" },
  attention: { run: attention, summary: 'attention over raw float32 or .npy files' },
};
