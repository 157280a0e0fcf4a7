// The API's errors in the command line's words: option names become flags (`options.dim` → --dim), and an element of
// x or y (`x[12]`) becomes the line and column of the file it came from.
import { KernelAttentionError } from '../web/src/errors.js';
import { InputError } from './csv.mjs';

// The API's names for its arguments, as this command line's flags.
const API_FLAGS = {
  q: '--queries',
  k: '--keys',
  v: '--values',
  queries: '--queries',
  keys: '--keys',
  values: '--values',
  x: '--x',
  y: '--y',
};

/** Runs `call` and rewords a KernelAttentionError; `s` (optional) is the sample (sample.mjs) the call was given. */
export async function apiCall(call, s) {
  try {
    return await call();
  } catch (e) {
    if (!(e instanceof KernelAttentionError)) throw e;
    const at = s && /^`([xy])\[(\d+)\]`/.exec(e.message);
    if (at) {
      const names = at[1] === 'x' ? s.xNames : s.yNames;
      const row = Math.floor(Number(at[2]) / names.length);
      const value = e.message.replace(/^`[xy]\[\d+\]`\s*/, '');
      throw new InputError(
        s.file,
        s.lines[row],
        null,
        `column ${JSON.stringify(names[Number(at[2]) % names.length])}: the value ${value}`,
      );
    }
    // A regression's dim is its number of --x columns (only attention has a --dim flag).
    if (s?.xNames) e.message = e.message.replace(/`options\.dim`/g, 'the number of --x columns');
    e.message = e.message
      .replace(/`options\.(\w+)`/g, (_, name) => `--${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`)
      .replace(/`(\w+)`/g, (all, name) => API_FLAGS[name] ?? all);
    throw e;
  }
}
