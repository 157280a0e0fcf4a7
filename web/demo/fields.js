// Number fields held to their own range (the input's min, max and step): a value outside it, a fraction where a
// whole number is needed, or text that is no number is replaced by the nearest value allowed, written back into the
// field, and the note after the field says what was entered and what is used, rather than changing it silently.

const text = (v) => v.toLocaleString('en', { maximumFractionDigits: 6 });

/** The field's value once held to its range (see above); `fallback` stands for an empty or unreadable entry. */
export function holdToRange(input, fallback) {
  const note = document.getElementById(`${input.id}-note`);
  const label = document.querySelector(`label[for="${input.id}"]`)?.textContent.trim() ?? input.id;
  const min = input.min === '' ? -Infinity : Number(input.min);
  const max = input.max === '' ? Infinity : Number(input.max);
  const whole = input.step === '1';
  const entered = input.value;
  let used = Number(entered);
  let why = null;
  if (entered.trim() === '' || !Number.isFinite(used)) {
    used = fallback;
    why = input.validity.badInput ? 'what was entered is not a number' : 'the field was empty';
  } else {
    if (whole && !Number.isInteger(used)) {
      used = Math.round(used);
      why = `${entered} is not a whole number`;
    }
    if (used < min || used > max) {
      const range = max === Infinity ? `${text(min)} or more` : `${text(min)} to ${text(max)}`;
      why = `“${label}” takes ${range} (${text(Number(entered))} was entered)`;
      used = Math.min(max, Math.max(min, used));
    }
  }
  if (why) input.value = String(used);
  if (note) {
    note.textContent = why ? `${why[0].toUpperCase()}${why.slice(1)}: ${text(used)} is used.` : '';
    note.hidden = !why;
  }
  return used;
}
