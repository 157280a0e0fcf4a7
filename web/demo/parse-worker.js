// Parses the visitor's CSV/TSV with Papa Parse, off the main thread, and hands out the chosen columns.
// A classic worker: Papa Parse is a UMD script, loaded with importScripts from the page's own origin.
/* global Papa */
importScripts('../../node_modules/papaparse/papaparse.min.js');

const CHUNK_BYTES = 1 << 20;
const MAX_LISTED = 50;  // line numbers listed per report; the count covers all of them

/** The last parsed table: column names, numeric columns (NaN where a cell is not a number), line numbers, problems. */
let table = null;

const toNumber = (cell) => (cell.trim() === '' ? NaN : Number(cell));
const isNumber = (cell) => Number.isFinite(toNumber(cell));

function parse({ id, text, file }) {
  const size = file ? file.size : text.length;
  const columns = [];
  const lines = [];
  const problems = new Map();  // row → reason
  let names = null;
  let width = 0;
  let line = 0;  // 1-based line of the row being read
  const started = performance.now();

  const addRow = (cells) => {
    line += 1;
    const first = line;
    for (const cell of cells) if (cell.includes('\n')) line += cell.split('\n').length - 1;  // quoted newlines
    if (cells.length === 1 && cells[0].trim() === '') return;  // blank line
    if (names === null) {
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
    chunk(results) {
      const bad = new Set(results.errors.map((e) => e.row));
      results.data.forEach((cells, r) => {
        addRow(cells);
        if (bad.has(r) && lines.length) problems.set(lines.length - 1, 'unbalanced quotes');
      });
      postMessage({ id, op: 'progress', fraction: Math.min(1, results.meta.cursor / Math.max(1, size)) });
    },
    complete() {
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
