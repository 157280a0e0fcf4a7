// The table a regression command reads: the reader's flags (shared by every command that reads a table), and the
// sample of x and y columns, with date columns centred (fitted in seconds) and formatted back for output.
import { choice, columnList, UsageError } from './args.mjs';
import { readColumns } from './csv.mjs';
import { round } from './output.mjs';
import { codeSample, TYPES_OPTIONS } from './types.mjs';

// How a file is read (help.mjs, READING_HELP) and the result written: every command that reads a table takes these.
export const FILE_OPTIONS = {
  delimiter: { type: 'string' },
  'no-header': { type: 'boolean' },
  missing: { type: 'string' },
  decimal: { type: 'string' },
  encoding: { type: 'string' },
  'date-order': { type: 'string' },
  format: { type: 'string' },
  output: { type: 'string' },
};

// The flags of the commands that fit a sample (fit, predict, select-bandwidth): regression-options.mjs reads them.
export const SAMPLE_OPTIONS = {
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

/** The data file, the command's one positional argument. */
export function dataFile(positionals) {
  if (positionals[0] === undefined) throw new UsageError('the data file (FILE) is missing');
  return positionals[0];
}

/** The reader's options from the flags. */
export function readerOptions(values) {
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
export const DATE_KINDS = new Set(['date', 'time']);
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

/**
 * The sample of a file: x (n × dim, dates centred), y (n × width), the column names and x's formats for output; with
 * --weights (a command that takes it), `weights`, that column's values in the rows kept (else null). With
 * `categories` (the commands that take --types), a text --x column is read as a category (types.mjs); else it is
 * refused as not a number.
 */
export async function loadSample(file, values, { categories = false } = {}) {
  const t = await readColumns(
    file,
    {
      '--x': columnList(values, 'x'),
      '--y': columnList(values, 'y'),
      ...(values.weights !== undefined && { '--weights': columnList(values, 'weights') }),
    },
    { ...readerOptions(values), labelled: categories ? ['--x'] : [] },
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
  // Discrete columns (--types, text) coded 0 … c − 1 where the command takes them (`categories`): types.mjs.
  const sample = {
    file,
    header: t.header,
    xCols: x.columns,
    x: x.data,
    y: y.data,
    weights: t.groups['--weights']?.data ?? null,
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
  };
  return codeSample(sample, values, categories ? x.labels : []);
}

/** Column `c` of the sample's y (row-major, `yNames.length` columns). */
export function yColumn(s, c) {
  const width = s.yNames.length;
  return s.y.filter((_, i) => i % width === c);
}
