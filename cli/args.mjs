// Command-line parsing for the CLI: node:util parseArgs per command, then checks of values (numbers, choices, column
// lists). Every mistake is a UsageError, which the CLI reports with a pointer to --help and exit code 2.
import { parseArgs } from 'node:util';

/** A mistake in the command line (exit code 2). */
export class UsageError extends Error {
  constructor(message) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * Parses `argv` against `options` (parseArgs' format, plus `help`) and at most `positionals` positional arguments.
 * Returns `{ values, positionals }`; unknown options, missing values and extra arguments throw UsageError.
 */
export function parseCommand(argv, options, { positionals = 0 } = {}) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(e.message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  if (!parsed.values.help && parsed.positionals.length > positionals) {
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[positionals])}`);
  }
  return parsed;
}

/** A required option's value. */
export function required(values, name) {
  if (values[name] === undefined) throw new UsageError(`--${name} is required`);
  return values[name];
}

/** A finite number (undefined when absent), optionally required to be positive and/or an integer. */
export function number(values, name, { positive = false, integer = false } = {}) {
  const text = values[name];
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || (positive && !(value > 0)) || (integer && !Number.isInteger(value))) {
    const kind = `${positive ? 'a positive ' : 'a '}${integer ? 'integer' : 'number'}`;
    throw new UsageError(`--${name} must be ${kind}; got ${JSON.stringify(text)}`);
  }
  return value;
}

/** One of `choices` (or `fallback` when absent). */
export function choice(values, name, choices, fallback) {
  const value = values[name] ?? fallback;
  if (value !== undefined && !choices.includes(value)) {
    throw new UsageError(`--${name} must be one of ${choices.join(', ')}; got ${JSON.stringify(value)}`);
  }
  return value;
}

/** A comma-separated list of column names or 1-based indices. */
export function columnList(values, name) {
  const list = required(values, name).split(',').map((s) => s.trim());
  if (list.some((s) => s === '')) throw new UsageError(`--${name}: empty column name in ${JSON.stringify(values[name])}`);
  return list;
}
