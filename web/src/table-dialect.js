// The dialect of a table for table.js: splitting a line into fields, and detecting from a sample of lines the
// delimiter, the decimal mark, whether the first row is a header, and each column's kind (number, date, time, text).
import { KernelAttentionError } from './errors.js';
import { decimalEvidence, isMissing, parseCompactDate, parseDate, parseNumber } from './table-values.js';

/** The delimiters tried, most specific first; 'whitespace' is any run of spaces and tabs. */
export const DELIMITERS = ['\t', ';', ',', '|', 'whitespace'];

/**
 * The fields of one line (RFC 4180 quoting: a field that starts with `"` may hold delimiters, `""` and newlines), or
 * null when the line ends inside a quoted field (the caller joins the next line). With `starts`, also fills in each
 * field's 0-based position in the line. Unquoted fields keep their spaces, except with 'whitespace'.
 */
export function splitLine(line, delimiter, starts) {
  const ws = delimiter === 'whitespace';
  if (!line.includes('"') && !starts) return ws ? line.trim().split(/[ \t]+/) : line.split(delimiter);
  const isDelimiter = ws ? (c) => c === ' ' || c === '\t' : (c) => c === delimiter;
  const fields = [];
  let i = 0;
  const n = line.length;
  if (ws) while (i < n && isDelimiter(line[i])) i++;
  for (;;) {
    if (starts) starts.push(i);
    let value = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        if (i >= n) return null;
        const q = line.indexOf('"', i);
        if (q < 0) return null;
        value += line.slice(i, q);
        if (line[q + 1] === '"') {
          value += '"';
          i = q + 2;
          continue;
        }
        i = q + 1;
        break;
      }
      // Text after the closing quote belongs to the field, as spreadsheets read it.
      let end = i;
      while (end < n && !isDelimiter(line[end])) end++;
      value += line.slice(i, end);
      i = end;
    } else {
      let end = i;
      while (end < n && !isDelimiter(line[end])) end++;
      value = line.slice(i, end);
      i = end;
    }
    fields.push(value);
    if (i >= n) break;
    i++;
    if (ws) {
      while (i < n && isDelimiter(line[i])) i++;
      if (i >= n) break;
    }
  }
  return fields;
}

/** Whether a cell reads as a value (a number with either decimal mark, a date, a time) or a missing value. */
const valueLike = (cell) =>
  isMissing(cell) ||
  !Number.isNaN(parseNumber(cell, '.')) ||
  !Number.isNaN(parseNumber(cell, ',')) ||
  parseDate(cell) !== null ||
  parseDate(cell, false) !== null;

const SHOWN = { '\t': 'tab', ';': 'semicolon', ',': 'comma', '|': 'bar', whitespace: 'whitespace' };
export const delimiterName = (d) => SHOWN[d] ?? JSON.stringify(d);

/**
 * The delimiter of `lines` (the sample's non-blank, non-comment lines, whole records): the candidate that splits the
 * most lines into the same number (≥ 2) of fields, then the one whose fields read most often as values, then the most
 * specific. A single column when none splits. Blank lines never count, whatever their place.
 */
export function detectDelimiter(lines) {
  if (lines.length === 0) return null;
  let best = { delimiter: ',', score: [-1, -1] };
  for (const delimiter of DELIMITERS) {
    const rows = lines.map((line) => splitLine(line, delimiter) ?? [line]);
    const data = rows.length > 1 ? rows.slice(1) : rows;
    const counts = new Map();
    for (const r of data) counts.set(r.length, (counts.get(r.length) ?? 0) + 1);
    const [width] = [...counts].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0];
    if (width < 2) continue;
    const fit = rows.filter((r) => r.length === width).length / rows.length;
    let cells = 0;
    let values = 0;
    for (const r of data)
      for (const c of r) {
        cells++;
        if (valueLike(c)) values++;
      }
    const score = [Math.round(fit * 20) / 20, values / cells];
    if (score[0] > best.score[0] || (score[0] === best.score[0] && score[1] > best.score[1]))
      best = { delimiter, score };
  }
  return best.score[0] < 0 ? null : best.delimiter;
}

/**
 * The decimal mark of `cells` (the sample's data cells): ',' when some cell reads only with a decimal comma (`1,5`)
 * and none only with a point, '.' in the converse case or when nothing tells them apart. Refuses (a
 * KernelAttentionError naming `decimal`) when both kinds occur, or when the only cells that differ are like `1,234`
 * (a thousand and more with a group separator, or a number under 2 with a decimal comma), so nothing is misread.
 */
export function detectDecimal(cells, where) {
  const seen = { dot: null, comma: null, ambiguous: null };
  for (const cell of cells) {
    const kind = decimalEvidence(cell);
    if (kind in seen && seen[kind] === null) seen[kind] = cell;
  }
  if (seen.dot !== null && seen.comma !== null) {
    throw new KernelAttentionError(
      'BadInput',
      `the numbers use both decimal marks (${JSON.stringify(seen.dot)} and ` +
        `${JSON.stringify(seen.comma)}${where}): set \`decimal\` to '.' or ','`,
      'decimal',
    );
  }
  if (seen.comma !== null) return ',';
  if (seen.dot !== null || seen.ambiguous === null || !seen.ambiguous.includes(',')) return '.';
  throw new KernelAttentionError(
    'BadInput',
    `cannot tell whether ${JSON.stringify(seen.ambiguous)}${where} has a ` +
      `decimal comma or a thousands separator: set \`decimal\` to ',' or '.'`,
    'decimal',
  );
}

/**
 * The kind of one column from its sample cells: 'number', 'date' or 'time' (whichever reads most of its non-missing
 * cells; ties go to number), else 'text'. A column named like a date (`date`, `Date`, `DATE_obs`) whose every value is
 * a valid yyyymmdd (19580329) is a date column with `compact` set. For dates, also `dayFirst` (nn/nn/yyyy read day
 * first unless some cell
 * only reads month first), `ordered` (some cell has that form) and `guessed` (every such cell read both ways).
 */
export function columnKind(cells, decimal, name = '') {
  if (
    /date/i.test(name) &&
    cells.some((c) => !isMissing(c)) &&
    cells.every((c) => isMissing(c) || parseCompactDate(c))
  ) {
    return { kind: 'date', compact: true };
  }
  let numbers = 0;
  let dates = 0;
  let times = 0;
  let dayFirstOk = true;
  let monthFirstOk = true;
  let ordered = false;
  let present = 0;
  for (const cell of cells) {
    if (isMissing(cell)) continue;
    present++;
    if (!Number.isNaN(parseNumber(cell, decimal))) {
      numbers++;
      continue;
    }
    const d = parseDate(cell, true);
    const m = parseDate(cell, false);
    const r = d ?? m;
    if (!r) continue;
    if (r.kind === 'time') {
      times++;
      continue;
    }
    dates++;
    if (r.order) {
      ordered = true;
      if (!d) dayFirstOk = false;
      if (!m) monthFirstOk = false;
    }
  }
  const most = Math.max(numbers, dates, times);
  if (present === 0 || most === 0 || most < present / 2) return { kind: present === 0 ? 'number' : 'text' };
  if (numbers === most) return { kind: 'number' };
  if (times === most) return { kind: 'time' };
  return {
    kind: 'date',
    dayFirst: dayFirstOk || !monthFirstOk,
    ordered,
    guessed: ordered && dayFirstOk && monthFirstOk,
  };
}

/**
 * Whether `first` (the first row's cells) is a header: some cell is text (not a value, not missing). A headerless file
 * whose first column holds labels is read with a header of its first row, shown as the column names; `header: false`
 * reads it. The converse mistake, a header of years above text (`Country,1960,1961`) read as data, would go unseen.
 */
export function detectHeader(first) {
  return first.some((cell) => !valueLike(cell));
}

// The sample's first lines that vote on the delimiter (each candidate reads every cell of the lines it is shown: 200
// are enough), and the most records the sample's votes take.
const DELIMITER_VOTES = 200;
const SAMPLE_LINES = 1000;

/**
 * The dialect of a table from its sample (`sample`: [line number, text] pairs; `final`: the input ends there, so its
 * last record is whole) and the reader's options (an option other than 'auto' is taken as given): { delimiter,
 * decimal, header, kinds (per column: columnKind's, with the date order given), thousands (the digit-group separator
 * seen, or null) }. Throws a BadInput KernelAttentionError naming `decimal` when the decimal mark is the delimiter.
 */
export function detectDialect(sample, o, final) {
  const records = []; // quote-balanced joins of the sample's lines
  let open = null;
  for (const [line, text] of sample) {
    if (open) {
      open.text += '\n' + text;
      if ((open.text.split('"').length - 1) % 2 === 0) {
        records.push(open);
        open = null;
      }
      continue;
    }
    if (text.trim() === '' || (o.comment && text.trimStart().startsWith(o.comment))) continue;
    const r = { line, text };
    if ((text.split('"').length - 1) % 2 === 1) open = r;
    else records.push(r);
  }
  // An unfinished sample's last record may be cut short; leave it out of the votes.
  const votes = (final ? records : records.slice(0, -1)).slice(0, SAMPLE_LINES);
  const texts = (votes.length ? votes : records).map((r) => r.text);
  // Each candidate delimiter reads every cell of the lines it is shown: 200 lines are enough to vote.
  const delimiter =
    o.delimiter !== 'auto'
      ? o.delimiter === ' '
        ? 'whitespace'
        : o.delimiter
      : (detectDelimiter(texts.slice(0, DELIMITER_VOTES)) ?? ',');
  const rows = texts.map((t) => splitLine(t, delimiter) ?? [t]);
  const header = o.header === 'auto' ? rows.length > 0 && detectHeader(rows[0]) : o.header;
  const data = header ? rows.slice(1) : rows;
  const where = ` in the first ${data.length} rows`;
  const decimal =
    o.decimal !== 'auto'
      ? o.decimal
      : delimiter === ',' && !texts.some((t) => t.includes('"'))
        ? '.'
        : detectDecimal(
            data.flat().filter((c) => /^[\s\d+\-\u2212.,'\u00a0\u202f]+$/.test(c)),
            where,
          );
  if (decimal === delimiter)
    throw new KernelAttentionError(
      'BadInput',
      `the decimal mark cannot be the delimiter (${JSON.stringify(delimiter)})`,
      'decimal',
    );
  const width = rows.length ? rows[0].length : 0;
  const kinds = Array.from({ length: width }, (_, c) =>
    columnKind(
      data.map((r) => r[c] ?? ''),
      decimal,
      header ? rows[0][c] : '',
    ),
  );
  if (o.dateOrder !== 'auto')
    for (const k of kinds)
      if (k.kind === 'date') Object.assign(k, { dayFirst: o.dateOrder === 'day-first', guessed: false });
  const group = data
    .flat()
    .map((c) => /^\s*[-+\u2212]?[1-9]\d{0,2}([., '\u00a0\u202f])\d{3}/.exec(c)?.[1])
    .find((g) => g !== undefined && g !== decimal && !Number.isNaN(parseNumber(`1${g}000`, decimal)));
  return { delimiter, decimal, header, kinds, thousands: group ?? null };
}
