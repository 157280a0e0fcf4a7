// Old option names keep working for one minor version; each says so once per process (not once per call, so that a
// loop over a deprecated call does not flood the console).
import { KernelAttentionError } from './errors.js';

const said = new Set();

/** Warns once per `key` (the old name) with `message`, through console.warn. */
export function deprecated(key, message) {
  if (said.has(key)) return;
  said.add(key);
  console.warn(`kernel-attention: ${message} (deprecated in 0.2.0; the old name is removed in the next minor version)`);
}

/**
 * `options[oldName]` read as `newName`: the value under the new name, or under the old one (with the deprecation
 * message), or undefined. Both given is an error naming both, since one of them would be silently ignored.
 */
export function renamed(options, oldName, newName, where = 'options') {
  const [oldValue, newValue] = [options[oldName], options[newName]];
  if (oldValue === undefined) return newValue;
  if (newValue !== undefined) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`${where}.${oldName}\` is the deprecated name of \`${where}.${newName}\`; pass only \`${where}.${newName}\``,
      `${where}.${oldName}`,
    );
  }
  deprecated(`${where}.${oldName}`, `\`${where}.${oldName}\` is now \`${where}.${newName}\``);
  return oldValue;
}
