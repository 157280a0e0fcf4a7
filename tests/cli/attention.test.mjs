// `kernel-attention attention` over raw float32 and .npy files against a float64 softmax loop written here, and the
// shapes .npy files carry (--dim from a 2-D shape, a mismatch refused).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { at, cli, ok, useTempDir } from './run.mjs';
import { DIM, K, Q, V, npy, writeAttentionFiles } from './sample.mjs';

useTempDir('ka-cli-attention-', writeAttentionFiles);

test('attention over raw float32 and .npy files follows a float64 loop', () => {
  const [dim, q, k, v] = [DIM, Q, K, V];
  const want = [];
  for (let i = 0; i < 3; i++) {
    const s = Array.from({ length: 5 }, (_, j) => {
      let dot = 0;
      for (let d = 0; d < dim; d++) dot += q[i * dim + d] * k[j * dim + d];
      return dot / 2;
    });
    const w = s.map((x) => Math.exp(x - Math.max(...s)));
    const total = w.reduce((a, b) => a + b);
    for (let c = 0; c < 2; c++) want.push(w.reduce((a, wj, j) => a + wj * v[j * 2 + c], 0) / total);
  }
  const rows = JSON.parse(
    ok('attention', '--queries', 'q.f32', '--keys', 'k.f32', '--values', 'v.npy', '--dim', '4', '--format', 'json'),
  );
  rows.flat().forEach((o, i) => assert.ok(Math.abs(o - want[i]) < 1e-6, `${i}: ${o} vs ${want[i]}`));
  ok('attention', '--queries', 'q.f32', '--keys', 'k.f32', '--values', 'v.npy', '--dim', '4', '--output', 'out.f32');
  const raw = readFileSync(at('out.f32'));
  assert.deepEqual(Array.from(new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4)), rows.flat());
});

test('.npy files keep their shape: 2-D gives --dim, a mismatching --dim is refused, 1-D is a flat list', () => {
  const q = Float32Array.from({ length: 3 * 4 }, (_, i) => Math.sin(i));
  const k = Float32Array.from({ length: 5 * 4 }, (_, i) => Math.cos(0.5 * i));
  writeFileSync(at('q2.npy'), npy(q, [3, 4]));
  writeFileSync(at('k2.npy'), npy(k, [5, 4]));
  writeFileSync(at('k1.npy'), npy(k, [20]));
  writeFileSync(at('v-wrong.npy'), npy(new Float32Array(8), [4, 2]));
  const base = ok(
    'attention',
    '--queries',
    'q.f32',
    '--keys',
    'k.f32',
    '--values',
    'v.npy',
    '--dim',
    '4',
    '--format',
    'json',
  );
  assert.equal(
    ok('attention', '--queries', 'q2.npy', '--keys', 'k2.npy', '--values', 'v.npy', '--format', 'json'),
    base,
    'dim from the shape',
  );
  assert.equal(
    ok('attention', '--queries', 'q2.npy', '--keys', 'k1.npy', '--values', 'v.npy', '--format', 'json'),
    base,
  );
  assert.equal(
    ok('attention', '--queries', 'q.f32', '--keys', 'k1.npy', '--values', 'v.npy', '--dim', '4', '--format', 'json'),
    base,
  );
  const cases = [
    [
      ['--queries', 'q2.npy', '--keys', 'k2.npy', '--values', 'v.npy', '--dim', '2'],
      2,
      /--dim 2 does not match --queries q2\.npy, of shape \(3, 4\): rows of 4/,
    ],
    [['--queries', 'q.f32', '--keys', 'k1.npy', '--values', 'v.npy'], 2, /--dim is required/],
    [
      ['--queries', 'q2.npy', '--keys', 'k2.npy', '--values', 'v-wrong.npy'],
      1,
      /--values has shape \(4, 2\): 4 rows, for 5 keys/,
    ],
  ];
  for (const [args, code, pattern] of cases) {
    const r = cli('attention', ...args);
    assert.equal(r.code, code, `${args.join(' ')}: exit ${r.code} (${r.stderr})`);
    assert.match(r.stderr, pattern, args.join(' '));
  }
});
