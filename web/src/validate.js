// Argument checks that run before any allocation: each failure names the argument, the expectation and the value.
import { describe, fail, KernelAttentionError } from './errors.js';
import { MAX_WASM_BYTES } from './heap.js';

const isInteger = (x) => typeof x === 'number' && Number.isInteger(x);

/** Rejects option names the function does not know (a typo must not be silently ignored). */
export function checkOptionNames(options, known, where = 'options') {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options) || ArrayBuffer.isView(options)) {
    fail('BadArgument', where, 'an object', options);
  }
  for (const name of Object.keys(options)) {
    if (!known.includes(name)) {
      const near =
        name.length >= 3 && known.find((k) => k.toLowerCase() === name.toLowerCase() || k.startsWith(name.slice(0, 3)));
      throw new KernelAttentionError(
        'BadArgument',
        `unknown option \`${where}.${name}\`${near ? ` (did you mean \`${near}\`?)` : ''}; known options: ${known.join(', ')}`,
        `${where}.${name}`,
      );
    }
  }
  return options;
}

// The length a typed array really has: a subclass may override `length`, but copies (TypedArray.prototype.set) use
// the real one, so a shorter claimed length would overflow the allocation sized from it.
const typedArrayLength = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), 'length').get;

/** Throws unless the typed array `value` reports its real length (a subclass may override the getter). */
export function ownLength(value, name) {
  if (value.length !== typedArrayLength.call(value)) {
    fail(
      'BadArgument',
      name,
      `a typed array whose \`length\` is its own (${typedArrayLength.call(value)} entries)`,
      value,
    );
  }
  return value.length;
}

/**
 * Checks a numeric array (Float32Array, Float64Array or array-like of numbers): every entry finite and within
 * float32 range. Returns a typed array unchanged, and a plain array as a Float64Array of the entries read (each read
 * once: a Proxy or getter cannot give the copy into the heap other values, or another length, than were checked);
 * it is converted to float32 only when copied into the heap.
 */
export function numericArray(value, name) {
  const typed = ArrayBuffer.isView(value) && !(value instanceof DataView);
  if (!Array.isArray(value) && !typed)
    fail('BadArgument', name, 'a Float32Array, Float64Array or array of numbers', value);
  if (value instanceof BigInt64Array || value instanceof BigUint64Array) {
    fail('BadArgument', name, 'a Float32Array, Float64Array or array of numbers (not BigInt)', value);
  }
  if (typed && isDetached(value.buffer)) {
    fail('BadArgument', name, 'an array whose buffer is not detached (transferred)', value);
  }
  const length = typed ? ownLength(value, name) : value.length;
  if (!typed && length > MAX_WASM_BYTES / 4) {
    // no dense JS array is that long; its float32 copy would not fit the wasm memory
    throw new KernelAttentionError(
      'OutOfMemory',
      `\`${name}\` has ${length} entries, beyond the 2 GiB WebAssembly memory (as float32)`,
      name,
    );
  }
  const copy = typed ? null : new Float64Array(length);
  for (let n = 0; n < length; n++) {
    const x = value[n];
    if (typeof x !== 'number' || !Number.isFinite(Math.fround(x))) {
      throw new KernelAttentionError(
        typeof x === 'number' ? 'NonFinite' : 'BadArgument',
        `\`${name}[${n}]\` must be a finite number within float32 range; got ${x === undefined ? 'a hole or undefined' : describe(x)}`,
        name,
      );
    }
    if (copy) copy[n] = x;
  }
  return copy ?? value;
}

// Node 20 has no ArrayBuffer.prototype.detached; a view on a detached buffer cannot be created.
function isDetached(buffer) {
  if (typeof buffer.detached === 'boolean') return buffer.detached;
  if (buffer.byteLength > 0 || (typeof SharedArrayBuffer !== 'undefined' && buffer instanceof SharedArrayBuffer))
    return false;
  try {
    new Uint8Array(buffer);
    return false;
  } catch {
    return true;
  }
}

export function positiveInteger(value, name) {
  if (!isInteger(value) || value < 1) fail('BadArgument', name, 'a positive integer', value);
  return value;
}

/** Rows of a flat row-major array with `cols` columns. */
export function rowsOf(array, cols, name, colsName) {
  if (array.length % cols !== 0) {
    throw new KernelAttentionError(
      'BadShape',
      `\`${name}\` has length ${array.length}, which is not a multiple of \`${colsName}\` = ${cols}`,
      name,
    );
  }
  return array.length / cols;
}

export function oneOf(value, allowed, name) {
  if (!allowed.includes(value)) fail('BadArgument', name, `one of ${allowed.map((a) => `'${a}'`).join(', ')}`, value);
  return value;
}

export function boolean(value, name) {
  if (typeof value !== 'boolean') fail('BadArgument', name, 'true or false', value);
  return value;
}

/** Bandwidths as a Float32Array of length dim: one number for all dimensions, or one per dimension. */
export function bandwidths(value, dim, name) {
  const list = typeof value === 'number' ? new Array(dim).fill(value) : value;
  if (typeof value !== 'number') {
    if (!Array.isArray(value) && !(ArrayBuffer.isView(value) && !(value instanceof DataView))) {
      fail('BadArgument', name, `a positive number or an array of ${dim} positive numbers`, value);
    }
    if (value.length !== dim) fail('BadShape', name, `one bandwidth or ${dim} (one per dimension)`, value);
  }
  const out = new Float32Array(dim);
  for (let d = 0; d < dim; d++) {
    const h = list[d];
    const f = Math.fround(h);
    if (typeof h !== 'number' || !(h > 0) || !Number.isFinite(h) || !(f > 0) || !Number.isFinite(f)) {
      throw new KernelAttentionError(
        'BadBandwidth',
        `\`${name}${typeof value === 'number' ? '' : `[${d}]`}\` must be a positive finite number within float32 range ` +
          `(1.4e-45 to 3.4e38); got ${describe(h)}`,
        name,
      );
    }
    out[d] = f;
  }
  return out;
}

/** Group ids as Int32Array of the given length. */
export function groupIds(value, length, name) {
  const ok = value instanceof Int32Array || Array.isArray(value) || ArrayBuffer.isView(value);
  if (!ok || value.length !== length)
    fail(ok ? 'BadShape' : 'BadArgument', name, `an Int32Array or array of ${length} integers`, value);
  const ids = new Int32Array(length); // the values checked, each read once
  for (let n = 0; n < length; n++) {
    const g = value[n];
    if (!isInteger(g) || g < -2147483648 || g > 2147483647) {
      throw new KernelAttentionError(
        'BadArgument',
        `\`${name}[${n}]\` must be a 32-bit integer; got ${describe(g)}`,
        name,
      );
    }
    ids[n] = g;
  }
  return ids;
}
