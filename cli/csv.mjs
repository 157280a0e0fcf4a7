// Tables for the CLI through the package's reader (web/src/table.js, the demo's too): a file or stdin (`-`) streamed
// in chunks, only the named columns kept; columns by name or 1-based index; errors as `file:line:column: message`.
import { createReadStream } from 'node:fs';
import { KernelAttentionError } from '../web/src/errors.js';
import { selectRows, TableReader } from '../web/src/table.js';
import { FileError, UsageError, reason } from './args.mjs';

/** An input error at a place in a file; the CLI prints it as `file:line:column: message` (less what is null). */
export class InputError extends Error {
  constructor(file, line, column, message) {
    super(`${file}:${line === null ? '' : `${line}:`}${column === null ? '' : `${column}:`} ${message}`);
    this.name = 'InputError';
  }
}

// The reader's option names, as the CLI's flags.
const FLAGS = {
  decimal: '--decimal',
  encoding: '--encoding',
  missing: '--missing',
  delimiter: '--delimiter',
  header: '--no-header',
  dateOrder: '--date-order',
};
export const asFlags = (message) => message.replace(/`(\w+)`( to)?/g, (all, name) => (FLAGS[name] ? FLAGS[name] : all));

/** Opens `file` (`-`: stdin) as a stream of byte chunks; a path that cannot be read is a FileError. */
async function* chunks(file) {
  const stream = file === '-' ? process.stdin : createReadStream(file, { highWaterMark: 1 << 16 });
  const it = stream[Symbol.asyncIterator]();
  for (;;) {
    let next;
    try {
      next = await it.next();
    } catch (e) {
      throw new FileError(`cannot read ${file}: ${reason(e)}`);
    }
    if (next.done) return;
    yield next.value;
  }
}

/**
 * Resolves column specifiers (header names or 1-based indices) to 0-based indices of a table with `names` (`header`:
 * whether they came from the file); `what` names the flag. A missing column is a UsageError.
 */
function resolve(names, header, specs, what, file) {
  return specs.map((spec) => {
    if (header) {
      const byName = names.indexOf(spec);
      if (byName >= 0) return byName;
    }
    if (/^\d+$/.test(spec) && Number(spec) >= 1 && Number(spec) <= names.length) return Number(spec) - 1;
    const known = header
      ? `columns are ${names.map((c) => JSON.stringify(c)).join(', ')} or 1 … ${names.length}`
      : `the file has no header; columns are 1 … ${names.length}`;
    throw new UsageError(`${what}: no column ${JSON.stringify(spec)} in ${file} (${known})`);
  });
}

/**
 * The table with the text columns `asLabels` (0-based file columns, each with its labels: table-labels.js) read as
 * categories: each cell its label's code (a missing cell NaN), and their cells no longer problems.
 */
function withLabelCodes(table, asLabels) {
  const labelled = (k) => asLabels.has(table.keep[k]);
  const problems = new Map();
  for (const [row, list] of table.problems) {
    const kept = list.filter((p) => p.column < 0 || !asLabels.has(p.column));
    if (kept.length) problems.set(row, kept);
  }
  return {
    ...table,
    columns: table.columns.map((col, k) =>
      labelled(k) ? Float64Array.from(table.labels[k].codes, (c) => (c < 0 ? NaN : c)) : col,
    ),
    kinds: table.kinds.map((kind, k) => (labelled(k) ? 'label' : kind)),
    problems,
  };
}

/**
 * Reads the columns `groups` (`{ flag: specs }`, specs a list or a function of `{ header }` giving one) of `file` with the reader's `options`, keeping only those columns.
 * Returns `{ file, names, header, settings, groups: { flag: { columns: [0-based], data: row-major Float64Array,
 * labels } }, n, lines }` for the rows kept under `missing` ('skip' drops rows with an empty or NA cell in these
 * columns; 'error' refuses them); a cell that is not a value is always an InputError. The text columns of the flags in
 * `labelled` (at most 50 distinct labels: table-labels.js) are read as their labels' codes: `labels[k]` lists the
 * group's k-th column's labels in the order first seen (null for a column of numbers).
 */
export async function readColumns(path, groups, { missing = 'error', labelled = [], ...options }) {
  const file = path === '-' ? 'stdin' : path;
  const picked = {};
  let header = false;
  const reader = new TableReader({
    ...options,
    columns: (names, found) => {
      header = found.header;
      const all = [];
      for (const [flag, specs] of Object.entries(groups)) {
        picked[flag] = resolve(names, header, typeof specs === 'function' ? specs(found) : specs, flag, file);
        for (const c of picked[flag]) if (!all.includes(c)) all.push(c);
      }
      return all;
    },
  });
  let table;
  try {
    for await (const chunk of chunks(path)) reader.push(chunk);
    table = reader.end();
  } catch (e) {
    if (e instanceof KernelAttentionError) throw new InputError(file, null, null, asFlags(e.message));
    throw e;
  }
  const asLabels = new Set(
    labelled.flatMap((flag) => picked[flag] ?? []).filter((c) => table.labels[table.keep.indexOf(c)]),
  );
  if (asLabels.size) table = withLabelCodes(table, asLabels);
  const used = Object.values(picked)
    .flat()
    .map((c) => table.keep.indexOf(c));
  const { rows, skipped } = selectRows(table, [...new Set(used)]);
  const bad = skipped.find((s) => !s.missing || missing === 'error');
  if (bad) {
    const hint = bad.missing ? ' (--missing skip drops such rows)' : '';
    throw new InputError(
      file,
      bad.line,
      bad.position,
      `${bad.column === null ? '' : `column ${JSON.stringify(bad.column)}: `}${bad.reason}${hint}`,
    );
  }
  if (rows.length === 0) throw new InputError(file, table.lines[0] ?? 1, null, 'no data rows');
  const out = {};
  for (const [flag, cols] of Object.entries(picked)) {
    const data = new Float64Array(rows.length * cols.length);
    const sources = cols.map((c) => table.columns[table.keep.indexOf(c)]);
    for (let i = 0; i < rows.length; i++)
      for (let k = 0; k < cols.length; k++) data[i * cols.length + k] = sources[k][rows[i]];
    const labels = cols.map((c) => (asLabels.has(c) ? table.labels[table.keep.indexOf(c)].labels : null));
    out[flag] = { columns: cols, data, labels };
  }
  return {
    file,
    names: table.names,
    header,
    settings: table.settings,
    groups: out,
    n: rows.length,
    lines: Uint32Array.from(rows, (r) => table.lines[r]),
    skipped: skipped.length,
  };
}

/**
 * Formats a table as CSV (fields with a comma, quote or newline are quoted). Text that a spreadsheet would run as a
 * formula (a leading =, +, -, @, tab or carriage return: column names come from the user's file) gets a leading
 * single quote, as OWASP advises against CSV injection; numbers are written as numbers.
 */
export function formatCsv(header, rows) {
  const cell = (v) => {
    let s = typeof v === 'number' ? String(v) : String(v ?? '');
    if (typeof v !== 'number' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
    return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
  };
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\n') + '\n';
}
