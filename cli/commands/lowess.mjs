// `kernel-attention lowess`: R's lowess() of one column against another, one row per data row in the file's order.
import { columnList, number, parseCommand, UsageError } from '../args.mjs';
import { apiCall } from '../api-errors.mjs';
import { READING_HELP, READING_NOTE } from '../help.mjs';
import { emitRows, outputFormat, round, roundOnRange } from '../output.mjs';
import { dataFile, DATE_KINDS, FILE_OPTIONS, loadSample } from '../sample.mjs';

export const summary = "smooth a column by LOWESS (R's lowess()): fitted values and robustness weights";

const help = `Usage: kernel-attention lowess FILE --x COL --y COL [--frac F] [--iterations N] [--delta D] [options]

Smooths one column against another by LOWESS (Cleveland 1979) as R's lowess() computes it: at each x a local-linear
fit, tricube-weighted over the nearest ⌊f·n⌋ points, then N rounds of bisquare robustness weights. Prints, one row per
data row in the file's order: x, y, fitted (the smoothed value, to 9 significant digits of y's range) and weight (the
robustness weight of the final fit). The fit runs in float64. There is no confidence band.
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

/** lowess()'s options from the flags, checked before the file is read, with the flag's name: the ranges are lowess()'s own. */
function readOptions(values) {
  for (const name of ['x', 'y']) {
    if (columnList(values, name).length !== 1)
      throw new UsageError(`--${name} must name one column; got ${JSON.stringify(values[name])}`);
  }
  const frac = number(values, 'frac');
  if (frac !== undefined && !(frac > 0 && frac <= 1))
    throw new UsageError(`--frac must be a number in (0, 1]; got ${JSON.stringify(values.frac)}`);
  const iterations = number(values, 'iterations', { integer: true });
  if (iterations !== undefined && iterations < 0)
    throw new UsageError(`--iterations must be an integer ≥ 0; got ${JSON.stringify(values.iterations)}`);
  const delta = number(values, 'delta');
  if (delta !== undefined && !(delta >= 0))
    throw new UsageError(`--delta must be a number ≥ 0; got ${JSON.stringify(values.delta)}`);
  const options = {};
  if (frac !== undefined) options.frac = frac;
  if (iterations !== undefined) options.iterations = iterations;
  if (delta !== undefined) options.delta = delta;
  return options;
}

export async function run(argv, api) {
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
  if (values.help) return help;
  const file = dataFile(positionals);
  const format = outputFormat(values);
  const options = readOptions(values);
  const s = await loadSample(file, values);
  const ka = await api();
  const { fitted, weights } = await apiCall(() => ka.lowess(s.x, s.y, options), s);
  // x and y as read (full float64; dates as ISO 8601), the smooth to 9 significant digits of y's range.
  const inY = roundOnRange(s.y);
  const rows = Array.from(fitted, (f, i) => [
    DATE_KINDS.has(s.kinds[0]) ? s.formats[0](s.x[i]) : s.x[i],
    s.y[i],
    inY(f),
    round(weights[i]),
  ]);
  return emitRows(values, format, [s.xNames[0], s.yNames[0], 'fitted', 'weight'], rows);
}
