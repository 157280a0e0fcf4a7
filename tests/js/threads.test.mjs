// The pthreads build in Node: outputs are byte-identical for 1 (the single-thread module), 2 and 4 threads (attention,
// bandwidth selection, span fits, loess); init() validates `threads`, caches one API per build and thread count, and
// a script using threads exits by itself.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { init, KernelAttentionError } from '../../web/src/index.js';
import { mulberry32, randomFloat32 } from './reference.mjs';

// Should anything keep this process alive once the tests are done (it would hang the run), fail it instead.
after(() => {
  setTimeout(() => {
    console.error('threads.test.mjs: Node is still running 20 s after the last test (pool workers not unref()ed?)');
    process.exit(1);
  }, 20_000).unref();
});

const THREADS = [1, 2, 4];
const apis = await Promise.all(THREADS.map((threads) => init({ threads })));
const INDEX = fileURLToPath(new URL('../../web/src/index.js', import.meta.url));

/** Asserts that every API gives the same bytes for fn(api) (a Float32Array, a number or a plain object of them). */
function sameBytes(what, fn) {
  const bytes = (r) => {
    if (ArrayBuffer.isView(r)) return Buffer.from(r.buffer, r.byteOffset, r.byteLength);
    if (typeof r === 'number') return Buffer.from(Float64Array.of(r).buffer);
    return Buffer.concat(
      Object.keys(r)
        .sort()
        .map((key) => bytes(r[key])),
    );
  };
  const first = bytes(fn(apis[0]));
  assert.ok(first.length > 0, `${what}: empty result`);
  for (let n = 1; n < apis.length; n++) {
    const got = bytes(fn(apis[n]));
    assert.ok(first.equals(got), `${what}: ${THREADS[n]} threads differ from 1 thread`);
  }
}

test('init({ threads }) picks the build: 1 is the single-thread module, more is the pthreads one', () => {
  assert.deepEqual(
    apis.map((ka) => [ka.build, ka.threads]),
    [
      ['single', 1],
      ['threads', 2],
      ['threads', 4],
    ],
  );
  assert.equal(apis[1].simd, apis[0].simd);
});

test('one API object per build and thread count; the default is the pthreads build in Node', async () => {
  assert.equal(await init({ threads: 2 }), apis[1]);
  assert.equal(await init({ threads: 1 }), apis[0]);
  assert.notEqual(apis[1], apis[2]);
  const auto = await init();
  assert.equal(await init({ threads: 'auto' }), auto);
  const cores = (await import('node:os')).availableParallelism();
  assert.equal(auto.build, cores > 1 ? 'threads' : 'single');
  assert.equal(auto.threads, Math.min(cores, 16));
  if (cores > 1) assert.equal(await init({ threads: auto.threads }), auto);
});

test('attention: bytes do not depend on the thread count', () => {
  const rand = mulberry32(7);
  // Wide path (softmax, 64 dims), several query blocks per thread, with a causal mask.
  const I = 300;
  const q = randomFloat32(rand, I * 64);
  const k = randomFloat32(rand, 257 * 64);
  const v = randomFloat32(rand, 257 * 64);
  sameBytes('softmax M=D=64', (ka) => ka.attention(q, k, v, { dim: 64 }));
  const x = randomFloat32(rand, I * 64);
  sameBytes('softmax causal, 4 heads', (ka) => ka.attention(x, x, x, { dim: 64, heads: 4, causal: true }));
  // Narrow path: 1-D Gaussian regression, and compact kernels with empty rows resolved to the nearest key.
  const xs = randomFloat32(rand, 2000);
  const ys = randomFloat32(rand, 2000);
  const at = randomFloat32(rand, 1000, -1.2, 1.2);
  sameBytes('1-D gaussian', (ka) => ka.attention(at, xs, ys, { dim: 1, kernel: 'gaussian', bandwidth: 0.05 }));
  sameBytes('1-D epanechnikov, nearest', (ka) =>
    ka.attention(at, xs.subarray(0, 40), ys.subarray(0, 40), {
      dim: 1,
      kernel: 'epanechnikov',
      bandwidth: 0.01,
      empty: 'nearest',
    }),
  );
  const q3 = randomFloat32(rand, 1000 * 3);
  const mask = Uint8Array.from({ length: 1000 }, () => (rand() < 0.2 ? 1 : 0));
  sameBytes('3-D laplacian, key padding', (ka) =>
    ka.attention(q3, q3, ys.subarray(0, 2000), { dim: 3, kernel: 'laplacian', bandwidth: [0.3, 0.5, 0.7], mask }),
  );
  // 'auto' (the default) runs certified sparsity on this one (I·J ≥ 2²⁰, few keys in reach), on every thread.
  const far = randomFloat32(rand, 1024 * 2, -1, 1);
  const sparse = (ka) =>
    ka.attentionWithInfo(far, far, ys.subarray(0, 1024), { dim: 2, kernel: 'gaussian', bandwidth: 0.01 });
  assert.equal(sparse(apis[2]).method, 'sparse');
  sameBytes('2-D gaussian by auto (sparse)', (ka) => sparse(ka).output);
  sameBytes('attentionState', (ka) => {
    const { max, sum, acc } = ka.attentionState(q, k, v, { dim: 64, heads: 2 });
    return { max, sum, acc };
  });
});

// Sizes: the engine starts a thread per 2^20 multiply-adds (n² · (dims + D) here), so these run on 2 and 4 threads.
test('selectBandwidth and cvScore: bytes do not depend on the thread count', () => {
  const rand = mulberry32(11);
  const x = randomFloat32(rand, 1500, 0, 4);
  const y = Float32Array.from(x, (xi) => Math.sin(2 * xi) + 0.3 * (rand() - 0.5));
  sameBytes('cvScore', (ka) => ka.cvScore(x, y, { dim: 1, bandwidth: 0.2 }));
  sameBytes('selectBandwidth cv', (ka) => {
    const r = ka.selectBandwidth(x, y, { dim: 1 });
    return { bandwidth: r.bandwidth, score: r.score };
  });
  const x2 = randomFloat32(rand, 1800, -1, 1); // 900² · 3 multiply-adds a pass: up to 2 threads
  const y2 = randomFloat32(rand, 900);
  sameBytes('selectBandwidth cv per dimension', (ka) => {
    const r = ka.selectBandwidth(x2, y2, { dim: 2, perDimension: true });
    return { bandwidth: r.bandwidth, score: r.score };
  });
});

// 1-D span fits over windows of 1,800 keys sum from block moments (engine/window_blocks.h), the model's summary with
// the squared weights' sums too; loess fits its vertices, the surface at the data and the direct surface's points
// in runs over the threads.
test('span fits and loess: bytes do not depend on the thread count', () => {
  const rand = mulberry32(13);
  const x = Float64Array.from({ length: 6000 }, () => 10 * rand());
  const y = Float64Array.from(x, (v) => Math.sin(v) + 0.3 * (rand() - 0.5));
  const xq = Float64Array.from({ length: 500 }, () => 11 * rand() - 0.5);
  for (const estimator of ['nadaraya-watson', 'local-linear']) {
    sameBytes(`span 0.3 ${estimator}`, (ka) => {
      const model = ka.kernelRegression(x, y, { dim: 1, kernel: 'tricube', estimator, bandwidth: { span: 0.3 } });
      try {
        const { mean, lower } = model.predictInterval(xq);
        return { mean, lower, edf: model.effectiveDegreesOfFreedom, sigma2: model.residualVariance };
      } finally {
        model.dispose();
      }
    });
  }
  const inside = xq.map((v) => Math.min(Math.max(v, 0.1), 9.9));
  for (const surface of ['direct', 'interpolate']) {
    for (const [degree, family] of [
      [1, 'gaussian'],
      [2, 'symmetric'],
    ]) {
      sameBytes(`loess ${surface} degree ${degree} ${family}`, (ka) => {
        const model = ka.loess(x, y, { span: 0.3, degree, family, surface });
        try {
          const { mean, stderr } = model.predictInterval(inside);
          return { fitted: model.fitted, mean, stderr, enp: model.enp, scale: model.residualScale };
        } finally {
          model.dispose();
        }
      });
    }
  }
});

test('a bad `threads` is a BadArgument naming options.threads', async () => {
  for (const threads of [0, -1, 1.5, 65, NaN, '2', 'all', null, true, [2]]) {
    await assert.rejects(
      init({ threads }),
      (error) => {
        assert.ok(error instanceof KernelAttentionError);
        assert.equal(error.code, 'BadArgument');
        assert.equal(error.argument, 'options.threads');
        assert.match(error.message, /'auto' or an integer from 1 to 64/);
        return true;
      },
      `threads: ${String(threads)}`,
    );
  }
  await assert.rejects(init({ thread: 2 }), { code: 'BadArgument', argument: 'options.thread' });
});

/** Runs an ES module source in a fresh Node; resolves with its exit code, stdout, stderr and wall time. */
function runScript(source, timeout = 30_000) {
  return new Promise((resolve) => {
    const started = Date.now();
    execFile(
      process.execPath,
      ['--input-type=module', '-e', source],
      { timeout, killSignal: 'SIGKILL' },
      (error, stdout, stderr) =>
        resolve({ code: error ? (error.killed ? 'killed' : error.code) : 0, stdout, stderr, ms: Date.now() - started }),
    );
  });
}

test('a script that computes on 2 threads exits by itself (idle pool workers do not keep Node alive)', async () => {
  const { code, stdout, stderr, ms } = await runScript(`
    import { init } from ${JSON.stringify(INDEX)};
    const ka = await init({ threads: 2 });
    const x = Float32Array.from({ length: 256 * 64 }, (_, i) => Math.sin(i));  // 256² · 128 multiply-adds: 2 threads
    const out = ka.attention(x, x, x, { dim: 64 });
    const cv = ka.cvScore(x, x, { dim: 1, bandwidth: 0.5 });
    console.log(ka.build, ka.threads, out.length, Number.isFinite(cv));
  `);
  assert.equal(code, 0, `exit code ${code} after ${ms} ms; stderr: ${stderr.slice(0, 2000)}`);
  assert.equal(stdout.trim(), 'threads 2 16384 true');
});

test('without SharedArrayBuffer, threads > 1 is Unsupported and the default falls back to one thread', async () => {
  const { code, stdout, stderr } = await runScript(`
    delete globalThis.SharedArrayBuffer;
    const { init } = await import(${JSON.stringify(INDEX)});
    const auto = await init();
    const error = await init({ threads: 2 }).then(() => null, (e) => e);
    console.log(auto.build, auto.threads, error?.code, error?.argument, /SharedArrayBuffer/.test(error?.message));
  `);
  assert.equal(code, 0, `stderr: ${stderr.slice(0, 2000)}`);
  assert.equal(stdout.trim(), 'single 1 Unsupported options.threads true');
});
