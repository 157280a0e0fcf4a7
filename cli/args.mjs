// Command-line parsing for the CLI: node:util parseArgs per command, then checks of values (numbers, choices, column
// lists) and of the paths named (readInput, writeOutput). Every mistake is a UsageError, which the CLI reports with
// exit code 2 and, unless it is a FileError (a path that is missing, a directory or unreadable), a pointer to --help.
import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { parseNumber } from '../web/src/table-values.js';

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
    parsed = parseArgs({
      args: negativeValues(argv, options),
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
  } catch (e) {
    throw new UsageError(e.message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  if (!parsed.values.help && parsed.positionals.length > positionals) {
    throw new UsageError(`unexpected argument ${JSON.stringify(parsed.positionals[positionals])}`);
  }
  return parsed;
}

/**
 * `--from -5` as `--from=-5`: parseArgs takes a value that starts with a dash for an option ("argument is ambiguous"),
 * but a negative number after an option that takes a value can only be that value.
 */
function negativeValues(argv, options) {
  const takesValue = new Set(
    Object.entries(options)
      .filter(([, o]) => o.type === 'string')
      .map(([name]) => `--${name}`),
  );
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--') return out.concat(argv.slice(i));
    if (takesValue.has(argv[i]) && /^-\.?\d/.test(argv[i + 1] ?? '')) out.push(`${argv[i]}=${argv[++i]}`);
    else out.push(argv[i]);
  }
  return out;
}

/** A required option's value. */
export function required(values, name) {
  if (values[name] === undefined) throw new UsageError(`--${name} is required`);
  return values[name];
}

/**
 * A finite number (undefined when absent), optionally required to be positive and/or an integer. Read strictly, as
 * table cells are: `0x10`, `1e` and `12abc` are not numbers.
 */
export function number(values, name, { positive = false, integer = false } = {}) {
  const text = values[name];
  if (text === undefined) return undefined;
  const value = parseNumber(text);
  if (!Number.isFinite(value) || (positive && !(value > 0)) || (integer && !Number.isInteger(value))) {
    const kind = `${positive ? 'a positive ' : integer ? 'an ' : 'a '}${integer ? 'integer' : 'number'}`;
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
  const list = required(values, name)
    .split(',')
    .map((s) => s.trim());
  if (list.some((s) => s === ''))
    throw new UsageError(`--${name}: empty column name in ${JSON.stringify(values[name])}`);
  return list;
}

/** A path the command line named that cannot be read or written; printed without the pointer to --help. */
export class FileError extends UsageError {
  constructor(message) {
    super(message);
    this.name = 'FileError';
  }
}

// The system's words for the usual cases, so that the line says what is wrong with the path, not which call failed.
const REASONS = {
  ENOENT: 'no such file',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
};
export const reason = (e) => REASONS[e.code] ?? e.message;

/** The file's bytes (`-`: all of stdin); FileError names the path and the reason. */
export async function readInput(file) {
  if (file === '-') {
    const parts = [];
    for await (const chunk of process.stdin) parts.push(chunk);
    return Buffer.concat(parts);
  }
  try {
    return await readFile(file);
  } catch (e) {
    throw new FileError(`cannot read ${file}: ${reason(e)}`);
  }
}

/** Writes --output (`-`: stdout); FileError names the path and the reason. */
export async function writeOutput(file, data) {
  if (file === '-') {
    process.stdout.write(data);
    return;
  }
  try {
    await writeFile(file, data);
  } catch (e) {
    throw new FileError(`cannot write ${file}: ${reason(e)}`);
  }
}
