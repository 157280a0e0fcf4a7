// Reads a float32 array from a raw little-endian file or a .npy file (version 1–3, dtype <f4, C order, its shape).
import { readInput } from './args.mjs';
import { InputError } from './csv.mjs';

const NPY_MAGIC = '\x93NUMPY';

/** `{ file, data: Float32Array, shape }`: `shape` is the .npy header's (a list of integers), null for a raw file. */
export async function readFloat32(file) {
  const bytes = await readInput(file);
  let offset = 0;
  let shape = null;
  if (bytes.subarray(0, 6).toString('latin1') === NPY_MAGIC) {
    const major = bytes[6];
    const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
    offset = (major === 1 ? 10 : 12) + headerLength;
    const header = bytes.subarray(major === 1 ? 10 : 12, offset).toString('latin1');
    const descr = /'descr':\s*'([^']*)'/.exec(header)?.[1];
    if (descr !== '<f4' || /'fortran_order':\s*True/.test(header)) {
      throw new InputError(
        file,
        1,
        1,
        `.npy must hold little-endian float32 ('<f4') in C order; got descr ${JSON.stringify(descr)}${/True/.test(header) ? ', Fortran order' : ''}`,
      );
    }
    const tuple = /'shape':\s*\(([^)]*)\)/.exec(header)?.[1];
    if (tuple === undefined || !/^\s*(\d+\s*(,\s*\d+\s*)*,?\s*)?$/.test(tuple)) {
      throw new InputError(file, 1, 1, `.npy header has no readable 'shape'; got ${JSON.stringify(header.trim())}`);
    }
    shape = tuple
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean)
      .map(Number);
    if (shape.length > 2) throw new InputError(file, 1, 1, `.npy must be 1-D or 2-D; got shape (${shape.join(', ')})`);
  }
  const length = bytes.length - offset;
  if (length % 4 !== 0)
    throw new InputError(file, 1, 1, `${length} bytes of data is not a whole number of float32 values`);
  if (shape && shape.reduce((a, b) => a * b, 1) !== length / 4) {
    throw new InputError(
      file,
      1,
      1,
      `.npy shape (${shape.join(', ')}) needs ${shape.reduce((a, b) => a * b, 1)} values; the file holds ${length / 4}`,
    );
  }
  const data = new Float32Array(length / 4);
  new Uint8Array(data.buffer).set(bytes.subarray(offset)); // copied: the file's buffer may not be 4-byte aligned
  return { file, data, shape };
}
