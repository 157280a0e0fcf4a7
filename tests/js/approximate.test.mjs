// attention() by random features and Nyström through the public API, against the independent float64 reference:
// the error shrinks as features / landmarks grow, attentionWithInfo's errorEstimate tracks the measured error, seeds fix the
// bytes, causal runs match exact causal attention; bad options are typed errors naming the option, inputs stay
// untouched, and every call frees what it allocated.
import { test } from 'node:test';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import { makeEngine } from '../../web/src/engine.js';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { makeAttention } from '../../web/src/attention.js';
import { initOptions } from './build.mjs';
import { countedModule } from './counted.mjs';
import { maxAbsDiff, mulberry32, randomFloat32, referenceAttention } from './reference.mjs';

const ka = await init(initOptions);

function problem({ I, J, dim, D, seed }) {
  const rand = mulberry32(seed);
  return { q: randomFloat32(rand, I * dim), k: randomFloat32(rand, J * dim), v: randomFloat32(rand, J * D) };
}

/** RMS of got − want relative to the range of the values: the units of errorEstimate. */
function relativeRms(got, want, values) {
  let sum = 0;
  for (let n = 0; n < want.length; n++) sum += (got[n] - want[n]) ** 2;
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
  return Math.sqrt(sum / want.length) / (hi - lo);
}

test('random features: the error shrinks as the features grow and errorEstimate tracks it (softmax, causal too)', () => {
  const { q, k, v } = problem({ I: 120, J: 200, dim: 16, D: 4, seed: 1 });
  for (const causal of [false, true]) {
    const base = { dim: 16, causal };
    const want = referenceAttention(q, k, v, base);
    let previous = Infinity;
    for (const features of [16, 256, 4096]) {
      let mean = 0;
      for (const seed of [1, 2, 3]) {
        const info = ka.attentionWithInfo(q, k, v, { ...base, method: 'random-features', features, seed });
        const out = info.output;
        const err = relativeRms(out, want, v);
        assert.equal(info.method, 'random-features');
        assert.equal(info.features, features);
        assert.equal(info.landmarks, undefined);
        assert.equal(info.exactRows, 0);
        assert.ok(
          info.errorEstimate > 0.5 * err && info.errorEstimate < 2 * err,
          `causal ${causal}, ${features} features, seed ${seed}: estimate ${info.errorEstimate} vs error ${err}`,
        );
        mean += err / 3;
      }
      assert.ok(mean < previous / 1.5, `causal ${causal}: ${features} features, mean error ${mean} after ${previous}`);
      previous = mean;
    }
  }
});

test('random features serve the Gaussian kernel with heads and per-dimension bandwidths; the tolerance sizes them', () => {
  const { q, k, v } = problem({ I: 80, J: 150, dim: 8, D: 4, seed: 2 });
  const base = { dim: 8, heads: 2, kernel: 'gaussian', bandwidth: [1.2, 1.5, 1.3, 1.6, 1.4, 1.1, 1.5, 1.2] };
  const want = referenceAttention(q, k, v, base);
  const loose = ka.attentionWithInfo(q, k, v, { ...base, method: 'random-features', tolerance: 0.2 });
  const tight = ka.attentionWithInfo(q, k, v, { ...base, method: 'random-features', tolerance: 2e-3 });
  const out = tight.output;
  assert.deepEqual(out, ka.attention(q, k, v, { ...base, method: 'random-features', tolerance: 2e-3 }));
  assert.equal(loose.features, 64);
  assert.ok(tight.features > 64, `tolerance 2e-3 chose ${tight.features} features`);
  const err = relativeRms(out, want, v);
  assert.ok(err < 4e-3, `error ${err} at tolerance 2e-3 (estimate ${tight.errorEstimate})`);
  assert.ok(
    tight.errorEstimate > 0.5 * err && tight.errorEstimate < 2 * err,
    `estimate ${tight.errorEstimate} vs ${err}`,
  );
});

test('random Fourier features serve the Laplacian and Cauchy kernels: the error shrinks as the features grow', () => {
  const { q, k, v } = problem({ I: 60, J: 200, dim: 2, D: 2, seed: 4 });
  for (const kernel of ['laplacian', 'cauchy']) {
    const base = { dim: 2, kernel, bandwidth: [0.4, 0.6] };
    const want = referenceAttention(q, k, v, base);
    const errors = [32, 512, 8192].map((features) => {
      const run = ka.attentionWithInfo(q, k, v, { ...base, method: 'random-features', features, seed: 5 });
      assert.equal(run.features, features);
      const err = relativeRms(run.output, want, v);
      assert.ok(
        run.errorEstimate >= 0.5 * err,
        `${kernel}, ${features} features: estimate ${run.errorEstimate} vs error ${err}`,
      );
      return err;
    });
    // 16× the features each step: a quarter of the error in the limit (1/√m).
    assert.ok(errors[1] < errors[0] / 2 && errors[2] < errors[1] / 2, `${kernel}: ${errors}`);
    assert.ok(errors[2] < 5e-3, `${kernel}: ${errors}`);
  }
});

test('Nyström: the error shrinks as the landmarks grow, the held-out estimate tracks it, every kernel it takes', () => {
  const { q, k, v } = problem({ I: 150, J: 300, dim: 4, D: 3, seed: 3 });
  for (const [kernel, extra] of [
    ['gaussian', { bandwidth: 0.8 }],
    ['softmax', {}],
    ['laplacian', { bandwidth: 1.5 }],
    ['cauchy', { bandwidth: 0.8 }],
  ]) {
    for (const causal of [false, true]) {
      const base = { dim: 4, kernel, causal, ...extra };
      const want = referenceAttention(q, k, v, base);
      const errors = [8, 32, 128].map((landmarks) => {
        const info = ka.attentionWithInfo(q, k, v, { ...base, method: 'nystrom', landmarks });
        const out = info.output;
        const err = relativeRms(out, want, v);
        assert.equal(info.method, 'nystrom');
        assert.equal(info.landmarks, landmarks);
        assert.equal(info.features, undefined);
        assert.ok(
          info.errorEstimate > 0.3 * err && info.errorEstimate < 3 * err + 1e-6,
          `${kernel} causal ${causal}, ${landmarks} landmarks: estimate ${info.errorEstimate} vs error ${err}`,
        );
        return err;
      });
      assert.ok(errors[2] < errors[0] / 3, `${kernel} causal ${causal}: errors ${errors}`);
    }
  }
});

test('Nyström from the tolerance, and with uniform landmarks', () => {
  const { q, k, v } = problem({ I: 100, J: 400, dim: 3, D: 2, seed: 4 });
  const base = { dim: 3, kernel: 'gaussian', bandwidth: 0.7 };
  const want = referenceAttention(q, k, v, base);
  const info = ka.attentionWithInfo(q, k, v, { ...base, method: 'nystrom', tolerance: 1e-4 });
  const out = info.output;
  assert.ok(info.errorEstimate <= 1e-4, `estimate ${info.errorEstimate}`);
  assert.ok(relativeRms(out, want, v) < 3e-4, `error ${relativeRms(out, want, v)} with ${info.landmarks} landmarks`);
  const uniform = ka.attention(q, k, v, { ...base, method: 'nystrom', landmarks: 64, sampling: 'uniform' });
  assert.ok(relativeRms(uniform, want, v) < 0.02);
});

test('a seed fixes the bytes; another seed gives others; the default seed is 0', () => {
  const { q, k, v } = problem({ I: 30, J: 50, dim: 8, D: 2, seed: 5 });
  for (const method of ['random-features', 'nystrom']) {
    const options = { dim: 8, heads: 2, causal: true, method, tolerance: 0.05 };
    const a = ka.attention(q, k, v, { ...options, seed: 9 });
    assert.deepEqual(a, ka.attention(q, k, v, { ...options, seed: 9 }));
    assert.notDeepEqual(a, ka.attention(q, k, v, { ...options, seed: 10 }));
    assert.deepEqual(ka.attention(q, k, v, options), ka.attention(q, k, v, { ...options, seed: 0 }));
  }
});

test("method 'exact' is the exact engine and reports errorEstimate 0, as the default does on a small call", () => {
  const { q, k, v } = problem({ I: 10, J: 20, dim: 4, D: 2, seed: 6 });
  const exact = ka.attention(q, k, v, { dim: 4 });
  assert.ok(maxAbsDiff(exact, referenceAttention(q, k, v, { dim: 4 })) < 1e-5);
  assert.deepEqual(exact, ka.attention(q, k, v, { dim: 4, method: 'exact', tolerance: 0.5, seed: 3 }));
  const { reason, ...info } = ka.attentionWithInfo(q, k, v, { dim: 4 });
  assert.match(reason, /^exact: softmax/);
  assert.deepEqual(info, { output: exact, method: 'exact', errorEstimate: 0, exactRows: 0, warnings: [] });
});

test('bad method options are typed errors naming the option; inputs are left as they were', () => {
  const { q, k, v } = problem({ I: 4, J: 6, dim: 2, D: 1, seed: 7 });
  const copies = [q.slice(), k.slice(), v.slice()];
  const cases = [
    [{ method: 'auto', features: 8 }, 'options.features'],
    [{ method: 'performer' }, 'options.method'],
    [{ method: 'random-features', kernel: 'tricube' }, 'options.method'],
    [{ method: 'nystrom', kernel: 'epanechnikov' }, 'options.method'],
    [{ method: 'nystrom', mask: Uint8Array.of(0, 1, 0, 0, 0, 0) }, 'options.mask'],
    [{ method: 'random-features', mask: 'loo' }, 'options.mask', { I: 6 }],
    [{ method: 'nystrom', groups: { queries: [0, 0, 1, 1], keys: [0, 1, 0, 1, 0, 1] } }, 'options.groups'],
    [{ method: 'nystrom', features: 8 }, 'options.features'],
    [{ method: 'random-features', landmarks: 8 }, 'options.landmarks'],
    [{ features: 8 }, 'options.features'],
    [{ method: 'random-features', sampling: 'uniform' }, 'options.sampling'],
    [{ method: 'nystrom', sampling: 'random' }, 'options.sampling'],
    [{ method: 'random-features', features: 0 }, 'options.features'],
    [{ method: 'random-features', features: 8193 }, 'options.features'],
    [{ method: 'random-features', features: 2.5 }, 'options.features'],
    [{ method: 'nystrom', landmarks: 1025 }, 'options.landmarks'],
    [{ method: 'nystrom', tolerance: 0 }, 'options.tolerance'],
    [{ method: 'nystrom', tolerance: 1 }, 'options.tolerance'],
    [{ tolerance: '0.1' }, 'options.tolerance'],
    [{ method: 'nystrom', seed: -1 }, 'options.seed'],
    [{ method: 'nystrom', seed: 2 ** 32 }, 'options.seed'],
    [{ method: 'nystrom', seed: 1.5 }, 'options.seed'],
    [{ method: 'random-features', info: {} }, 'options.info'],
  ];
  for (const [options, argument, shape] of cases) {
    const qq = shape?.I ? randomFloat32(mulberry32(1), 12) : q;
    for (const fn of [ka.attention, ka.attentionWithInfo]) {
      assert.throws(
        () => fn(qq, k, v, { dim: 2, ...options }),
        (error) => {
          assert.ok(error instanceof KernelAttentionError, `${JSON.stringify(options)}: ${error}`);
          assert.equal(error.argument, argument, `${JSON.stringify(options)}: ${error.message}`);
          assert.match(error.code, /^Bad/);
          return true;
        },
      );
    }
  }
  assert.deepEqual([q, k, v], copies);
});

test('approximate calls, successful or refused, leave no allocation outstanding', async () => {
  const { module, live, stats } = await countedModule();
  const attention = makeAttention(makeEngine(module));
  const { q, k, v } = problem({ I: 40, J: 60, dim: 4, D: 2, seed: 8 });
  const before = module.HEAPU8.length;
  for (let n = 0; n < 60; n++) {
    const method = n % 2 ? 'nystrom' : 'random-features';
    attention(q, k, v, { dim: 4, heads: 1 + (n % 2), causal: n % 3 === 0, method, seed: n, tolerance: 0.05 });
    assert.throws(() => attention(q, k, v, { dim: 4, method, kernel: 'uniform' }), KernelAttentionError);
  }
  assert.equal(live.size, 0);
  assert.equal(stats.badFrees, 0, 'free of a pointer not allocated');
  assert.equal(module.HEAPU8.length, before, 'wasm memory grew across small approximate calls: a leak in the core?');
});

test('docs/approximations.md shows examples/approximations.mjs verbatim, and it runs with its estimates near the measured errors', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const example = readFileSync(root + 'examples/approximations.mjs', 'utf8');
  assert.ok(
    readFileSync(root + 'docs/approximations.md', 'utf8').includes('```js\n' + example.trimEnd() + '\n```'),
    'stale copy',
  );
  const output = execFileSync(process.execPath, [root + 'examples/approximations.mjs'], { encoding: 'utf8' });
  const rows = [...output.matchAll(/^(\S+): (\d+) \w+, estimated error (\S+), measured (\S+)$/gm)];
  assert.deepEqual(
    rows.map((r) => r[1]),
    ['random-features', 'nystrom'],
  );
  for (const [, , , estimate, measured] of rows) {
    assert.ok(
      Number(measured) < 1e-2 && Number(estimate) < 3 * Number(measured) && Number(estimate) > Number(measured) / 3,
      output,
    );
  }
});
