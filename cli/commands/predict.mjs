// `kernel-attention predict`: a kernel regression fitted to a table, predicted at the rows of another table or on an
// evenly spaced grid, with an optional band and derivative columns.
import { choice, number, parseCommand, UsageError } from '../args.mjs';
import { apiCall } from '../api-errors.mjs';
import { OUTPUT_HELP, READING_NOTE, ROBUST_HELP, SAMPLE_HELP } from '../help.mjs';
import { emitRows, outputFormat, printWarnings, round, roundOnRange } from '../output.mjs';
import { withProgress } from '../progress.mjs';
import { regressionOptions, robustArgv } from '../regression-options.mjs';
import { queryPoints, QUERY_HELP, QUERY_OPTIONS, readGrid } from '../queries.mjs';
import { dataFile, loadSample, SAMPLE_OPTIONS, yColumn } from '../sample.mjs';

export const summary = 'predict at the rows of another file or on an evenly spaced grid';

const help = `Usage: kernel-attention predict FILE --x COLS --y COLS (--at FILE2 | --grid N) [options]

Fits a kernel regression to FILE (as \`fit\` does) and prints its predictions: at the rows of FILE2 (the columns of
--at-x, by default the --x names, or the same indices when FILE2 has no header), or at N evenly spaced points from
--from to --to (default: the range of x; one x column only). With --level, adds a pointwise confidence band.
Predictions are printed to 9 significant digits of y's range (as fit prints its numbers).
${SAMPLE_HELP}
${QUERY_HELP}
  --level L           add <y>.lower, <y>.upper and <y>.stderr columns for a band of level L (e.g. 0.95)
  --gradient          add a <y>.d.<x> column per y and x column: the fit's derivative ∂y/∂x (per second for a
                      date column), exactly; with --level also its standard error, <y>.d.<x>.stderr
  --variance V        the band's noise variance: global (one per --y column, default) or local (following x)
${ROBUST_HELP}
${OUTPUT_HELP}

${READING_NOTE}

Example: kernel-attention predict data.csv --x time --y level --grid 101 --level 0.95 --output fit.csv`;

const OPTIONS = {
  ...SAMPLE_OPTIONS,
  ...QUERY_OPTIONS,
  level: { type: 'string' },
  variance: { type: 'string' },
  robust: { type: 'string' },
  gradient: { type: 'boolean' },
};

/** The flags that shape the output, checked before the file is read. */
function readRequest(values, file) {
  if (values.at === undefined && values.grid === undefined) throw new UsageError('give one of --at FILE2 or --grid N');
  const format = outputFormat(values);
  const level = number(values, 'level');
  if (level !== undefined && !(level > 0 && level < 1))
    throw new UsageError(`--level must be between 0 and 1; got ${values.level}`);
  const variance = choice(values, 'variance', ['global', 'local'], 'global');
  if (values.variance !== undefined && level === undefined)
    throw new UsageError('--variance needs --level (it shapes the band)');
  return { format, level, variance, grid: readGrid(values, file) };
}

/** The output's header and rows: x, then per y its fit (and band), then the derivative columns per y and x. */
function table(s, xq, level, result, slopes) {
  const width = s.yNames.length;
  const header = [
    ...s.xNames,
    ...s.yNames.flatMap((y) => (level === undefined ? [y] : [y, `${y}.lower`, `${y}.upper`, `${y}.stderr`])),
  ];
  // Gradient columns follow, per y then per x: [(i·dim + d)·width + c] in gradient()'s layout.
  const slopeColumns = slopes
    ? s.yNames.flatMap((y, c) => s.xNames.map((x, d) => ({ c, d, name: `${y}.d.${x}` })))
    : [];
  for (const { name } of slopeColumns) header.push(...(level === undefined ? [name] : [name, `${name}.stderr`]));
  // The fit and its band in y's units: 9 digits of y's range, so that y with a large offset (1.7e9 + …) keeps them.
  const inY = s.yNames.map((_, c) => roundOnRange(yColumn(s, c)));
  const rows = Array.from({ length: xq.length / s.dim }, (_, i) => [
    ...Array.from(xq.subarray(i * s.dim, (i + 1) * s.dim), (v, d) => s.formats[d](v)),
    ...s.yNames.flatMap((_, c) => {
      const at = i * width + c;
      if (level === undefined) return [inY[c](result.mean[at])];
      return [inY[c](result.mean[at]), inY[c](result.lower[at]), inY[c](result.upper[at]), round(result.stderr[at])];
    }),
    ...slopeColumns.flatMap(({ c, d }) => {
      const at = (i * s.dim + d) * width + c;
      return (level === undefined ? [slopes.gradient[at]] : [slopes.gradient[at], slopes.stderr[at]]).map(round);
    }),
  ]);
  return { header, rows };
}

export async function run(argv, api) {
  const { values, positionals } = parseCommand(robustArgv(argv), OPTIONS, { positionals: 1 });
  if (values.help) return help;
  const file = dataFile(positionals);
  const { format, level, variance, grid } = readRequest(values, file);
  const s = await loadSample(file, values, { categories: true });
  const xq = await queryPoints(values, s, grid);

  const ka = await api();
  const model = await withProgress('fit', values, (onProgress) =>
    apiCall(() => ka.kernelRegressionAsync(s.x, s.y, { ...regressionOptions(values, s), onProgress }), s),
  );
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
  const { header, rows } = table(s, xq, level, result, slopes);
  return emitRows(values, format, header, rows);
}
