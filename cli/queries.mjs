// The points a fitted model is predicted at (predict, loess): the rows of another table (--at, its --at-x columns) or
// an evenly spaced grid (--grid N from --from to --to), in the sample's frame (a date column centred as its x).
import { columnList, number, UsageError } from './args.mjs';
import { readColumns } from './csv.mjs';
import { DATE_KINDS, readerOptions } from './sample.mjs';
import { parseDate } from '../web/src/table-values.js';
import { codeQueries } from './types.mjs';

export const QUERY_OPTIONS = {
  at: { type: 'string' },
  'at-x': { type: 'string' },
  grid: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
};

export const QUERY_HELP = `  --at FILE2          predict at the rows of this CSV/TSV file
  --at-x COLS         its input columns (default: as --x)
  --grid N            predict at N evenly spaced points instead (N ≥ 2)
  --from A, --to B    the grid's ends (default: the smallest and largest x)`;

/** --grid's N (undefined without it), checked with --at before any file is read. */
export function readGrid(values, file) {
  if (values.at !== undefined && values.grid !== undefined)
    throw new UsageError('give --at FILE2 or --grid N, not both');
  const grid = number(values, 'grid', { integer: true });
  if (grid !== undefined && grid < 2) throw new UsageError(`--grid must be an integer ≥ 2; got ${values.grid}`);
  if (file === '-' && values.at === '-') throw new UsageError('FILE and --at cannot both be - (stdin)');
  return grid;
}

/** The query points, n × dim in the sample's frame (dates centred as its x): the grid, or the rows of --at. */
export async function queryPoints(values, s, grid) {
  if (grid !== undefined) {
    if (s.dim !== 1) throw new UsageError(`--grid needs exactly one --x column; got ${s.dim} (use --at for more)`);
    if (s.levels?.[0]) throw new UsageError('--grid needs a continuous --x column (use --at for a discrete one)');
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
    return Float64Array.from({ length: grid }, (_, i) => lo + ((hi - lo) * i) / (grid - 1));
  }
  const specs = values['at-x'] ? columnList(values, 'at-x') : null;
  const at = await readColumns(
    values.at,
    { '--at-x': (found) => specs ?? (found.header && s.header ? s.xNames : s.xCols.map((c) => String(c + 1))) },
    { ...readerOptions(values), labelled: s.levels.some((l) => typeof l?.[0] === 'string') ? ['--at-x'] : [] },
  );
  const cols = at.groups['--at-x'].columns;
  if (cols.length !== s.dim) throw new UsageError(`--at-x names ${cols.length} columns; --x has ${s.dim}`);
  const xq = at.groups['--at-x'].data;
  for (let i = 0; i < xq.length; i++) xq[i] -= s.centre[i % s.dim];
  // Discrete columns (--types or text, regression commands) coded as the sample's levels.
  return codeQueries(s, xq, at.groups['--at-x'].labels);
}
