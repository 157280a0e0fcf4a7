// Parses the visitor's CSV/TSV with Papa Parse, off the main thread, and hands out the chosen columns.
// A classic worker: Papa Parse is a UMD script, loaded with importScripts from the page's own origin.
/* global Papa */
// A worker's Content-Security-Policy violations fire here, not on the page's document: the page records them.
self.addEventListener('securitypolicyviolation', (e) => postMessage({ op: 'csp', violation: `${e.violatedDirective} ${e.blockedURI}` }));
importScripts('../../node_modules/papaparse/papaparse.min.js');

const CHUNK_BYTES = 1 << 20;
const MAX_LISTED = 50;  // line numbers listed per report; the count covers all of them
// A line this long is no table row: Papa Parse would re-read it with every chunk (quadratic time) and its fields
// could fill the page's column menus with millions of entries. Refused after one quick pass over the bytes.
const MAX_LINE_BYTES = 10e6;
const MAX_COLUMNS = 1000;  // likewise: the menus hold every column three times
const SCAN_BYTES = 4 << 20;

/** The last parsed table: column names, numeric columns (NaN where a cell is not a number), line numbers, problems. */
let table = null;

const toNumber = (cell) => (cell.trim() === '' ? NaN : Number(cell));
const isNumber = (cell) => Number.isFinite(toNumber(cell));

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
  if (text !== undefined) return scan((i) => text.charCodeAt(i), text.length) ? line : 0;
  const reader = new FileReaderSync();
  for (let start = 0; start < file.size; start += SCAN_BYTES) {
    const bytes = new Uint8Array(reader.readAsArrayBuffer(file.slice(start, start + SCAN_BYTES)));
    if (scan((i) => bytes[i], bytes.length)) return line;
  }
  return 0;
}

function parse({ id, text, file }) {
  const size = file ? file.size : text.length;
  const long = longLine(file, text);
  if (long) {
    postMessage({ id, op: 'parsed', error: `line ${long} is longer than ${MAX_LINE_BYTES / 1e6} MB, which no table row ` +
      'should be (is this the right file, with line breaks?)' });
    return;
  }
  const columns = [];
  const lines = [];
  const problems = new Map();  // row → reason
  let names = null;
  let width = 0;
  let line = 0;  // 1-based line of the row being read
  let refused = null;  // why the parse was stopped early
  const started = performance.now();

  const addRow = (cells) => {
    line += 1;
    const first = line;
    for (const cell of cells) if (cell.includes('\n')) line += cell.split('\n').length - 1;  // quoted newlines
    if (cells.length === 1 && cells[0].trim() === '') return;  // blank line
    if (names === null) {
      if (cells.length > MAX_COLUMNS) {
        refused = `line ${first} has ${cells.length.toLocaleString('en')} fields; the demo reads at most ${MAX_COLUMNS} columns`;
        return;
      }
      width = cells.length;
      for (let c = 0; c < width; c++) columns.push([]);
      // A first row with any non-numeric cell is a header.
      if (!cells.every((cell) => cell.trim() === '' || isNumber(cell))) {
        names = cells.map((cell, c) => cell.trim() || `column ${c + 1}`);
        return;
      }
      names = cells.map((_, c) => `column ${c + 1}`);
    }
    const row = lines.length;
    lines.push(first);
    if (cells.length !== width) problems.set(row, `${cells.length} fields, expected ${width}`);
    for (let c = 0; c < width; c++) columns[c].push(c < cells.length ? toNumber(cells[c]) : NaN);
  };

  Papa.parse(file ?? text, {
    chunkSize: CHUNK_BYTES,
    skipEmptyLines: false,
    chunk(results, parser) {
      const bad = new Set(results.errors.map((e) => e.row));
      results.data.forEach((cells, r) => {
        if (refused) return;
        addRow(cells);
        if (bad.has(r) && lines.length) problems.set(lines.length - 1, 'unbalanced quotes');
      });
      if (refused) parser.abort();  // calls complete()
      else postMessage({ id, op: 'progress', fraction: Math.min(1, results.meta.cursor / Math.max(1, size)) });
    },
    complete() {
      if (refused) {
        postMessage({ id, op: 'parsed', error: refused });
        return;
      }
      if (!names) {
        postMessage({ id, op: 'parsed', error: 'no rows found' });
        return;
      }
      table = {
        names, lines: Uint32Array.from(lines), problems, columns: columns.map((col) => Float64Array.from(col)),
      };
      postMessage({ id, op: 'parsed', names, rows: lines.length, ms: performance.now() - started });
    },
    error(err) {
      postMessage({ id, op: 'parsed', error: String(err && err.message || err) });
    },
  });
}

/** The chosen columns as x (n × dim) and y, skipping or rejecting malformed rows. */
function select({ id, xColumns, yColumn, policy }) {
  const { names, lines, problems, columns } = table;
  const used = [...xColumns, yColumn];
  const bad = [];
  const keep = [];
  for (let row = 0; row < lines.length; row++) {
    let reason = problems.get(row);
    if (!reason) {
      const missing = used.find((c) => !Number.isFinite(columns[c][row]));
      if (missing !== undefined) reason = `“${names[missing]}” is not a number`;
    }
    if (reason) bad.push({ line: lines[row], reason });
    else keep.push(row);
  }
  const malformed = { count: bad.length, listed: bad.slice(0, MAX_LISTED) };
  if (policy === 'reject' && bad.length) {
    postMessage({ id, op: 'selected', rejected: true, malformed });
    return;
  }
  const dim = xColumns.length;
  const x = new Float64Array(keep.length * dim);
  const y = new Float64Array(keep.length);
  keep.forEach((row, i) => {
    xColumns.forEach((c, d) => { x[i * dim + d] = columns[c][row]; });
    y[i] = columns[yColumn][row];
  });
  postMessage({ id, op: 'selected', x, y, dim, names: used.map((c) => names[c]), malformed }, [x.buffer, y.buffer]);
}

onmessage = ({ data }) => {
  try {
    if (data.op === 'parse') parse(data);
    else if (data.op === 'select') select(data);
  } catch (err) {
    postMessage({ id: data.id, op: data.op === 'parse' ? 'parsed' : 'selected', error: String(err && err.message || err) });
  }
};
