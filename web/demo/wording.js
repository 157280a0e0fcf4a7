// The library's words in the page's: the reader's refusals name the reading panel's menus and their entries instead
// of the reader's options (“set `decimal` to ','”), the library's warnings give bandwidths as the page writes them
// (days on a date axis, not seconds) and name the page's controls instead of the API's options (`exclude: r`), and
// the plan's refusal of a method names the Method menu. A message of another shape is shown as the library wrote it.
import { axis } from './axes.js';
import { labelFor, optionText } from './reading.js';

// The reader's way of naming the setting that fixes a refusal: "…: set `decimal` to ',' or '.'".
const READER_FIX = /:? set `(\w+)` to (.+)$/;

/** A refusal of the table reader (`argument`: the option that fixes it), naming the reading panel's menu instead. */
export function readerMessage(message, argument) {
  const label = argument ? labelFor(argument) : null;
  if (!label || label === argument) return message;
  const fix = READER_FIX.exec(message);
  const values = fix ? [...fix[2].matchAll(/'([^']*)'/g)].map((m) => optionText(argument, m[1])).filter(Boolean) : [];
  const base = (fix ? message.slice(0, fix.index) : message).replace(/\.$/, '');
  return `${base}. Change “${label}” under “How the file was read”${values.length ? ` to ${values.join(' or ')}` : ''}.`;
}

// The 'interpolating' warning (web/src/warnings.js): its reasons with bandwidths in x's units, and its advice.
const BELOW_SPACING = /the bandwidth ([-+\d.e]+)(?: of x\[(\d+)\])? is below the median spacing ([-+\d.e]+)/g;
const SERIAL_ADVICE = /With serial data, leave-one-out CV does this: .*$/;
// The 'sparse-points' warning's advice, in the page's controls.
const SPARSE_ADVICE = /Transform x \(.*$/;
const SPARSE_CONTROLS =
  'Transform x before opening the file (log x for a positive, skewed x), or choose Estimator “Nadaraya–Watson” or ' +
  '“loess”, or Bandwidth “span (nearest neighbours)”, whose window widens where the points are sparse.';

/**
 * A library warning ({ code, message }) as the page shows it: bandwidths and spacings written by x's axis (`axes`, as
 * the page's data holds them: a duration on a date axis), columns by their names (`names`), and the page's controls.
 */
export function warningText({ code, message }, axes, names) {
  if (code === 'sparse-points') return message.replace(SPARSE_ADVICE, SPARSE_CONTROLS);
  if (code !== 'interpolating') return message;
  const axisOf = (d) => axes?.[d] ?? axis();
  const dims = (names?.length ?? 2) - 1;
  const text = message
    .replace(BELOW_SPACING, (_, h, d = '0', spacing) => {
      const column = names?.[d] ? `“${names[d]}”` : 'x';
      return (
        `h = ${axisOf(d).h(Number(h))}${dims > 1 ? ` for ${column}` : ''} is below the median spacing of ` +
        `${column}, ${axisOf(d).h(Number(spacing))}`
      );
    })
    .replace(
      SERIAL_ADVICE,
      'With serial data, leave-one-out CV does this: choose h by blocked CV (“leave out ±”, beside “Choose for me”: ' +
        'about the range of the dependence along x), or set a larger h.',
    );
  return text[0].toUpperCase() + text.slice(1);
}

// The plan's refusal of a method asked for (web/src/plan.js): "`options.method` 'grid' cannot serve this call's
// `options.bandwidth`: span bandwidths run exactly; use method 'auto' or 'exact'".
const REFUSED_METHOD =
  /`options\.method` '([\w-]+)' cannot serve this call's `[\w.]+`: (.+); use method 'auto' or 'exact'$/;

/** An error of the compute worker as the page shows it: the plan's refusal of a method names the Method menu. */
export function errorText(message) {
  const refused = REFUSED_METHOD.exec(message);
  if (!refused) return message;
  return (
    `${message.slice(0, refused.index)}method “${refused[1]}” cannot serve this fit: ${refused[2]}. ` +
    'Choose “auto” or “exact” under “Method”.'
  );
}
