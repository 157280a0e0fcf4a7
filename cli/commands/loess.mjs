// `kernel-attention loess`: R's loess() of one column on one to four others: the fitted values, predictions at other
// points with R's standard errors, or the statistics R's print() and summary() give.
import { choice, columnList, number, parseCommand, UsageError } from '../args.mjs';
import { apiCall } from '../api-errors.mjs';
import { READING_HELP, READING_NOTE } from '../help.mjs';
import { emit, emitRows, outputFormat, round, roundOnRange } from '../output.mjs';
import { formatCsv } from '../csv.mjs';
import { queryPoints, QUERY_HELP, QUERY_OPTIONS, readGrid } from '../queries.mjs';
import { dataFile, FILE_OPTIONS, loadSample } from '../sample.mjs';

export const summary = "fit R's loess(): fitted values, predictions with standard errors, enp and residual scale";

const help = `Usage: kernel-attention loess FILE --x COLS --y COL [--span F] [--degree D] [--family F] [options]

Fits a local regression as R's loess() computes it (Cleveland, Grosse and Shyu 1992): at each point a polynomial of
degree D fitted by tricube-weighted least squares over the nearest ⌊F·n⌋ points, in float64; by default (as R) exact
fits at the vertices of a k-d tree blended between them. Prints, one row per data row in the file's order, the x
columns, y, fitted and residual (and robustness, the final robustness weight, with --family symmetric); with --at
or --grid, the predictions there instead (R's predict()); with --summary, the fit's statistics instead (R's print()
and summary(): n, enp, residualScale, traceHat, oneDelta, twoDelta and degreesOfFreedom). Fitted values and
predictions are printed to 9 significant digits of y's range.
  --x COLS            the input column(s), 1 to 4: names from the header or 1-based indices, comma-separated
  --y COL             the output column, likewise
  --span F            the share of the points in each local fit, > 0 (default 0.75; above 1 every point, the
                      neighbourhood enlarged as R's)
  --degree D          the local polynomial's degree: 0, 1 or 2 (default 2)
  --family F          gaussian (least squares, default) or symmetric (bisquare robustness iterations)
  --surface S         interpolate (the k-d tree, default; no prediction outside the data's box: NaN, R's NA) or
                      direct (an exact fit at every point asked for)
  --no-normalize      with several x columns, do not divide each by its 10 %-trimmed standard deviation first
  --iterations N      fits in all with --family symmetric, 1 to 1000 (default 4, as R's loess.control)
  --cell C            interpolation: the k-d tree's cells hold at most ⌊n·F·C⌋ points (default 0.2)
  --weights COL       a column of prior weights, ≥ 0 (R's weights)
  --statistics S      approximate (default, as R), exact (from the whole n × n operator: small samples only) or
                      none (no statistics, no standard errors)
  --trace-hat T       exact (default) or approximate: how the operator's trace is computed (R's trace.hat; R
                      advises approximate above about 1,000 points)
${QUERY_HELP}
  --se                add standard errors (R's se.fit) and a pointwise band: columns lower, upper, stderr (with
                      --at or --grid: <y>.lower, <y>.upper, <y>.stderr)
  --level L           the band's level, between 0 and 1 (default 0.95; implies --se); t quantiles with R's
                      degrees of freedom, one.delta² / two.delta
  --summary           print the fit's statistics (name, value) instead of the fitted values
${READING_HELP}
  --format F          csv or json (default: json when --output ends in .json, else csv)
  --output FILE       write there instead of to stdout (- is stdout)
  -h, --help          this help

${READING_NOTE}

Example: kernel-attention loess cars.csv --x speed --y dist --span 0.5 --grid 5 --se`;

const OPTIONS = {
  x: { type: 'string' },
  y: { type: 'string' },
  span: { type: 'string' },
  degree: { type: 'string' },
  family: { type: 'string' },
  surface: { type: 'string' },
  'no-normalize': { type: 'boolean' },
  iterations: { type: 'string' },
  cell: { type: 'string' },
  weights: { type: 'string' },
  statistics: { type: 'string' },
  'trace-hat': { type: 'string' },
  ...QUERY_OPTIONS,
  se: { type: 'boolean' },
  level: { type: 'string' },
  summary: { type: 'boolean' },
  ...FILE_OPTIONS,
};

/** loess()'s options from the flags, checked before the file is read, each naming its flag. */
function readOptions(values) {
  const xs = columnList(values, 'x');
  if (xs.length > 4) throw new UsageError(`--x must name 1 to 4 columns; got ${xs.length}`);
  if (columnList(values, 'y').length !== 1)
    throw new UsageError(`--y must name one column; got ${JSON.stringify(values.y)}`);
  if (values.weights !== undefined && columnList(values, 'weights').length !== 1)
    throw new UsageError(`--weights must name one column; got ${JSON.stringify(values.weights)}`);
  const options = { dim: xs.length };
  const span = number(values, 'span', { positive: true });
  if (span !== undefined) options.span = span;
  const degree = choice(values, 'degree', ['0', '1', '2']);
  if (degree !== undefined) options.degree = Number(degree);
  const family = choice(values, 'family', ['gaussian', 'symmetric']);
  if (family !== undefined) options.family = family;
  const surface = choice(values, 'surface', ['interpolate', 'direct']);
  if (surface !== undefined) options.surface = surface;
  if (values['no-normalize']) options.normalize = false;
  const iterations = number(values, 'iterations', { integer: true });
  if (iterations !== undefined && !(iterations >= 1 && iterations <= 1000))
    throw new UsageError(`--iterations must be an integer from 1 to 1000; got ${JSON.stringify(values.iterations)}`);
  if (iterations !== undefined) options.iterations = iterations;
  const cell = number(values, 'cell', { positive: true });
  if (cell !== undefined) options.cell = cell;
  const statistics = choice(values, 'statistics', ['approximate', 'exact', 'none']);
  if (statistics !== undefined) options.statistics = statistics;
  const traceHat = choice(values, 'trace-hat', ['exact', 'approximate']);
  if (traceHat !== undefined) options.traceHat = traceHat;
  return options;
}

/** What to print, checked before the file is read: the format, the points (grid or --at), the band's level. */
function readRequest(values, file, options) {
  const format = outputFormat(values);
  const grid = readGrid(values, file);
  const level = number(values, 'level');
  if (level !== undefined && !(level > 0 && level < 1))
    throw new UsageError(`--level must be between 0 and 1; got ${values.level}`);
  const band = values.se || level !== undefined;
  if (band && options.statistics === 'none')
    throw new UsageError('--se and --level need the statistics: --statistics none gives no standard errors');
  const queries = grid !== undefined || values.at !== undefined;
  if (values.summary && (band || queries))
    throw new UsageError('--summary prints the statistics only: leave out --se, --level, --at and --grid');
  return { format, grid, queries, level: band ? (level ?? 0.95) : undefined };
}

/** The statistics R's print() and summary() give (NaN, printed null or empty, with --statistics none). */
function statistics(s, model) {
  const o = model.options;
  return {
    file: s.file,
    n: s.n,
    x: s.xNames,
    y: s.yNames[0],
    span: o.span,
    degree: o.degree,
    family: o.family,
    surface: o.surface,
    normalize: o.normalize,
    ...(o.family === 'symmetric' && { iterations: o.iterations }),
    statistics: o.statistics,
    traceHatMethod: o.traceHat,
    enp: round(model.enp),
    residualScale: round(model.residualScale),
    traceHat: round(model.traceHat),
    oneDelta: round(model.oneDelta),
    twoDelta: round(model.twoDelta),
    degreesOfFreedom: round(model.degreesOfFreedom),
  };
}

/** R's warnings, on stderr so that stdout stays the data. */
function warn(model, mean) {
  if (model.pseudoInverse)
    process.stderr.write(
      'warning [pseudoinverse]: some local fits were singular and used a pseudoinverse (as R warns)\n',
    );
  const outside = mean ? mean.filter((v) => Number.isNaN(v)).length : 0;
  if (outside)
    process.stderr.write(
      `warning [outside]: ${outside} point${outside === 1 ? ' is' : 's are'} outside the data's box, where the ` +
        "interpolated surface has no value (NaN, R's NA); --surface direct fits there\n",
    );
}

/** The rows at the data: x, y, fitted, residual, the robustness weight (symmetric), the band (with --se). */
function observationRows(s, model, band) {
  const inY = roundOnRange(s.y);
  const header = [...s.xNames, s.yNames[0], 'fitted', 'residual'];
  const robust = model.options.family === 'symmetric';
  if (robust) header.push('robustness');
  if (band) header.push('lower', 'upper', 'stderr');
  const rows = Array.from(model.fitted, (f, i) => {
    const row = [...Array.from(s.x.subarray(i * s.dim, (i + 1) * s.dim), (v, d) => s.formats[d](v)), s.y[i], inY(f)];
    row.push(round(model.residuals[i]));
    if (robust) row.push(round(model.robustnessWeights[i]));
    if (band) row.push(inY(band.lower[i]), inY(band.upper[i]), round(band.stderr[i]));
    return row;
  });
  return { header, rows };
}

/** The rows at the queries: x, then the prediction (and its band) under y's name, as predict prints them. */
function queryRows(s, xq, mean, band) {
  const inY = roundOnRange(s.y);
  const y = s.yNames[0];
  const header = [...s.xNames, y, ...(band ? [`${y}.lower`, `${y}.upper`, `${y}.stderr`] : [])];
  const rows = Array.from(mean, (m, i) => [
    ...Array.from(xq.subarray(i * s.dim, (i + 1) * s.dim), (v, d) => s.formats[d](v)),
    inY(m),
    ...(band ? [inY(band.lower[i]), inY(band.upper[i]), round(band.stderr[i])] : []),
  ]);
  return { header, rows };
}

export async function run(argv, api) {
  const { values, positionals } = parseCommand(argv, OPTIONS, { positionals: 1 });
  if (values.help) return help;
  const file = dataFile(positionals);
  const options = readOptions(values);
  const { format, grid, queries, level } = readRequest(values, file, options);
  const s = await loadSample(file, values);
  const xq = queries ? await queryPoints(values, s, grid) : null;
  const ka = await api();
  const model = await apiCall(() => ka.loess(s.x, s.y, { ...options, ...(s.weights && { weights: s.weights }) }), s);
  try {
    if (values.summary) {
      warn(model, null);
      const result = statistics(s, model);
      if (format === 'json') return emit(values, JSON.stringify(result, null, 2) + '\n');
      const rows = Object.entries(result).map(([name, v]) => [name, Array.isArray(v) ? v.join(' ') : v]);
      return emit(values, formatCsv(['name', 'value'], rows));
    }
    const at = xq ?? s.x;
    const band = level === undefined ? null : await apiCall(() => model.predictInterval(at, { level }));
    const mean = band ? band.mean : xq ? await apiCall(() => model.predict(xq)) : null;
    warn(model, xq ? mean : null);
    const { header, rows } = xq ? queryRows(s, xq, mean, band) : observationRows(s, model, band);
    return emitRows(values, format, header, rows);
  } finally {
    model.dispose();
  }
}
