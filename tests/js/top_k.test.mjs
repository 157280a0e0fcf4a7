// method 'top-k' (issue 5, item 4: top-k attention) through the public API, against the independent float64
// reference: every kernel, mask, group and head count; the reported dropped mass; k ≥ J is full attention; ties go
// to the lower key index; bad options are typed errors naming the option, inputs stay untouched, memory is freed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeEngine } from '../../web/src/engine.js';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { makeAttentionWithInfo } from '../../web/src/attention.js';
import { initOptions } from './build.mjs';
import { countedModule } from './counted.mjs';
import { maxAbsDiff, mulberry32, randomFloat32, referenceAttention, referenceWeights } from './reference.mjs';

const ka = await init(initOptions);

function problem({ I, J, dim, D, seed }) {
  const rand = mulberry32(seed);
  return { q: randomFloat32(rand, I * dim), k: randomFloat32(rand, J * dim), v: randomFloat32(rand, J * D) };
}

/** Top-k from the float64 reference weights: { out (I·D), dropped (I·H) }, NaN for rows with no admissible key. */
function referenceTopK(q, k, v, options, topK) {
  const w = referenceWeights(q, k, options);
  const H = options.heads ?? 1;
  const J = k.length / options.dim;
  const I = q.length / options.dim;
  const D = v.length / J;
  const width = D / H;
  const out = new Float64Array(I * D).fill(NaN);
  const dropped = new Float64Array(I * H).fill(NaN);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < I; i++) {
      const row = w.subarray((h * I + i) * J, (h * I + i + 1) * J);
      if (Number.isNaN(row[0])) continue;
      const order = [...row.keys()].filter((j) => row[j] > 0).sort((a, b) => row[b] - row[a] || a - b);
      const kept = order.slice(0, topK);
      const mass = kept.reduce((s, j) => s + row[j], 0);
      const total = order.reduce((s, j) => s + row[j], 0);
      for (let d = h * width; d < (h + 1) * width; d++)
        out[i * D + d] = kept.length ? kept.reduce((s, j) => s + row[j] * v[j * D + d], 0) / mass : 0;
      dropped[i * H + h] = kept.length ? (total - mass) / mass : 0;
    }
  }
  return { out, dropped };
}

test("method 'top-k' keeps each query's k largest weights, renormalised: every kernel, mask, groups and heads", () => {
  const I = 24;
  const J = 70;
  const { q, k, v } = problem({ I, J, dim: 4, D: 4, seed: 3 });
  const masks = [
    {},
    { causal: true },
    { mask: Uint8Array.from({ length: J }, (_, j) => j % 4 === 1) },
    { mask: Uint8Array.from({ length: I * J }, (_, n) => n % 5 === 0) },
    {
      groups: { queries: Array.from({ length: I }, (_, i) => i % 3), keys: Array.from({ length: J }, (_, j) => j % 3) },
    },
  ];
  for (const kernel of ['softmax', 'gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform']) {
    for (const heads of [1, 2]) {
      for (const extra of masks) {
        const options = { dim: 4, heads, kernel, ...(kernel === 'softmax' ? {} : { bandwidth: 0.9 }), ...extra };
        for (const topK of [1, 5, J]) {
          const label = `${kernel}, heads ${heads}, ${Object.keys(extra).join() || 'no mask'}, k ${topK}`;
          const run = ka.attentionWithInfo(q, k, v, { ...options, method: 'top-k', topK });
          const want = referenceTopK(q, k, v, options, topK);
          assert.equal(run.method, 'top-k');
          for (let n = 0; n < want.out.length; n++) {
            if (Number.isNaN(want.out[n])) assert.ok(Number.isNaN(run.output[n]), `${label}: output ${n}`);
            else
              assert.ok(
                Math.abs(run.output[n] - want.out[n]) <= 2e-5,
                `${label}: output ${n} ${run.output[n]} vs ${want.out[n]}`,
              );
          }
          let largest = 0;
          for (let n = 0; n < want.dropped.length; n++) {
            if (Number.isNaN(want.dropped[n])) {
              assert.ok(Number.isNaN(run.droppedMass[n]), `${label}: dropped ${n}`);
              continue;
            }
            assert.ok(
              Math.abs(run.droppedMass[n] - want.dropped[n]) <= 1e-5 * (1 + want.dropped[n]),
              `${label}: dropped ${n}`,
            );
            largest = Math.max(largest, run.droppedMass[n]);
          }
          assert.ok(Math.abs(run.errorEstimate - largest / (1 + largest)) <= 1e-12, label);
          assert.equal(run.keptKeys + run.skippedKeys, I * J * heads);
          assert.deepEqual(ka.attention(q, k, v, { ...options, method: 'top-k', topK }), run.output);
          if (topK === J) {
            // Every key kept: full attention, within float32 summation order.
            const full = referenceAttention(q, k, v, options);
            assert.ok(
              maxAbsDiff(
                run.output.filter((x) => !Number.isNaN(x)),
                full.filter((x) => !Number.isNaN(x)),
              ) <= 2e-5,
              label,
            );
            assert.equal(run.errorEstimate, 0);
          }
        }
      }
    }
  }
});

test("method 'top-k': ties go to the lower key index; the dropped mass bounds the distance to full attention", async () => {
  // Keys 0 and 1 sit at the same distance from the query as keys 2 and 3.
  const tie = ka.attentionWithInfo([0], [1, -1, 1, -1], [10, 20, 30, 40], {
    dim: 1,
    kernel: 'gaussian',
    method: 'top-k',
    topK: 2,
  });
  assert.deepEqual([...tie.output], [15]);
  assert.ok(Math.abs(tie.droppedMass[0] - 1) < 1e-6);
  // Softmax attention over 2,000 keys: every output within errorEstimate × range(v) of full attention.
  const { q, k, v } = problem({ I: 50, J: 2000, dim: 8, D: 2, seed: 9 });
  const options = { dim: 8, scale: 3 };
  const full = referenceAttention(q, k, v, options);
  for (const topK of [16, 256]) {
    const run = ka.attentionWithInfo(q, k, v, { ...options, method: 'top-k', topK });
    assert.ok(maxAbsDiff(run.output, full) / 2 <= run.errorEstimate + 1e-6, `k ${topK}`); // values span about 2
    const async = await ka.attentionAsync(q, k, v, { ...options, method: 'top-k', topK });
    assert.deepEqual(async, run.output);
  }
});

test("method 'top-k': bad options are typed errors naming the option; inputs stay untouched; memory is freed", async () => {
  const { q, k, v } = problem({ I: 4, J: 6, dim: 2, D: 2, seed: 7 });
  const copies = [q.slice(), k.slice(), v.slice()];
  for (const [options, argument] of [
    [{ method: 'top-k' }, 'options.topK'],
    [{ method: 'top-k', topK: 0 }, 'options.topK'],
    [{ method: 'top-k', topK: 2.5 }, 'options.topK'],
    [{ method: 'top-k', topK: '3' }, 'options.topK'],
    [{ topK: 3 }, 'options.topK'],
    [{ method: 'sparse', kernel: 'gaussian', topK: 3 }, 'options.topK'],
    [{ method: 'top-k', topK: 3, features: 8 }, 'options.features'],
  ]) {
    assert.throws(
      () => ka.attention(q, k, v, { dim: 2, ...options }),
      (e) => {
        assert.ok(e instanceof KernelAttentionError, String(e));
        assert.equal(e.argument, argument, e.message);
        return true;
      },
      JSON.stringify(options),
    );
  }
  assert.throws(
    () =>
      ka.attention(q, k, v, { dim: 2, kernel: 'uniform', bandwidth: 1e-3, empty: 'error', method: 'top-k', topK: 2 }),
    (e) => e.code === 'EmptyRow' && e.argument === 'options.empty',
  );
  assert.deepEqual([q, k, v], copies);

  const { module, live, stats } = await countedModule();
  const withInfo = makeAttentionWithInfo(makeEngine(module));
  for (let n = 0; n < 20; n++) {
    withInfo(q, k, v, { dim: 2, heads: 1 + (n % 2), causal: n % 3 === 0, method: 'top-k', topK: 1 + (n % 4) });
    assert.throws(
      () => withInfo(q, k, v, { dim: 2, kernel: 'uniform', bandwidth: 1e-3, empty: 'error', method: 'top-k', topK: 2 }),
      KernelAttentionError,
    );
  }
  assert.equal(live.size, 0);
  assert.equal(stats.badFrees, 0, 'free of a pointer not allocated');
});
