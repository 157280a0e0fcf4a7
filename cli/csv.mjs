// CSV/TSV reading for the CLI: RFC 4180 quoting, header detection, columns by name or 1-based index, and errors that
// name the file, line and column (1-based) of the offending field.
import { UsageError } from './args.mjs';

/** An input error at a place in a file; the CLI prints it as `file:line:column: message`. */
export class InputError extends Error {
  constructor(file, line, column, message) {
    super(`${file}:${line}:${column}: ${message}`);
    this.name = 'InputError';
  }
}

/** The delimiter: tab for .tsv/.tab files, else tab when the first line has tabs and no commas, else comma. */
export function detectDelimiter(file, text) {
  if (/\.(tsv|tab)$/i.test(file)) return '\t';
  const first = text.slice(0, text.indexOf('\n') >>> 0);
  return first.includes('\t') && !first.includes(',') ? '\t' : ',';
}

/**
 * Splits `text` into records of fields, each field `{ text, line, column }`. Blank lines are skipped; CRLF is
 * accepted; a quoted field may hold delimiters, doubled quotes and newlines.
 */
export function parseRecords(text, file, delimiter) {
  const records = [];
  let record = [];
  let line = 1;
  let lineStart = 0;
  let i = 0;
  const n = text.length;
  if (text.charCodeAt(0) === 0xfeff) i = lineStart = 1;  // a byte-order mark is not part of the first field
  let atRecordStart = true;
  while (i <= n) {
    const column = i - lineStart + 1;
    const fieldLine = line;
    let value = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= n) throw new InputError(file, fieldLine, column, 'unterminated quoted field');
        const c = text[i];
        if (c === '"') {
          if (text[i + 1] === '"') { value += '"'; i += 2; continue; }
          i++;
          break;
        }
        if (c === '\n') { line++; lineStart = i + 1; }
        value += c;
        i++;
      }
      if (i < n && text[i] !== delimiter && text[i] !== '\n' && text[i] !== '\r') {
        throw new InputError(file, line, i - lineStart + 1, `unexpected ${JSON.stringify(text[i])} after a closing quote`);
      }
    } else {
      let end = i;
      while (end < n && text[end] !== delimiter && text[end] !== '\n' && text[end] !== '\r') end++;
      value = text.slice(i, end);
      i = end;
    }
    const blank = atRecordStart && value === '' && (i >= n || text[i] !== delimiter);
    if (!blank) record.push({ text: value, line: fieldLine, column });
    atRecordStart = false;
    if (i < n && text[i] === delimiter) { i++; continue; }
    if (text[i] === '\r') i++;
    if (record.length) records.push(record);
    record = [];
    atRecordStart = true;
    if (i >= n) break;
    i++;  // the newline
    line++;
    lineStart = i;
  }
  return records;
}

const isNumber = (s) => s.trim() !== '' && Number.isFinite(Number(s));

/**
 * Reads a table: `{ names, rows, file }` where `names` are the header's names (null without a header) and `rows` the
 * records after it. The first record is a header when `header` is true, or, for 'auto', when any of its fields is
 * not a number. Every record must have as many fields as the first.
 */
export function readTable(text, file, { delimiter = detectDelimiter(file, text), header = 'auto' } = {}) {
  const records = parseRecords(text, file, delimiter);
  if (records.length === 0) throw new InputError(file, 1, 1, 'no data: the file is empty');
  const hasHeader = header === 'auto' ? records[0].some((f) => !isNumber(f.text)) : header;
  const width = records[0].length;
  for (const r of records) {
    if (r.length !== width) {
      const last = r[r.length - 1];
      throw new InputError(file, r[0].line, r.length < width ? last.column + last.text.length : r[width].column,
        `expected ${width} fields (as on line ${records[0][0].line}); got ${r.length}`);
    }
  }
  const names = hasHeader ? records[0].map((f) => f.text.trim()) : null;
  const rows = hasHeader ? records.slice(1) : records;
  if (rows.length === 0) throw new InputError(file, records[0][0].line + 1, 1, 'no data rows after the header');
  return { names, rows, file, width };
}

/**
 * Resolves column specifiers (names of the header, or 1-based indices) to 0-based indices; `what` names the option
 * for messages. Throws a plain Error (a usage error) when a column does not exist.
 */
export function resolveColumns(table, specs, what) {
  return specs.map((spec) => {
    if (table.names) {
      const byName = table.names.indexOf(spec);
      if (byName >= 0) return byName;
    }
    if (/^\d+$/.test(spec) && Number(spec) >= 1 && Number(spec) <= table.width) return Number(spec) - 1;
    const known = table.names ? `columns are ${table.names.map((c) => JSON.stringify(c)).join(', ')} or 1 … ${table.width}`
      : `the file has no header; columns are 1 … ${table.width}`;
    throw new UsageError(`${what}: no column ${JSON.stringify(spec)} in ${table.file} (${known})`);
  });
}

/** The chosen columns as one flat row-major Float64Array (rows × columns); a non-number is an InputError. */
export function numericColumns(table, columns) {
  const out = new Float64Array(table.rows.length * columns.length);
  table.rows.forEach((row, r) => {
    columns.forEach((c, k) => {
      const field = row[c];
      const value = Number(field.text);
      if (!isNumber(field.text)) {
        const name = table.names ? JSON.stringify(table.names[c]) : `${c + 1}`;
        throw new InputError(table.file, field.line, field.column, `column ${name}: expected a finite number; got ${JSON.stringify(field.text)}`);
      }
      out[r * columns.length + k] = value;
    });
  });
  return out;
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
