// "How the file was read": the reader's detected settings (encoding, delimiter, decimal mark, header, date order,
// skipped lines) with the first rows as read, shown before the fit; each setting is a menu whose change reads the
// same file again with that setting fixed. Text only (textContent), never HTML: cells are the visitor's.

const $ = (id) => document.getElementById(id);

// The reader's options (web/src/table.js) ← the menus' values; 'auto' leaves a setting to detection.
const CONTROLS = {
  encoding: { id: 'read-encoding', label: 'encoding', option: (v) => v },
  delimiter: {
    id: 'read-delimiter',
    label: 'delimiter',
    option: (v) => ({ comma: ',', tab: '\t', semicolon: ';', bar: '|', whitespace: 'whitespace' })[v] ?? v,
  },
  decimal: { id: 'read-decimal', label: 'decimal mark', option: (v) => v },
  header: { id: 'read-header', label: 'header row', option: (v) => (v === 'auto' ? v : v === 'yes') },
  dateOrder: { id: 'read-date-order', label: 'date order', option: (v) => v },
};

const ENCODING_NAMES = {
  'utf-8': 'UTF-8',
  'utf-8-bom': 'UTF-8 with a byte-order mark',
  latin1: 'Latin-1',
  'utf-16le': 'UTF-16 LE',
  'utf-16be': 'UTF-16 BE',
  text: 'text',
};
const DECIMAL_NAMES = { '.': 'point', ',': 'comma' };
const plural = (n, one) => `${n.toLocaleString('en')} ${one}${n === 1 ? '' : 's'}`;

/** The reader's options from the menus (only those not on 'auto'). `pasted`: text has no encoding to choose. */
export function readOptions(pasted) {
  const options = {};
  for (const [name, { id, option }] of Object.entries(CONTROLS)) {
    const value = $(id).value;
    if (value !== 'auto' && !(pasted && name === 'encoding')) options[name] = option(value);
  }
  return options;
}

/** All menus back to 'auto', which names nothing detected until the new file is read (detection runs again). */
export function resetReading() {
  for (const { id } of Object.values(CONTROLS)) {
    $(id).value = 'auto';
    $(id).options[0].textContent = 'auto';
  }
}

/** The text of the menu entry of reader option `argument` that gives the reader `value` (comma (1,5)), or null. */
export function optionText(argument, value) {
  const control = CONTROLS[argument];
  if (!control) return null;
  const entry = [...$(control.id).options].find((o) => o.value !== 'auto' && control.option(o.value) === value);
  return entry?.textContent ?? null;
}

/** The control that changes `argument` (a reader option), or null. */
export const controlFor = (argument) => (CONTROLS[argument] ? $(CONTROLS[argument].id) : null);
/** The label the page gives reader option `argument`. */
export const labelFor = (argument) => CONTROLS[argument]?.label ?? argument;

/** Calls `onChange` when any setting's menu changes. */
export function wireReading(onChange) {
  for (const { id } of Object.values(CONTROLS)) $(id).addEventListener('change', onChange);
}

/**
 * Shows what the reader detected (`settings`, `names`, `preview` of the parse worker's answer) in the panel, and
 * writes each detected value into its menu's 'auto' entry (auto: comma). `pasted` disables the encoding menu.
 */
export function showReading({ names, settings, preview }, pasted) {
  const panel = $('reading');
  panel.hidden = false;
  const autoText = {
    encoding: ENCODING_NAMES[settings.encoding] ?? settings.encoding,
    delimiter: settings.delimiter,
    decimal: DECIMAL_NAMES[settings.decimal] ?? settings.decimal,
    header: settings.header ? 'yes' : 'no',
    dateOrder: settings.dateOrder
      ? settings.dateOrder.replace('-', ' ')
      : settings.dateColumns.length
        ? 'unambiguous'
        : 'no dates',
  };
  for (const [name, { id }] of Object.entries(CONTROLS)) $(id).options[0].textContent = `auto: ${autoText[name]}`;
  $('read-encoding').disabled = pasted;
  const dates = settings.dateColumns.map((c) => `“${names[c]}” (${settings.kinds[c]})`);
  const skipped = [
    settings.commentLines ? `${plural(settings.commentLines, 'comment line')}` : '',
    settings.blankLines ? `${plural(settings.blankLines, 'blank line')}` : '',
  ].filter(Boolean);
  $('read-detected').textContent =
    `Read as ${pasted ? 'pasted text' : autoText.encoding}, ${settings.delimiter}-separated, ` +
    `decimal ${autoText.decimal}${settings.thousands ? `, thousands separated by “${settings.thousands}”` : ''}, ` +
    `${settings.header ? 'with' : 'without'} a header row; ` +
    (dates.length
      ? `date and time columns: ${dates.join(', ')}` +
        (settings.dateOrder
          ? `, ${settings.dateOrder}${settings.dateOrderGuessed ? ' (a guess: no day above 12 was seen)' : ''}`
          : '')
      : 'no date columns') +
    `; ${skipped.length ? `${skipped.join(' and ')} skipped` : 'no line skipped'}. Change a setting below to read it again.`;
  const table = $('preview');
  const head = document.createElement('tr');
  for (const name of names)
    head.append(Object.assign(document.createElement('th'), { scope: 'col', textContent: name }));
  table.tHead.replaceChildren(head);
  table.tBodies[0].replaceChildren(
    ...preview.map((cells) => {
      const tr = document.createElement('tr');
      for (const cell of cells) tr.append(Object.assign(document.createElement('td'), { textContent: cell }));
      return tr;
    }),
  );
  $('preview-caption').textContent =
    `The first ${plural(preview.length, 'row')} as read (kinds: ` +
    `${names.map((n, c) => settings.kinds[c]).join(', ')})`;
}

/** After a refusal: the panel stays (its menus are the fix) without a preview, and the setting to change gets focus. */
export function showRefusal(argument) {
  const panel = $('reading');
  panel.hidden = false;
  $('read-detected').textContent = '';
  $('preview').tHead.replaceChildren();
  $('preview').tBodies[0].replaceChildren();
  $('preview-caption').textContent = '';
  const control = controlFor(argument);
  if (control && !control.disabled) control.focus();
}
