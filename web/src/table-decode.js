// Bytes to text for table.js, chunk by chunk: UTF-8 (with or without a byte-order mark), UTF-16 LE/BE (by their mark,
// or by the zero bytes of ASCII text without one), and Latin-1 (ISO-8859-1) when the start of a file is not UTF-8.
import { KernelAttentionError } from './errors.js';

export const ENCODINGS = ['auto', 'utf-8', 'latin1', 'utf-16le', 'utf-16be'];

/**
 * The encoding of a file whose first bytes are `head` (as much as is at hand; `final` when that is the whole file):
 * `{ encoding, bom }` with `bom` the length of the byte-order mark to drop.
 */
export function detectEncoding(head, final) {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return { encoding: 'utf-8', bom: 3 };
  if (head[0] === 0xff && head[1] === 0xfe) return { encoding: 'utf-16le', bom: 2 };
  if (head[0] === 0xfe && head[1] === 0xff) return { encoding: 'utf-16be', bom: 2 };
  // Text in ASCII letters, digits and punctuation has a zero byte in every other place in UTF-16 and none in UTF-8.
  let even = 0;
  let odd = 0;
  const n = Math.min(head.length, 4096) & ~1;
  for (let i = 0; i < n; i += 2) {
    if (head[i] === 0) even++;
    if (head[i + 1] === 0) odd++;
  }
  if (n >= 4 && odd > 0.4 * (n / 2) && even === 0) return { encoding: 'utf-16le', bom: 0 };
  if (n >= 4 && even > 0.4 * (n / 2) && odd === 0) return { encoding: 'utf-16be', bom: 0 };
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: !final });
    return { encoding: 'utf-8', bom: 0 };
  } catch {
    return { encoding: 'latin1', bom: 0 };
  }
}

// Latin-1 maps each byte to the code point of the same number, except 0x80–0x9F (control codes in ISO-8859-1), read
// as windows-1252 (€, ‘’, “”, –, …) as browsers read a file labelled Latin-1: Windows writes those bytes for them.
const CP1252 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
function latin1(bytes) {
  let s = '';
  for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
  return /[\x80-\x9f]/.test(s) ? s.replace(/[\x80-\x9f]/g, (c) => CP1252[c.charCodeAt(0) - 0x80]) : s;
}

/**
 * A streaming decoder: `decode(bytes)` returns the text of the bytes so far (a character split across chunks waits
 * for the next one), `end()` the rest. UTF-8 is decoded strictly: a later invalid sequence throws, naming the fix.
 */
export function createDecoder(encoding) {
  if (encoding === 'latin1') return { decode: latin1, end: () => '' };
  const be = encoding === 'utf-16be';
  const decoder = new TextDecoder(be ? 'utf-16le' : encoding, { fatal: encoding === 'utf-8', ignoreBOM: true });
  let odd = null; // a byte of UTF-16 BE held back for its pair
  let offset = 0;
  const run = (bytes, stream) => {
    try {
      if (!be) return decoder.decode(bytes, { stream });
      // Swapped into LE pairs, so that one decoder serves both byte orders.
      const all = odd === null ? bytes : concat(odd, bytes);
      const even = all.length & ~1;
      odd = even < all.length ? all[even] : null;
      const swapped = new Uint8Array(even);
      for (let i = 0; i < even; i += 2) {
        swapped[i] = all[i + 1];
        swapped[i + 1] = all[i];
      }
      return decoder.decode(swapped, { stream });
    } catch {
      throw new KernelAttentionError(
        'BadInput',
        `the bytes after byte ${offset.toLocaleString('en')} are not valid ` +
          `${encoding.toUpperCase()}, though the start of the file is: set \`encoding\` to 'latin1'`,
        'encoding',
      );
    } finally {
      offset += bytes.length;
    }
  };
  return { decode: (bytes) => run(bytes, true), end: () => run(new Uint8Array(0), false) };
}

function concat(first, bytes) {
  const all = new Uint8Array(bytes.length + 1);
  all[0] = first;
  all.set(bytes, 1);
  return all;
}
