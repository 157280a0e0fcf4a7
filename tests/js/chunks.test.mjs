// Large calls copy queries in chunks: the wasm heap holds the keys, the values and one chunk of queries and outputs,
// so attention over 65,536 queries of width 64 fits a 64 MiB heap. White-box: the heap size is read from the module.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import createKernelAttention from '../../web/dist/kernel_attention.mjs';
import { makeEngine } from '../../web/src/engine.js';
import { makeAttention } from '../../web/src/attention.js';
import { maxAbsDiff, mulberry32, randomFloat32, referenceAttention } from './reference.mjs';

// Made here without the loader, which reads the .wasm in Node (web/src/locate.js): given its bytes.
const module = await createKernelAttention({
  wasmBinary: readFileSync(new URL('../../web/dist/kernel_attention.wasm', import.meta.url)),
});
const attention = makeAttention(makeEngine(module));
const MiB = 2 ** 20;
const heapMiB = () => module.HEAP8.length / MiB;

test('65,536 queries × 64 with 64 keys: rows match the float64 reference and the heap stays small', () => {
  const rand = mulberry32(65536);
  const I = 65536,
    J = 64,
    M = 64,
    D = 64;
  const q = randomFloat32(rand, I * M),
    k = randomFloat32(rand, J * M),
    v = randomFloat32(rand, J * D);
  const out = attention(q, k, v, { dim: M });
  assert.ok(heapMiB() <= 24, `heap grew to ${heapMiB()} MiB; queries and outputs alone are 32 MiB`);
  // Rows at chunk edges and elsewhere, against the reference computed on those rows only.
  for (const i of [0, 16383, 16384, 32767, 50000, I - 1]) {
    const want = referenceAttention(q.subarray(i * M, (i + 1) * M), k, v, { dim: M });
    assert.ok(maxAbsDiff(out.subarray(i * D, (i + 1) * D), want) < 1e-5, `row ${i}`);
  }
});

test('chunked rows equal the unchunked call byte for byte, with a general mask and groups sliced per chunk', () => {
  const rand = mulberry32(7);
  const I = 20000,
    J = 50,
    M = 60,
    D = 4; // (M + D)·4 bytes per row: over 16,384 rows per 4 MiB chunk
  const q = randomFloat32(rand, I * M),
    k = randomFloat32(rand, J * M),
    v = randomFloat32(rand, J * D);
  const mask = Uint8Array.from({ length: I * J }, () => (rand() < 0.3 ? 1 : 0));
  const groups = {
    queries: Int32Array.from({ length: I }, (_, i) => i % 3),
    keys: Int32Array.from({ length: J }, (_, j) => j % 3),
  };
  const options = { dim: M, mask, groups, empty: 'zero' };
  const all = attention(q, k, v, options);
  for (const i of [0, 16383, 16384, I - 1]) {
    const one = attention(q.subarray(i * M, (i + 1) * M), k, v, {
      ...options,
      mask: mask.slice(i * J, (i + 1) * J),
      groups: { queries: [groups.queries[i]], keys: groups.keys },
    });
    assert.deepEqual(new Uint8Array(all.buffer, i * D * 4, D * 4), new Uint8Array(one.buffer), `row ${i}`);
  }
});

test('an empty row found in a later chunk is reported with its index in the whole call', () => {
  const I = 20000,
    J = 8,
    M = 60;
  const q = new Float32Array(I * M),
    k = new Float32Array(J * M),
    v = new Float32Array(J);
  const mask = new Uint8Array(I * J);
  mask.fill(1, 19000 * J, 19001 * J);
  assert.throws(
    () => attention(q, k, v, { dim: M, mask, empty: 'error' }),
    (e) => e.code === 'EmptyRow' && /query 19000 /.test(e.message),
  );
});

test('65,536 keys × 64 with values × 64 run within a 64 MiB heap', () => {
  const rand = mulberry32(3);
  const I = 32,
    J = 65536,
    M = 64,
    D = 64;
  const q = randomFloat32(rand, I * M),
    k = randomFloat32(rand, J * M),
    v = randomFloat32(rand, J * D);
  const out = attention(q, k, v, { dim: M });
  assert.ok(heapMiB() < 64, `heap grew to ${heapMiB()} MiB`);
  const want = referenceAttention(q.subarray(0, M), k, v, { dim: M });
  assert.ok(maxAbsDiff(out.subarray(0, D), want) < 1e-5);
});
