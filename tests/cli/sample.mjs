// The sample files the CLI tests read — 30 noisy samples of a curve (with their float64 Nadaraya-Watson and
// local-quadratic loops), a few malformed CSVs, and the attention inputs q.f32, k.f32, v.npy — written into the
// temporary folder of tests/cli/run.mjs. Not a test file itself.
import { writeFileSync } from 'node:fs';
import { at } from './run.mjs';

// 30 noisy samples of a curve; x in the first column, a text column between, y last.
export const X = Array.from({ length: 30 }, (_, i) => i / 29);
export const Y = X.map((t, i) => Math.sin(4 * t) + 0.2 * Math.sin(7.3 * i * i));

export function nadarayaWatson(xq, h) {
  return xq.map((q) => {
    let num = 0;
    let den = 0;
    X.forEach((k, j) => {
      const w = Math.exp(-0.5 * ((q - k) / h) ** 2);
      num += w * Y[j];
      den += w;
    });
    return num / den;
  });
}

/** The local-quadratic fit (R's loess degree 2) at xq, Gaussian kernel: the 3 × 3 normal equations by Cramer's rule. */
export function localQuadratic(xq, h) {
  return xq.map((q) => {
    const m = new Float64Array(5); // Σw·u^k, k = 0 … 4
    const t = new Float64Array(3); // Σw·u^k·y, k = 0 … 2
    X.forEach((k, j) => {
      const u = k - q;
      const w = Math.exp(-0.5 * (u / h) ** 2);
      for (let p = 0; p < 5; p++) m[p] += w * u ** p;
      for (let p = 0; p < 3; p++) t[p] += w * u ** p * Y[j];
    });
    const det3 = (a) =>
      a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6]);
    const A = [m[0], m[1], m[2], m[1], m[2], m[3], m[2], m[3], m[4]];
    return det3([t[0], m[1], m[2], t[1], m[2], m[3], t[2], m[3], m[4]]) / det3(A);
  });
}

/** The sample as sample.csv (quoted text between x and "the y", CRLF rows) and sample.tsv; queries; malformed CSVs. */
export function writeSampleFiles() {
  writeFileSync(at('sample.csv'), 'x,label,"the y"\n' + X.map((x, i) => `${x},"p, ${i}",${Y[i]}`).join('\r\n') + '\n');
  writeFileSync(at('sample.tsv'), X.map((x, i) => `${x}\t${Y[i]}`).join('\n') + '\n');
  writeFileSync(at('queries.tsv'), 'x\n0.1\n0.5\n0.77\n');
  writeFileSync(at('bad-number.csv'), 'x,y\n0,1\n0.5,2\n1,2.x\n');
  writeFileSync(at('ragged.csv'), 'x,y\n0,1\n0.5\n1,2\n');
  writeFileSync(at('quote.csv'), 'x,y\n0,1\n0.5,"2\n');
}

/** A float32 array as a .npy file (version 1.0, '<f4', C order), its header padded to 64 bytes as numpy writes it. */
export function npy(array, shape) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat(64 - ((10 + header.length + 1) % 64)) + '\n';
  return Buffer.concat([
    Buffer.from('\x93NUMPY\x01\x00', 'latin1'),
    Buffer.from(Uint16Array.of(header.length).buffer),
    Buffer.from(header, 'latin1'),
    Buffer.from(array.buffer),
  ]);
}

// Attention inputs: 3 queries and 5 keys of dimension 4, values of dimension 2.
export const DIM = 4;
export const Q = Float32Array.from({ length: 3 * DIM }, (_, i) => Math.sin(i));
export const K = Float32Array.from({ length: 5 * DIM }, (_, i) => Math.cos(0.5 * i));
export const V = Float32Array.from({ length: 5 * 2 }, (_, i) => i / 3);

/** q.f32 and k.f32 as raw float32, v.npy as a (5, 2) .npy file. */
export function writeAttentionFiles() {
  writeFileSync(at('q.f32'), Q);
  writeFileSync(at('k.f32'), K);
  writeFileSync(at('v.npy'), npy(V, [5, 2]));
}
