// The rows of a table (table.js) that a computation can use: those whose used columns all hold values, and why each
// other row is left out (or, on request, the first such row as an error).
import { KernelAttentionError } from './errors.js';

/**
 * The rows to use for the columns `used` (indices into `table.keep`'s order). With `missing` 'skip', the rows with a missing value or a problem in a used column, listed in `skipped` (`{ row, line, position, column,
 * reason, missing }`: `column` a name or null, `position` the field's 1-based character or null, `missing` true for an
 * empty or NA cell, false for a cell that is not a value or a row with the wrong number of fields) are left out. With 'error', the first such row throws a KernelAttentionError naming its line and column.
 */
export function selectRows(table, used, { missing = 'skip' } = {}) {
  if (missing !== 'skip' && missing !== 'error')
    throw new KernelAttentionError(
      'BadInput',
      `\`missing\` must be 'skip' or 'error'; got ${JSON.stringify(missing)}`,
      'missing',
    );
  const rows = [];
  const skipped = [];
  for (let r = 0; r < table.rows; r++) {
    let why = null;
    const problems = table.problems.get(r);
    if (problems) {
      const p = problems.find((q) => q.column < 0 || used.some((k) => table.keep[k] === q.column));
      if (p)
        why = {
          row: r,
          line: p.line,
          position: p.position,
          column: p.column < 0 ? null : table.names[p.column],
          reason: p.reason,
          missing: false,
        };
    }
    if (!why) {
      const k = used.find((u) => Number.isNaN(table.columns[u][r]));
      if (k !== undefined) {
        const name = table.names[table.keep[k]];
        // Unreadable cells past the first 1,000 of a text column are not stored: they are the column's kind.
        why = {
          row: r,
          line: table.lines[r],
          position: null,
          column: name,
          reason: table.kinds[k] === 'text' ? 'not a number (a text column)' : 'missing value',
          missing: table.kinds[k] !== 'text',
        };
      }
    }
    if (!why) rows.push(r);
    else if (missing === 'error') {
      throw new KernelAttentionError(
        'BadInput',
        `line ${why.line}${why.column === null ? '' : `, column ${JSON.stringify(why.column)}`}: ` +
          `${why.reason}${why.missing ? " (\`missing\`: 'skip' drops such rows)" : ''}`,
        'input',
      );
    } else skipped.push(why);
  }
  return { rows: Uint32Array.from(rows), skipped };
}
