// Reads the visitor's table off the main thread with the package's reader (web/src/table.js, the CLI's too) and hands
// out the chosen columns. A module worker: the page starts it with { type: 'module' }.
import { selectRows, TableReader } from '../src/table.js';
import { paintPoints } from './pixels.js';

// A worker's Content-Security-Policy violations fire here, not on the page's document: the page records them.
self.addEventListener('securitypolicyviolation', (e) =>
  postMessage({ op: 'csp', violation: `${e.violatedDirective} ${e.blockedURI}` }),
);

const CHUNK_BYTES = 1 << 20;
const MAX_LISTED = 50; // line numbers listed per report; the count covers all of them
// A line this long is no table row: its fields could fill the page's column menus with millions of entries, and
// nothing would be read until its end. Refused after one quick pass over the bytes.
const MAX_LINE_BYTES = 10e6;
const MAX_COLUMNS = 1000; // likewise: the menus hold every column three times
const SCAN_BYTES = 4 << 20;

/** The last table read (see readTable in web/src/table.js). */
let table = null;

/**
 * The 1-based number of the first line longer than MAX_LINE_BYTES (CR, LF and CRLF end lines), or 0. Counts bytes of
 * a file (a newline byte never occurs inside a UTF-8 character, so no decoding is needed) and UTF-16 units of text.
 */
function longLine(file, text) {
  let line = 1;
  let length = 0;
  let afterCr = false;
  const scan = (at, n) => {
    for (let i = 0; i < n; i++) {
      const c = at(i);
      if (c === 10) {
        if (!afterCr) line += 1;
        length = 0;
        afterCr = false;
      } else if (c === 13) {
        line += 1;
        length = 0;
        afterCr = true;
      } else {
        afterCr = false;
        if (++length > MAX_LINE_BYTES) return true;
      }
    }
    return false;
  };
  if (text !== undefined) return longTextLine(text);
  const reader = new FileReaderSync();
  for (let start = 0; start < file.size; start += SCAN_BYTES) {
    const bytes = new Uint8Array(reader.readAsArrayBuffer(file.slice(start, start + SCAN_BYTES)));
    if (scan((i) => bytes[i], bytes.length)) return line;
  }
  return 0;
}

/**
 * longLine() for text: the line breaks are found by the engine's own search (a regular expression), not a loop over
 * characters in JavaScript (50 MB of pasted text: one call per line instead of 5×10⁷).
 */
function longTextLine(text) {
  const breaks = /\r\n?|\n/g;
  let line = 1;
  let start = 0;
  for (;;) {
    const found = breaks.exec(text);
    const end = found ? found.index : text.length;
    if (end - start > MAX_LINE_BYTES) return line;
    if (!found) return 0;
    line += 1;
    start = breaks.lastIndex;
  }
}

// What a file's first bytes say it is, for the refusal of a file that is not text: spreadsheets saved in their own
// format are the likely mistake.
const SIGNATURES = [
  [[0x50, 0x4b, 0x03, 0x04], 'a ZIP archive (an Excel .xlsx or OpenDocument .ods workbook is one)'],
  [[0xd0, 0xcf, 0x11, 0xe0], 'an Office document (an Excel .xls workbook is one)'],
  [[0x25, 0x50, 0x44, 0x46], 'a PDF document'],
  [[0x89, 0x50, 0x4e, 0x47], 'a PNG image'],
  [[0xff, 0xd8, 0xff], 'a JPEG image'],
];
const SNIFF_BYTES = 1 << 16;
const CONTROL_SHARE = 0.01; // more control characters than this among the first bytes: not text

/**
 * Why `file` is not a text file, or null. Its first 64 kB decide: a known binary format's signature; or zero bytes
 * that are not UTF-16's (the zero half of each ASCII character, nearly all in the even or in the odd bytes); or, in a file
 * without them, more than 1 % of control characters other than tab, line feed, form feed and carriage return. A
 * Latin-1 or UTF-8 table has none of these; the reader would otherwise decode any bytes as Latin-1 and report every
 * line as malformed.
 */
function notText(file) {
  const bytes = new Uint8Array(new FileReaderSync().readAsArrayBuffer(file.slice(0, SNIFF_BYTES)));
  const known = SIGNATURES.find(([magic]) => magic.every((b, i) => bytes[i] === b));
  if (known) return `its first bytes are those of ${known[1]}`;
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return null; // UTF-16
  const zeros = [0, 0];
  let controls = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (b === 0) zeros[i & 1]++;
    else if (b < 0x20 && b !== 9 && b !== 10 && b !== 12 && b !== 13) controls++;
  }
  const utf16 = Math.max(...zeros) > bytes.length / 8 && Math.min(...zeros) <= Math.max(...zeros) / 20;
  if (utf16 || (zeros[0] + zeros[1] === 0 && controls <= CONTROL_SHARE * bytes.length)) return null;
  return 'its first bytes hold characters no text table has (a spreadsheet’s or another program’s own format?)';
}

/**
 * Reads `file` (a File, in chunks) or `text`, with `options` the reader's settings chosen by the visitor (encoding,
 * delimiter, decimal, header, dateOrder; 'auto' or absent: detected). Answers `{ names, rows, ms, settings, kinds,
 * dateColumns, preview }` or `{ error, argument }`, `argument` naming the setting that would fix it.
 */
function parse({ id, text, file, options = {} }) {
  const binary = file && notText(file);
  if (binary) {
    postMessage({
      id,
      op: 'parsed',
      error:
        `it is not a text file: ${binary}. Open a CSV or TSV file instead (a spreadsheet program saves one), or ` +
        'copy the cells and paste them here',
    });
    return;
  }
  const long = longLine(file, text);
  if (long) {
    postMessage({
      id,
      op: 'parsed',
      error:
        `line ${long} is longer than ${MAX_LINE_BYTES / 1e6} MB, which no table row ` +
        'should be (is this the right file, with line breaks?)',
    });
    return;
  }
  const started = performance.now();
  table = null;
  const reader = new TableReader({ ...options, maxColumns: MAX_COLUMNS });
  const size = file ? file.size : text.length;
  if (file) {
    const bytes = new FileReaderSync();
    for (let start = 0; start < size; start += CHUNK_BYTES) {
      reader.push(new Uint8Array(bytes.readAsArrayBuffer(file.slice(start, start + CHUNK_BYTES))));
      postMessage({ id, op: 'progress', fraction: Math.min(1, (start + CHUNK_BYTES) / Math.max(1, size)) });
    }
  } else {
    for (let start = 0; start < size; start += CHUNK_BYTES) {
      reader.push(text.slice(start, start + CHUNK_BYTES));
      postMessage({ id, op: 'progress', fraction: Math.min(1, (start + CHUNK_BYTES) / Math.max(1, size)) });
    }
  }
  if (size === 0) reader.push(file ? new Uint8Array(0) : '');
  table = reader.end();
  const { names, rows, settings, preview } = table;
  postMessage({
    id,
    op: 'parsed',
    names,
    rows,
    ms: performance.now() - started,
    settings,
    kinds: settings.kinds,
    dateColumns: settings.dateColumns,
    preview,
  });
}

const quoted = (name) => `“${name}”`;

/** A skipped row's reason as the page lists it: “y” is missing, “y” is not a number: got "2.x", 3 fields, expected 2. */
function describe(column, reason, missing) {
  if (column === null) {
    const m = /^expected (\d+) fields.*; got (\d+)$/.exec(reason);
    return m ? `${m[2]} fields, expected ${m[1]}` : reason;
  }
  if (missing) return `${quoted(column)} is missing`;
  const got = /; (got .*)$/.exec(reason)?.[1];
  const what = /^expected an? (?:finite )?(\w+)/.exec(reason)?.[1] ?? 'number';
  return `${quoted(column)} is not a ${what}${got ? `: ${got}` : ''}`;
}

const MAX_CATEGORIES = 50; // a category column's levels at most (table-labels.js keeps a text column's up to this)

/**
 * Column `c` as a category: per row its level's code, −1 where the cell is missing, with the levels' labels in the
 * library's order (it codes labels in JavaScript's default sort of strings; a column of numbers: its distinct values,
 * increasing, written as read); or `{ error }`: a text column of too many labels, a column of dates.
 */
function categoryOf(c) {
  const { names, columns, kinds, labels } = table;
  if (kinds[c] === 'text') {
    if (!labels[c]) return { error: `${quoted(names[c])} holds more than ${MAX_CATEGORIES} different labels` };
    const order = labels[c].labels
      .map((_, k) => k)
      .sort((a, b) => (labels[c].labels[a] < labels[c].labels[b] ? -1 : 1));
    const rank = new Int32Array(order.length);
    order.forEach((k, r) => (rank[k] = r));
    return {
      labels: order.map((k) => labels[c].labels[k]),
      code: (row) => (labels[c].codes[row] < 0 ? -1 : rank[labels[c].codes[row]]),
    };
  }
  if (kinds[c] !== 'number') return { error: `${quoted(names[c])} holds ${kinds[c]}s, not categories` };
  const values = [...new Set(columns[c].filter((v) => !Number.isNaN(v)))].sort((a, b) => a - b);
  if (values.length > MAX_CATEGORIES)
    return { error: `${quoted(names[c])} holds more than ${MAX_CATEGORIES} different values` };
  const rank = new Map(values.map((v, r) => [v, r]));
  return { labels: values.map(String), code: (row) => rank.get(columns[c][row]) ?? -1 };
}

/**
 * The chosen columns as x (n × dim) and y, skipping or rejecting ('reject') rows with a missing or unreadable value
 * in them or the wrong number of fields. Also says which x columns hold dates or times (`xKinds`: seconds). With a
 * `category` column: `category` { name, labels, codes (Float64Array, one per row kept) }, rows without one skipped.
 */
function select({ id, xColumns, yColumn, policy, category = null }) {
  const { names, columns, kinds } = table;
  const used = [...xColumns, yColumn];
  const levels = category === null ? null : categoryOf(category);
  if (levels?.error) {
    postMessage({ id, op: 'selected', categoryError: levels.error });
    return;
  }
  const selected = selectRows(table, used);
  const { skipped } = selected;
  let { rows } = selected;
  if (levels) {
    for (const row of rows.filter((r) => levels.code(r) < 0))
      skipped.push({ line: table.lines[row], column: names[category], reason: 'missing', missing: true });
    skipped.sort((a, b) => a.line - b.line);
    rows = rows.filter((r) => levels.code(r) >= 0);
  }
  const malformed = {
    count: skipped.length,
    listed: skipped
      .slice(0, MAX_LISTED)
      .map(({ line, column, reason, missing }) => ({ line, reason: describe(column, reason, missing) })),
  };
  if (policy === 'reject' && skipped.length) {
    postMessage({ id, op: 'selected', rejected: true, malformed });
    return;
  }
  const dim = xColumns.length;
  const x = new Float64Array(rows.length * dim);
  const y = new Float64Array(rows.length);
  rows.forEach((row, i) => {
    xColumns.forEach((c, d) => {
      x[i * dim + d] = columns[c][row];
    });
    y[i] = columns[yColumn][row];
  });
  postMessage(
    {
      id,
      op: 'selected',
      x,
      y,
      dim,
      names: used.map((c) => names[c]),
      malformed,
      xKinds: xColumns.map((c) => kinds[c]),
      yKind: kinds[yColumn],
      category: levels && {
        name: names[category],
        labels: levels.labels,
        codes: Float64Array.from(rows, (r) => levels.code(r)),
      },
    },
    [x.buffer, y.buffer],
  );
}

onmessage = ({ data }) => {
  try {
    if (data.op === 'parse') parse(data);
    else if (data.op === 'select') select(data);
    else if (data.op === 'points') {
      // The main plot's point layer (pixels.js), painted here so that the page's main thread only draws the bitmap.
      const bitmap = paintPoints(data);
      postMessage({ id: data.id, op: 'points', bitmap }, [bitmap]);
    }
  } catch (err) {
    // The reader names its limit; the page says whose limit it is.
    const message =
      err?.argument === 'maxColumns'
        ? err.message.replace(/at most (\d+) columns are read/, 'the demo reads at most $1 columns')
        : String((err && err.message) || err);
    postMessage({
      id: data.id,
      op: { parse: 'parsed', select: 'selected' }[data.op] ?? data.op,
      error: message,
      argument: err && err.argument,
    });
  }
};
