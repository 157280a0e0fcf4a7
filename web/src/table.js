// Reads a delimited text table (CSV, TSV, semicolon- or space-separated) into Float64Array columns, from bytes or
// text given in chunks: the demo's parse worker and the command line read files through this one reader.
//
// The dialect is detected from the first `sampleBytes` of the input and reported (`table.settings`): encoding,
// delimiter, decimal mark, digit-group separator, header, comment lines, and each column's kind (number, date, time,
// text). Numbers are read strictly; dates and times become seconds (see table-values.js). What cannot be read is never
// guessed: an ambiguous decimal mark is refused with the option that settles it, and each cell that is not a value
// is NaN with its place recorded, for `selectRows` to skip or report.
import { KernelAttentionError } from './errors.js';
import { createDecoder, detectEncoding, ENCODINGS } from './table-decode.js';
import { delimiterName, detectDialect, DELIMITERS, splitLine } from './table-dialect.js';
import { isMissing, parseCompactDate, parseDate, parseNumber } from './table-values.js';
import { LabelCodes } from './table-labels.js';

export { isMissing, parseDate, parseNumber } from './table-values.js';
export { selectRows } from './table-rows.js';

const SAMPLE_BYTES = 1 << 16;
const PLAIN = /^-?\d+(?:\.\d+)?$/;
const MAX_STORED = 1000;

/** A Float64Array (or Uint32Array) that grows by doubling; `array()` is a copy of exactly the values pushed. */
class Growing {
  constructor(Type) {
    this.Type = Type;
    this.data = new Type(256);
    this.length = 0;
  }

  push(v) {
    if (this.length === this.data.length) {
      const next = new this.Type(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }

  array() {
    return this.data.slice(0, this.length);
  }
}

const fail = (argument, message) => {
  throw new KernelAttentionError('BadInput', message, argument);
};

function checkOptions(o) {
  if (!ENCODINGS.includes(o.encoding))
    fail('encoding', `\`encoding\` must be one of ${ENCODINGS.join(', ')}; got ${JSON.stringify(o.encoding)}`);
  if (
    o.delimiter !== 'auto' &&
    !DELIMITERS.includes(o.delimiter) &&
    !(typeof o.delimiter === 'string' && o.delimiter.length === 1 && !/["\r\n]/.test(o.delimiter))
  ) {
    fail(
      'delimiter',
      `\`delimiter\` must be 'auto', 'whitespace' or one character other than a quote or line break; got ${JSON.stringify(o.delimiter)}`,
    );
  }
  if (!['auto', '.', ','].includes(o.decimal))
    fail('decimal', `\`decimal\` must be 'auto', '.' or ','; got ${JSON.stringify(o.decimal)}`);
  if (o.decimal !== 'auto' && o.decimal === o.delimiter)
    fail('decimal', `the decimal mark cannot be the delimiter (${JSON.stringify(o.delimiter)})`);
  if (!['auto', true, false].includes(o.header))
    fail('header', `\`header\` must be 'auto', true or false; got ${JSON.stringify(o.header)}`);
  if (!['auto', 'day-first', 'month-first'].includes(o.dateOrder))
    fail('dateOrder', `\`dateOrder\` must be 'auto', 'day-first' or 'month-first'; got ${JSON.stringify(o.dateOrder)}`);
}

/**
 * Reads a table pushed in chunks: `push(chunk)` with Uint8Array / ArrayBuffer chunks of a file (or strings of text,
 * not both), then `end()` returns the table. Memory holds the sample, one line, and the kept columns.
 *
 * Options: `encoding` ('auto' | 'utf-8' | 'latin1' | 'utf-16le' | 'utf-16be'), `delimiter` ('auto', 'whitespace' or
 * one character), `decimal` ('auto' | '.' | ','), `header` ('auto' | true | false), `comment` (a line starting with it
 * is skipped; default '#', null for none), `dateOrder` ('auto' | 'day-first' | 'month-first', for nn/nn/yyyy),
 * `columns` (a function of the header's names, or 'column 1' … without one, and `{ header }`, returning the 0-based
 * indices of the columns to keep; default all), `maxColumns` (more fields in the first row is refused), `previewRows`
 * (how many data rows `preview` holds as text; default 10).
 */
export class TableReader {
  constructor({
    encoding = 'auto',
    delimiter = 'auto',
    decimal = 'auto',
    header = 'auto',
    comment = '#',
    dateOrder = 'auto',
    columns,
    maxColumns = Infinity,
    previewRows = 10,
  } = {}) {
    this.options = { encoding, delimiter, decimal, header, comment, dateOrder, columns, maxColumns, previewRows };
    checkOptions(this.options);
    this.head = []; // chunks before the encoding is known
    this.headBytes = 0;
    this.decoder = null;
    this.encoding = null;
    this.pending = ''; // text after the last complete line
    this.line = 0; // physical lines split off so far
    this.sample = []; // [line number, text] until the dialect is known
    this.sampleChars = 0;
    this.dialect = null;
    this.record = null; // an open quoted record: { text, line }
    this.counts = { comments: 0, blank: 0 };
    this.rows = 0;
  }

  push(chunk) {
    if (typeof chunk === 'string') {
      if (this.encoding === null) this.encoding = 'text';
      else if (this.encoding !== 'text') fail('chunk', 'a table is read from bytes or from text, not both');
      this.text(chunk);
      return;
    }
    const bytes =
      chunk instanceof Uint8Array
        ? chunk
        : new Uint8Array(chunk.buffer ?? chunk, chunk.byteOffset ?? 0, chunk.byteLength);
    if (this.encoding === 'text') fail('chunk', 'a table is read from bytes or from text, not both');
    if (this.decoder) {
      this.text(this.decoder.decode(bytes));
      return;
    }
    this.head.push(bytes);
    this.headBytes += bytes.length;
    if (this.headBytes >= SAMPLE_BYTES) this.startDecoding(false);
  }

  startDecoding(final) {
    const head = new Uint8Array(this.headBytes);
    let at = 0;
    for (const b of this.head) {
      head.set(b, at);
      at += b.length;
    }
    this.head = null;
    const found = detectEncoding(head, final);
    const chosen = this.options.encoding === 'auto' ? found.encoding : this.options.encoding;
    this.encoding = chosen === 'utf-8' && found.bom ? 'utf-8-bom' : chosen;
    this.decoder = createDecoder(chosen);
    // A mark of the chosen encoding is dropped, also when the encoding was given.
    const bom = found.encoding === chosen ? found.bom : 0;
    this.text(this.decoder.decode(head.subarray(bom)));
  }

  text(chunk) {
    let text = this.pending + chunk;
    if (this.encoding === 'text' && this.line === 0 && this.pending === '' && text.charCodeAt(0) === 0xfeff)
      text = text.slice(1);
    // A final CR may be the first half of CRLF: it waits for the next chunk.
    let last = text.length;
    for (;;) {
      const lf = text.lastIndexOf('\n', last - 1);
      const cr = text.lastIndexOf('\r', last - 1);
      const end = Math.max(lf, cr);
      if (end < 0) {
        last = 0;
        break;
      }
      if (end === text.length - 1 && text[end] === '\r') {
        last = end;
        continue;
      }
      last = end + 1;
      break;
    }
    this.pending = text.slice(last);
    if (last > 0)
      for (const l of text
        .slice(0, last)
        .split(/\r\n|\r|\n/)
        .slice(0, -1))
        this.physical(l);
  }

  physical(text) {
    this.line++;
    if (!this.dialect) {
      this.sample.push([this.line, text]);
      this.sampleChars += text.length + 1;
      if (this.sampleChars >= SAMPLE_BYTES && this.sample.length >= 2) this.detect(false);
      return;
    }
    this.logical(text, this.line);
  }

  /** A logical line (a record, quoted line breaks joined) or the start of one. */
  logical(text, line) {
    if (this.record) {
      this.record.text += '\n' + text;
      text = this.record.text;
      line = this.record.line;
    } else if (text === '' || /^\s*$/.test(text)) {
      this.counts.blank++;
      return;
    } else if (this.options.comment && text.trimStart().startsWith(this.options.comment)) {
      this.counts.comments++;
      return;
    }
    const cells = splitLine(text, this.dialect.delimiter);
    if (cells === null) {
      this.record = { text, line };
      return;
    }
    this.record = null;
    this.row(cells, text, line);
  }

  /** Decides the dialect from the sample lines (table-dialect.js, detectDialect), then reads them. */
  detect(final) {
    this.dialect = detectDialect(this.sample, this.options, final);
    const sample = this.sample;
    this.sample = null;
    for (const [line, text] of sample) this.logical(text, line);
  }

  /** One record: the header, or a data row. */
  row(cells, text, line) {
    const d = this.dialect;
    if (!this.names) {
      if (cells.length > this.options.maxColumns) {
        fail(
          'maxColumns',
          `line ${line} has ${cells.length.toLocaleString('en')} fields; at most ${this.options.maxColumns} columns are read`,
        );
      }
      this.width = cells.length;
      this.names = d.header
        ? cells.map((c, k) => c.trim() || `column ${k + 1}`)
        : cells.map((_, k) => `column ${k + 1}`);
      const keep = this.options.columns
        ? this.options.columns(this.names.slice(), { header: d.header })
        : this.names.map((_, k) => k);
      this.keep = keep;
      this.columns = keep.map(() => new Growing(Float64Array));
      this.labels = keep.map((c) => (d.kinds[c]?.kind === 'text' ? new LabelCodes() : null));
      this.lines = new Growing(Uint32Array);
      this.problems = new Map(); // row → [{ column, reason, text, position }] (column -1: the whole row)
      this.problemCount = 0;
      this.unreadable = []; // per column: cells that are neither values nor missing
      this.preview = [];
      if (d.header) return;
    }
    const r = this.rows++;
    this.lines.push(line);
    if (r < this.options.previewRows) this.preview.push(cells.map((c) => c.trim()));
    if (cells.length !== this.width) {
      this.problem(r, {
        column: -1,
        reason: `expected ${this.width} fields (as in the first row); got ${cells.length}`,
        line,
        text,
      });
    }
    const plain = d.decimal === '.';
    this.keep.forEach((c, k) => {
      const cell = cells[c];
      let v = NaN;
      // The common case first: a plain number in a number column.
      if (plain && d.kinds[c]?.kind === 'number' && PLAIN.test(cell)) v = Number(cell);
      else if (cell !== undefined && !isMissing(cell)) {
        const kind = d.kinds[c] ?? { kind: 'number' };
        // A text column's numbers are still read.
        if (kind.kind === 'number' || kind.kind === 'text') v = parseNumber(cell, d.decimal);
        else v = (kind.compact ? parseCompactDate(cell) : parseDate(cell, kind.dayFirst))?.value ?? NaN;
        if (!Number.isFinite(v)) {
          v = NaN;
          // Where each cell of a text column is a problem, the first MAX_STORED per column are kept with their place.
          const seen = (this.unreadable[c] = (this.unreadable[c] ?? 0) + 1);
          if (seen <= MAX_STORED) {
            const expected = kind.kind === 'date' || kind.kind === 'time' ? `a ${kind.kind}` : 'a finite number';
            this.problem(r, {
              column: c,
              reason: `expected ${expected}; got ${JSON.stringify(cell.length > 40 ? cell.slice(0, 40) + '…' : cell)}`,
              line,
              text,
            });
          }
        }
      }
      this.columns[k].push(v);
      this.labels[k]?.push(cell === undefined || isMissing(cell) ? null : cell.trim());
    });
  }

  problem(row, p) {
    this.problemCount++;
    const list = this.problems.get(row);
    if (list) list.push(p);
    else this.problems.set(row, [p]);
  }

  /** Finishes the input; returns the table (see readTable). */
  end() {
    if (this.head) this.startDecoding(true);
    if (this.decoder) this.text(this.decoder.end());
    const rest = this.pending.replace(/\r$/, '');
    if (rest !== '') this.physical(rest);
    this.pending = '';
    if (!this.dialect) this.detect(true);
    if (this.record) {
      fail('input', `line ${this.record.line}: a quoted field is not closed (a " without its closing ")`);
    }
    if (!this.names) fail('input', 'no rows found: the input is empty, blank or only comments');
    const d = this.dialect;
    const problems = new Map();
    for (const [row, list] of this.problems) {
      problems.set(
        row,
        list.map(({ column, reason, line, text }) => {
          const starts = [];
          splitLine(text, d.delimiter, starts);
          return {
            column,
            reason,
            line,
            position:
              column < 0
                ? null
                : text.lastIndexOf('\n', starts[column]) < 0
                  ? starts[column] + 1
                  : starts[column] - text.lastIndexOf('\n', starts[column]),
          };
        }),
      );
    }
    const kinds = this.names.map((_, c) => d.kinds[c]?.kind ?? 'number');
    return {
      names: this.names,
      keep: this.keep,
      columns: this.columns.map((g) => g.array()),
      labels: this.labels.map((l) => l?.result() ?? null),
      kinds: this.keep.map((c) => kinds[c]),
      lines: this.lines.array(),
      rows: this.rows,
      problems,
      preview: this.preview,
      settings: {
        encoding: this.encoding,
        delimiter: delimiterName(d.delimiter),
        decimal: d.decimal,
        thousands: d.thousands,
        header: d.header,
        commentLines: this.counts.comments,
        blankLines: this.counts.blank,
        kinds,
        dateColumns: kinds.flatMap((k, c) => (k === 'date' || k === 'time' ? [c] : [])),
        dateOrder:
          d.kinds.find((k) => k.ordered)?.dayFirst === false
            ? 'month-first'
            : d.kinds.some((k) => k.ordered)
              ? 'day-first'
              : null,
        dateOrderGuessed: d.kinds.some((k) => k.guessed),
      },
    };
  }
}

/**
 * Reads a whole table from bytes (Uint8Array / ArrayBuffer) or text: `{ names, keep, columns, labels, kinds, lines,
 * rows, problems, preview, settings }`. `columns[k]` is a Float64Array of column `keep[k]` (NaN where a cell is missing or
 * not a value; dates and times in seconds), `labels[k]` a text column's labels and codes (table-labels.js; null for
 * other kinds and past 50 labels), `kinds[k]` its kind, `lines[r]` the 1-based line where row r starts, `problems`
 * a Map from row to `[{ column, reason, line, position }]` (column -1: a row with the wrong number of fields; position:
 * the 1-based character where the field starts, null for a whole row), `preview` the first data rows' cells as text,
 * and `settings` what was detected: `{ encoding, delimiter ('comma', 'tab', 'semicolon', 'bar', 'whitespace' or the
 * character given), decimal, thousands (the digit-group separator seen, or null), header, commentLines, blankLines,
 * kinds (per column of the file: 'number' | 'date' | 'time' | 'text'), dateColumns (their indices), dateOrder
 * ('day-first' | 'month-first' | null), dateOrderGuessed }`. Options as TableReader's.
 */
export function readTable(input, options) {
  const reader = new TableReader(options);
  reader.push(input);
  return reader.end();
}
