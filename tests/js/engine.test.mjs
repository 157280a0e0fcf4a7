// engine.js, the one caller of the module: its kernel table (read from the core's kernel/traits.h) says what the core
// itself accepts, checked by calling the core's entries directly with every kernel; the enums and limits cross as
// names and numbers; and no other file of web/src names the module's functions or its heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import createKernelAttention from '../../web/dist/kernel_attention.mjs';
import { makeEngine } from '../../web/src/engine.js';
import { fitOptions } from '../../web/src/sample.js';
import { mulberry32, randomFloat32 } from './reference.mjs';

// Made here without the loader, which reads the .wasm in Node (web/src/locate.js): given its bytes.
const module = await createKernelAttention({
  wasmBinary: readFileSync(new URL('../../web/dist/kernel_attention.wasm', import.meta.url)),
});
const engine = makeEngine(module);

const KERNELS = ['softmax', 'gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'];

test('the kernel table lists the kernels the API documents, in the core order, once per module', () => {
  assert.deepEqual(
    engine.kernels.map((k) => k.name),
    KERNELS,
  );
  assert.equal(engine.kernels.length, module.kernelCount);
  assert.equal(makeEngine(module), engine, 'one engine per module');
  for (const name of KERNELS) assert.equal(engine.kernel(name).name, name);
  assert.equal(engine.kernel('box'), undefined);
  assert.deepEqual(
    engine.kernels.filter((k) => !k.distance).map((k) => k.name),
    ['softmax'],
  );
  assert.deepEqual(
    engine.kernels.filter((k) => k.compact).map((k) => k.name),
    ['epanechnikov', 'tricube', 'uniform'],
  );
  assert.deepEqual(engine.emptyPolicies, ['nan', 'zero', 'nearest', 'error']);
  assert.deepEqual(engine.estimators, ['nadaraya-watson', 'local-linear', 'local-quadratic']); // degrees 0, 1, 2
  assert.deepEqual(engine.samplings, ['kmeans++', 'uniform']);
  assert.deepEqual(engine.selections, ['cv', 'aicc', 'scott', 'silverman']);
});

test('the limits are the core constants the option messages quote', () => {
  assert.deepEqual(
    { ...engine.limits },
    {
      maxFeatures: 8192,
      maxLandmarks: 1024,
      sparseMaxDims: 3,
      maxGridDims: 2,
      queryBlock: 16,
      unshardedRows: 64,
    },
  );
});

test('sparseReach is where each kernel falls to the tolerance (closed forms in float64)', () => {
  for (const t of [1e-1, 1e-3, 1e-8]) {
    const want = {
      gaussian: Math.sqrt(-2 * Math.log(t)),
      laplacian: -Math.log(t),
      cauchy: Math.sqrt(1 / t - 1),
      epanechnikov: 1,
      tricube: 1,
      uniform: 1,
    };
    for (const [kernel, reach] of Object.entries(want)) {
      const got = engine.sparseReach(kernel, t);
      assert.ok(Math.abs(got - reach) <= 1e-12 * reach, `${kernel} at ${t}: ${got} against ${reach}`);
      // the weight there, by the kernel's own formula, is the tolerance (compact kernels: the edge of the support)
      if (kernel === 'gaussian') assert.ok(Math.abs(Math.exp((-got * got) / 2) - t) < 1e-12);
      if (kernel === 'laplacian') assert.ok(Math.abs(Math.exp(-got) - t) < 1e-12);
      if (kernel === 'cauchy') assert.ok(Math.abs(1 / (1 + got * got) - t) < 1e-12);
    }
  }
});

// One small problem through each core entry with each kernel, bypassing the JS validation: the table's answer must be
// the core's (an entry that refuses a kernel returns BadArgument; one that serves it returns Ok).
function run(entry, kernel) {
  const rand = mulberry32(7);
  const [I, J, M, D] = [12, 40, 2, 3];
  const [q, k, v] = [randomFloat32(rand, I * M), randomFloat32(rand, J * M), randomFloat32(rand, J * D)];
  return engine.withHeap((heap) => {
    const options = {
      kernel,
      scale: 1,
      bandwidth: heap.f32([0.8, 0.8]),
      heads: 1,
      causal: false,
      leaveOneOut: false,
      keyPadding: 0,
      generalMask: 0,
      queryGroups: 0,
      keyGroups: 0,
      empty: 'zero',
    };
    const [qp, kp, vp] = [heap.f32(q), heap.f32(k), heap.f32(v)];
    const out = heap.alloc(I * D * 4);
    const call = { q: qp, k: kp, v: vp, out, I, J, M, D, options };
    const approximation = { tolerance: 0.05, seed: 1, count: 16, sampling: 'kmeans++' };
    switch (entry) {
      case 'randomFeatures':
        return engine.randomFeaturesAttention({ ...call, approximation }).status;
      case 'nystrom':
        return engine.nystromAttention({ ...call, approximation }).status;
      case 'sparse':
        return engine.sparseAttention({ ...call, tolerance: 1e-3, threads: 1 }).status;
      case 'gradient': {
        const [dq, dk, dv, dTheta] = [
          heap.alloc(I * M * 4),
          heap.alloc(J * M * 4),
          heap.alloc(J * D * 4),
          heap.alloc(M * 4),
        ];
        const dOut = heap.f32(randomFloat32(rand, I * D));
        return engine.attentionGradients({ ...call, dOut, dq, dk, dv, dTheta, threads: 1 }).status;
      }
      case 'grid': {
        // 1-D: a sample of 2,000 points, where a grid pays for every kernel that has one.
        const x = heap.f32(randomFloat32(rand, 2000));
        const fit = fitOptions({
          kernel,
          estimator: 'nadaraya-watson',
          bandwidth: heap.f32([0.05]),
          threads: 1,
          tolerance: 1e-3,
        });
        return engine.gridNodes({ x, n: 2000, dim: 1, options: fit }).nodes > 0 ? 'Ok' : 'BadArgument';
      }
      default:
        throw new Error(entry);
    }
  });
}

for (const entry of ['randomFeatures', 'nystrom', 'sparse', 'gradient', 'grid']) {
  test(`the table's '${entry}' is what the core's entry accepts, kernel by kernel`, () => {
    for (const traits of engine.kernels) {
      if (entry === 'grid' && !traits.distance) continue; // a regression kernel property: softmax has no bandwidth
      const status = run(entry, traits.name);
      assert.equal(status, traits[entry] ? 'Ok' : 'BadArgument', `${entry} with ${traits.name}`);
    }
  });
}

test('statuses come back as their names, and rules and scores cross as names', () => {
  const rand = mulberry32(3);
  const x = randomFloat32(rand, 50);
  engine.withHeap((heap) => {
    const h = heap.alloc(8);
    assert.deepEqual(engine.ruleOfThumb({ x: heap.f32(x), n: 50, dim: 1, rule: 'silverman', h }), { status: 'Ok' });
    const silverman = heap.getF64(h);
    assert.deepEqual(engine.ruleOfThumb({ x: heap.f32(x), n: 50, dim: 1, rule: 'scott', h }), { status: 'Ok' });
    assert.notEqual(heap.getF64(h), silverman, 'the two rules differ on this sample');
    assert.deepEqual(engine.ruleOfThumb({ x: heap.f32(x), n: 0, dim: 1, rule: 'scott', h }), { status: 'BadShape' });
  });
});

test('only engine.js and heap.js name the functions or the heap of the module (loader.js only creates it)', () => {
  const dir = fileURLToPath(new URL('../../web/src/', import.meta.url));
  const touching = readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .filter((f) => /\bmodule\._|HEAP/.test(readFileSync(dir + f, 'utf8')));
  assert.deepEqual(touching.sort(), ['engine.js', 'heap.js']);
});
