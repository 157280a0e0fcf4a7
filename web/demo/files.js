// The visitor's own data: files and pasted text read by the parse worker (with the reading panel's settings), the
// columns picked (by default x the first column of numbers, dates or times, y the last other column of numbers, no
// category), and what cannot be used, said in the page's terms: a text column, the same column twice, a header with
// no rows. A category (a column of labels, or of a few numbers) gives one curve per level, pooled by the fit's λ.
import { centreDates } from './axes.js';
import { checkColumns } from './checks.js';
import { clearData, dataError, NO_ROWS, setData, showMalformed } from './loading.js';
import { readOptions, resetReading, showReading, showRefusal } from './reading.js';
import { state } from './state.js';
import { clearError, ui } from './ui.js';
import { readerMessage } from './wording.js';
import { parser } from './workers.js';

// Larger files are refused before a byte is read: every row is held in this tab's memory (the parse worker checks
// lines of over 10 MB itself).
const MAX_FILE_BYTES = 200e6;
// Pasted text longer than this is read at once and never enters the text box: a box holding megabytes freezes the
// page while it lays them out (in Chromium here: 1 MB of CSV 1.5 s, 3 MB 2.9 s, a 50 MB line 21–26 s).
const PASTE_BOX_MAX = 100_000;

let lastRead = null; // { source, name } of the last file or text read: the reading menus read it again
// The last table read: its name with its row count (`source`), rows, column names, kinds and the reader's settings.
let table = null;

/** Reads `source` ({ file } or { text }) named `name`; `again`: the same source with the reading menus' settings. */
export async function parse(source, name, { again = false } = {}) {
  if (!again) {
    resetReading();
    ui.pasteNote.hidden = true; // a note on an earlier paste
  }
  lastRead = { source, name };
  const size = source.file ? source.file.size : source.text.length;
  if (size > MAX_FILE_BYTES) {
    dataError(
      `${name} is ${(size / 1e6).toFixed(0)} MB; the demo reads files of up to ${MAX_FILE_BYTES / 1e6} MB, since ` +
        'it keeps every row in this tab. Use a sample of the rows here, or the kernel-attention command line for all of them.',
    );
    return;
  }
  showMalformed(NO_ROWS); // the rows of the last file, not of this one
  ui.progress.hidden = false;
  ui.progress.value = 0;
  clearError(ui.dataStatus);
  ui.dataStatus.textContent = `Reading ${name}…`;
  window.demoState.parseError = undefined;
  window.demoState.parseArgument = null;
  try {
    const pasted = source.text !== undefined;
    const read = await parser('parse', { ...source, options: readOptions(pasted) });
    ui.progress.hidden = true;
    state.timings.parse = read.ms;
    showReading(read, pasted);
    window.demoState.reading = { names: read.names, settings: read.settings, preview: read.preview };
    table = {
      source: `${name} (${read.rows.toLocaleString('en')} rows)`,
      rows: read.rows,
      names: read.names,
      kinds: read.kinds,
      settings: read.settings,
    };
    fillColumns(read.names, read.kinds);
    await selectColumns();
  } catch (err) {
    ui.progress.hidden = true;
    ui.columns.hidden = true;
    for (const select of [ui.x1, ui.x2, ui.ycol, ui.category]) select.replaceChildren();
    // A refusal that a reading setting fixes names it, and that menu gets the focus.
    window.demoState.reading = null;
    window.demoState.parseArgument = err.argument ?? null;
    clearData(`Could not read ${name}: ${readerMessage(err.message, err.argument)}`);
    showRefusal(err.argument);
  }
}

/**
 * The column menus for a new table, each column by name; x is the first column of numbers, dates or times and y the
 * last other column of numbers (a text column, a name or a label, is never picked). With one usable column, x and y
 * are the same, which selectColumns refuses with a message naming it.
 */
function fillColumns(names, kinds) {
  const fill = (select, extra) => {
    select.replaceChildren();
    if (extra) select.append(new Option(extra, ''));
    names.forEach((name, i) => select.append(new Option(name, String(i)))); // text, never HTML
  };
  fill(ui.x1);
  fill(ui.x2, 'none');
  fill(ui.ycol);
  fill(ui.category, 'none');
  const usable = names.map((_, i) => i).filter((i) => kinds[i] !== 'text');
  const x = usable[0] ?? 0;
  const others = usable.filter((i) => i !== x);
  const y = others.findLast((i) => kinds[i] === 'number') ?? others.at(-1) ?? x;
  ui.x1.value = String(x);
  ui.x2.value = '';
  ui.ycol.value = String(y);
  ui.category.value = '';
  ui.columns.hidden = false;
}

const quoted = (names) => names.map((name) => `“${name}”`).join(', ');

/** Why the picked columns cannot be fitted before a row is read (the same column twice), or null. */
function columnsProblem(xColumns, yColumn, category) {
  const { names, kinds } = table;
  if (category !== null && [...xColumns, yColumn].includes(category)) {
    return `${table.source}: ${quoted([names[category]])} cannot be the category and ${category === yColumn ? 'y' : 'x'} at once: pick another for one of them.`;
  }
  if (category !== null && xColumns.length > 1) {
    return `${table.source}: a category draws one curve per level over one x: choose “none” as the second x or as the category.`;
  }
  if (!xColumns.includes(yColumn)) return null;
  const usable = names.filter((_, i) => kinds[i] !== 'text');
  const text = names.filter((_, i) => kinds[i] === 'text');
  if (usable.length < 2) {
    return (
      `${table.source}: a fit needs two columns of numbers (an x and a y), and ` +
      (usable.length ? `${quoted(usable)} is the only one` : 'it has none') +
      (text.length ? ` (${quoted(text)} ${text.length === 1 ? 'holds' : 'hold'} text)` : '') +
      '.'
    );
  }
  return `${table.source}: x and y are the same column (${quoted([names[yColumn]])}): pick another for one of them.`;
}

/** Why fewer than two rows could be used: a text column picked, a header without rows, or the rows listed. */
function fewRowsProblem(xColumns, yColumn, malformed) {
  const { names, kinds, rows, source } = table;
  const text = [...xColumns, yColumn].filter((c) => kinds[c] === 'text');
  if (text.length) {
    const c = text[0];
    return (
      `${source}: ${quoted([names[c]])} holds text, not numbers: pick a column of numbers` +
      (c === yColumn ? ' for y.' : ', dates or times for x.')
    );
  }
  if (rows === 0) return `${source}: there are no rows under the header (${quoted(names)}), so nothing to fit.`;
  return (
    `${source}: fewer than two usable rows with these columns` +
    (malformed.count
      ? ` (${malformed.count} malformed, listed below). Pick other columns for x and y, or fix the rows listed.`
      : '. A fit needs at least two.')
  );
}

export async function selectColumns() {
  const xColumns = [Number(ui.x1.value)];
  if (ui.x2.value !== '' && ui.x2.value !== ui.x1.value) xColumns.push(Number(ui.x2.value));
  const yColumn = Number(ui.ycol.value);
  const category = ui.category.value === '' ? null : Number(ui.category.value);
  // The menus keep the new file's columns (pick others there); the old data and its fit go.
  const same = columnsProblem(xColumns, yColumn, category);
  if (same) {
    showMalformed(NO_ROWS);
    clearData(same);
    return;
  }
  const policy = document.querySelector('input[name="policy"]:checked').value;
  const picked = await parser('select', { xColumns, yColumn, policy, category });
  if (picked.categoryError) {
    showMalformed(NO_ROWS);
    clearData(`${table.source}: ${picked.categoryError}: pick another column as the category, or “none”.`);
    return;
  }
  showMalformed(picked.malformed);
  if (picked.rejected) {
    clearData(
      `Rejected ${table.source}: ${picked.malformed.count} malformed row(s), listed below. ` +
        'Fix them, choose “skip”, or pick other columns.',
    );
    return;
  }
  if (picked.y.length < 2) {
    clearData(fewRowsProblem(xColumns, yColumn, picked.malformed));
    return;
  }
  // Dates and times (seconds) are centred here, in float64, before the compute worker makes float32 of them.
  const dates = picked.xKinds?.some((k) => k === 'date' || k === 'time');
  const centred = dates ? { xKinds: picked.xKinds, centres: centreDates(picked.x, picked.dim, picked.xKinds) } : {};
  const problem = checkColumns(picked);
  if (problem) {
    clearData(`${table.source}: ${problem}`);
    return;
  }
  const loaded = setData({
    names: picked.names,
    x: picked.x,
    y: picked.y,
    dim: picked.dim,
    ...centred,
    ...(picked.category && { category: picked.category }),
    source: table.source,
  });
  showDateGuess(picked, xColumns, centred.centres);
  await loaded;
}

const longDate = (seconds) =>
  new Date(seconds * 1000).toLocaleDateString('en-GB', {
    timeZone: 'UTC',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
  });

/**
 * Under the plot, where the dates are drawn: the order dates such as 01/03/2024 were read in, when it is a guess (no
 * day above 12 settled it), with their first and last as read and a button that reads them the other way.
 */
function showDateGuess({ x, dim }, xColumns, centres) {
  const { settings } = table;
  const d = xColumns.findIndex((c) => settings.dateColumns.includes(c) && settings.kinds[c] === 'date');
  if (!settings.dateOrderGuessed || d < 0) return;
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = d; i < x.length; i += dim) {
    lo = Math.min(lo, x[i]);
    hi = Math.max(hi, x[i]);
  }
  const dayFirst = settings.dateOrder === 'day-first';
  ui.dateNoteText.textContent =
    `The dates of “${table.names[xColumns[d]]}” were read ${dayFirst ? 'day' : 'month'} first, from ` +
    `${longDate(lo + centres[d])} to ${longDate(hi + centres[d])}: a guess, since no day above 12 was seen.`;
  ui.dateOrderFlip.textContent = `Read them ${dayFirst ? 'month' : 'day'} first`;
  ui.dateOrderFlip.dataset.order = dayFirst ? 'month-first' : 'day-first';
  ui.dateNote.hidden = false;
}

/**
 * A paste into the text box: text of up to PASTE_BOX_MAX characters goes into the box as usual (“Use this text”
 * reads it); more is read at once, with a note in the box's place, and the box keeps what it held.
 */
export function pasteText(event) {
  const text = event.clipboardData?.getData('text/plain') ?? '';
  if (text.length <= PASTE_BOX_MAX) return;
  event.preventDefault();
  parse({ text }, 'the pasted text');
  ui.pasteNote.textContent =
    `${text.length.toLocaleString('en')} characters pasted: read at once, not put in the box ` +
    '(a box that large would freeze the page).';
  ui.pasteNote.hidden = false;
}

/** Reads the last file or text again with the reading panel's settings (one of its menus changed). */
export function readAgain() {
  if (lastRead) parse(lastRead.source, lastRead.name, { again: true });
}
