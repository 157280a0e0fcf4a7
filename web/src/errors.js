// The one error type of the package: a code for programs, the argument at fault, and a message for people.

export class KernelAttentionError extends Error {
  /**
   * @param {string} code  machine-readable reason, e.g. 'BadArgument'
   * @param {string} message
   * @param {string} [argument]  the parameter at fault, e.g. 'options.bandwidth'
   */
  constructor(code, message, argument) {
    super(message);
    this.name = 'KernelAttentionError';
    this.code = code;
    if (argument !== undefined) this.argument = argument;
  }
}

/** Short, safe description of a received value for error messages (never its whole contents). */
export function describe(value) {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? value.slice(0, 40) + '…' : value);
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (typeof value !== 'object') return `${typeof value} ${String(value)}`;
  if (ArrayBuffer.isView(value)) return `${value.constructor.name} of length ${value.length}`;
  if (Array.isArray(value)) return `an array of length ${value.length}`;
  return `an object with keys ${Object.keys(value).slice(0, 5).join(', ') || '(none)'}`;
}

/** Throws a KernelAttentionError naming the argument, what was expected and what was received. */
export function fail(code, argument, expected, received) {
  throw new KernelAttentionError(code, `\`${argument}\` must be ${expected}; got ${describe(received)}`, argument);
}

/**
 * Turns a core result (engine.js: `status` is the Status name) into a thrown KernelAttentionError, or nothing when it
 * is 'Ok'. `firstRow` is the index of the call's first query within the user's queries (when they were passed in
 * chunks).
 */
export function checkResult(result, firstRow = 0) {
  const code = result.status;
  if (code === 'Ok') return;
  if (code === 'EmptyRow') {
    throw new KernelAttentionError(
      'EmptyRow',
      `query ${result.row + firstRow}${result.head > 0 ? ` (head ${result.head})` : ''} has no admissible key and \`options.empty\` is 'error'`,
      'options.empty',
    );
  }
  if (code === 'OutOfMemory') {
    throw new KernelAttentionError(
      code,
      'the engine could not allocate its working memory (WebAssembly memory is limited to 2 GiB); use smaller inputs',
    );
  }
  throw new KernelAttentionError(code, `the engine rejected the call (${code}); this is a bug if validation passed`);
}
