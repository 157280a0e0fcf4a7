// Runs representative calls of every public function on two copies of web/src (each importing its own web/dist) and
// compares the results byte for byte, and the errors by code, argument and message: a refactor of the JS layer or the
// bindings must change none of them.
//   node scripts/ab-outputs.mjs <web/src of the reference> [<web/src under test, default this checkout's>]
// The tested copy runs on the single-thread build and on the pthreads build with 2 threads, the reference on the
// single-thread build (results do not depend on the thread count). Exit status 1 on any difference.
import { load, random, readDirs } from './ab-common.mjs';

const [refDir, testDir] = readDirs('ab-outputs.mjs');

// Every case: a name and a function of the API returning a value (or a promise of one).
function cases() {
  const list = [];
  const add = (name, run) => list.push([name, run]);
  const [q, k, v] = [random(40 * 8, 1), random(300 * 8, 2), random(300 * 6, 3)];
  const kernels = ['softmax', 'gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'];
  for (const kernel of kernels) {
    const o = { dim: 8, kernel, ...(kernel === 'softmax' ? {} : { bandwidth: 0.7 }) };
    add(`attention ${kernel}`, (a) => a.attention(q, k, v, o));
    add(`attention ${kernel} heads 2 causal empty zero`, (a) =>
      a.attention(q, k, v, { ...o, heads: 2, causal: true, empty: 'zero' }),
    );
    add(`attention ${kernel} nearest`, (a) =>
      a.attention(q, k, v, { ...o, empty: 'nearest', mask: Uint8Array.from({ length: 300 }, (_, j) => j % 3 === 0) }),
    );
    add(`weights ${kernel}`, (a) => a.weights(q, k, o));
    add(`attentionGradients ${kernel}`, (a) => a.attentionGradients(q, k, v, random(40 * 6, 4), o));
    add(`attentionState ${kernel}`, (a) => a.attentionState(q, k, v, o));
    add(`merge + finalize ${kernel}`, (a) =>
      a.finalizeState(
        a.mergeStates(
          a.attentionState(q, k.subarray(0, 800), v.subarray(0, 600), o),
          a.attentionState(q, k.subarray(800), v.subarray(600), o),
        ),
        { empty: 'zero' },
      ),
    );
    for (const method of ['random-features', 'nystrom', 'sparse', 'top-k', 'auto']) {
      const extra = method === 'top-k' ? { topK: 7 } : {};
      add(`attentionWithInfo ${kernel} ${method}`, (a) =>
        a.attentionWithInfo(q.subarray(0, 40 * 2), k.subarray(0, 300 * 2), v, {
          dim: 2,
          kernel,
          ...(kernel === 'softmax' ? {} : { bandwidth: 0.3 }),
          method,
          ...extra,
        }),
      );
    }
  }
  // Large enough to be cut into chunks (attention) and steps (attentionAsync), with masks that index queries absolutely.
  const [bq, bk, bv] = [random(9000 * 64, 5), random(200 * 64, 6), random(200 * 64, 7)];
  add('attention chunked', (a) => a.attention(bq, bk, bv, { dim: 64 }));
  add('attentionAsync chunked', (a) => a.attentionAsync(bq, bk, bv, { dim: 64 }));
  const [cq, cv] = [random(3000 * 8, 8), random(3000 * 8, 9)];
  const groups = {
    queries: Int32Array.from({ length: 3000 }, (_, i) => i % 5),
    keys: Int32Array.from({ length: 3000 }, (_, j) => j % 7),
  };
  for (const mask of ['causal', 'loo', 'general', 'groups']) {
    const o = { dim: 8, kernel: 'gaussian', bandwidth: 0.4 };
    if (mask === 'causal') o.causal = true;
    if (mask === 'loo') o.mask = 'loo';
    if (mask === 'general') o.mask = Uint8Array.from({ length: 3000 * 3000 }, (_, n) => (n * 2654435761) % 7 === 0);
    if (mask === 'groups') o.groups = groups;
    add(`attention 3000² ${mask}`, (a) => a.attention(cq, cq, cv, o));
    add(`attentionAsync 3000² ${mask}`, (a) => a.attentionAsync(cq, cq, cv, o));
  }
  add('attention 1-D auto (sparse)', (a) =>
    a.attentionWithInfo(random(5000, 10, 50), random(5000, 11, 50), random(5000, 12), {
      dim: 1,
      kernel: 'gaussian',
      bandwidth: 0.5,
    }),
  );
  add('attention 0 queries', (a) => a.attention([], k, v, { dim: 8 }));

  // Regression and bandwidth selection.
  const x = random(400, 20, 3);
  const y = x.map((t, i) => Math.sin(t) + 0.1 * random(1, 100 + i)[0]);
  const x2 = random(600, 21, 2);
  const y2 = Float32Array.from({ length: 300 }, (_, i) => x2[2 * i] * x2[2 * i + 1]);
  const xq = random(50, 22, 3);
  for (const kernel of ['gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform']) {
    for (const estimator of ['nadaraya-watson', 'local-linear']) {
      for (const method of ['cv', 'aicc', 'scott', 'silverman']) {
        add(`selectBandwidth ${kernel} ${estimator} ${method}`, (a) =>
          a.selectBandwidth(x, y, { dim: 1, kernel, estimator, method }),
        );
      }
      add(`cvScore ${kernel} ${estimator}`, (a) => a.cvScore(x, y, { dim: 1, kernel, estimator, bandwidth: 0.4 }));
      add(`kernelRegression ${kernel} ${estimator}`, (a) => {
        const m = a.kernelRegression(x, y, { dim: 1, kernel, estimator, empty: 'nearest' });
        return { ...m, predict: m.predict(xq), interval: m.predictInterval(xq, { level: 0.9 }) };
      });
    }
  }
  add('selectBandwidth 2-D perDimension', (a) =>
    a.selectBandwidth(x2, y2, { dim: 2, estimator: 'nadaraya-watson', perDimension: true }),
  );
  add('selectBandwidth 2-D grid', (a) =>
    a.selectBandwidth(x2, y2, { dim: 2, estimator: 'nadaraya-watson', approximation: 'grid' }),
  );
  add('selectBandwidthAsync 2-D aicc', (a) =>
    a.selectBandwidthAsync(x2, y2, { dim: 2, estimator: 'nadaraya-watson', method: 'aicc', perDimension: true }),
  );
  add('selectBandwidth cv-gradient', (a) => a.selectBandwidth(x2, y2, { dim: 2, method: 'cv-gradient' }));
  add('selectBandwidth cv-gradient full', (a) =>
    a.selectBandwidth(x2, y2, { dim: 2, method: 'cv-gradient', metric: 'full' }),
  );
  add('selectBandwidth weights', (a) =>
    a.selectBandwidth(x, y, { dim: 1, estimator: 'nadaraya-watson', weights: x.map((t) => 1 + t * t) }),
  );
  add('kernelRegression grid', (a) => {
    const m = a.kernelRegression(x, y, { dim: 1, method: 'grid', bandwidth: 0.3 });
    return { method: m.method, predict: m.predict(xq), interval: m.predictInterval(xq) };
  });
  add('kernelRegression 2-D grid', (a) => {
    const m = a.kernelRegression(x2, y2, { dim: 2, method: 'grid' });
    return { method: m.method, bandwidth: m.bandwidth, predict: m.predict(x2.subarray(0, 40)) };
  });
  add('kernelRegression sparse', (a) => {
    const m = a.kernelRegression(x, y, { dim: 1, method: 'sparse', estimator: 'nadaraya-watson', bandwidth: 0.2 });
    return { method: m.method, predict: m.predict(xq), interval: m.predictInterval(xq) };
  });
  // Span bandwidths: 1-D windows point by point (300 points) and from block moments (4,000 points, span 0.5), 2-D.
  const xBig = random(4000, 23, 10);
  const yBig = xBig.map((t, i) => Math.sin(t) + 0.1 * Math.sin(7.3 * i * i));
  for (const [name, xs, ys, dim, options] of [
    ['tricube', x, y, 1, { kernel: 'tricube', bandwidth: { span: 0.3 } }],
    [
      'epanechnikov nadaraya-watson',
      x,
      y,
      1,
      { kernel: 'epanechnikov', estimator: 'nadaraya-watson', bandwidth: { span: 0.45 } },
    ],
    ['gaussian', x, y, 1, { bandwidth: { span: 0.2 } }],
    ['tricube blocks', xBig, yBig, 1, { kernel: 'tricube', bandwidth: { span: 0.5 } }],
    ['tricube robust', x, y, 1, { kernel: 'tricube', bandwidth: { span: 0.6 }, robust: true }],
    ['2-D gaussian', x2, y2, 2, { bandwidth: { span: 0.4 } }],
  ]) {
    add(`kernelRegression span ${name}`, (a) => {
      const m = a.kernelRegression(xs, ys, { dim, ...options });
      const q = dim === 1 ? xq : x2.subarray(0, 40);
      return { ...m, predict: m.predict(q), interval: m.predictInterval(q, { level: 0.9 }) };
    });
  }
  add('kernelRegressionAsync + predictAsync', async (a) => {
    const m = await a.kernelRegressionAsync(x, y, { dim: 1, bandwidth: 'aicc' });
    return { ...m, predict: await m.predictAsync(xq), interval: await m.predictIntervalAsync(xq) };
  });
  add('attentionPooling', (a) => {
    const p = a.attentionPooling({ dim: 8, kernel: 'gaussian', projections: { rank: 3, seed: 4 } });
    const out = p.forward(q, k, v);
    const grads = p.backward(random(40 * 6, 13));
    p.step();
    return { out, grads, parameters: p.parameters, next: p.forward(q, k, v) };
  });
  add('attentionPooling softmax', (a) => {
    const p = a.attentionPooling({ dim: 8, kernel: 'softmax' });
    p.forward(q, k, v);
    p.backward(random(40 * 6, 14));
    p.step();
    return p.parameters;
  });

  // Refusals: the error's code, argument and message.
  const bad = {
    'unknown kernel': (a) => a.attention(q, k, v, { dim: 8, kernel: 'box' }),
    'bandwidth with softmax': (a) => a.attention(q, k, v, { dim: 8, bandwidth: 1 }),
    'scale with gaussian': (a) => a.attention(q, k, v, { dim: 8, kernel: 'gaussian', scale: 1 }),
    'bad empty': (a) => a.attention(q, k, v, { dim: 8, empty: 'none' }),
    'empty error': (a) => a.attention(q, k, v, { dim: 8, kernel: 'uniform', bandwidth: 1e-6, empty: 'error' }),
    'method kernel': (a) => a.attention(q, k, v, { dim: 8, kernel: 'uniform', method: 'nystrom' }),
    'sparse softmax': (a) => a.attention(q, k, v, { dim: 8, method: 'sparse' }),
    'sparse dims': (a) => a.attention(q, k, v, { dim: 8, kernel: 'gaussian', method: 'sparse' }),
    'features too many': (a) => a.attention(q, k, v, { dim: 8, method: 'random-features', features: 10000 }),
    'landmarks too many': (a) => a.attention(q, k, v, { dim: 8, method: 'nystrom', landmarks: 2000 }),
    'bad sampling': (a) => a.attention(q, k, v, { dim: 8, method: 'nystrom', sampling: 'grid' }),
    'gradients uniform': (a) => a.attentionGradients(q, k, v, random(240, 1), { dim: 8, kernel: 'uniform' }),
    'pooling uniform': (a) => a.attentionPooling({ dim: 8, kernel: 'uniform' }),
    'finalize nearest': (a) => a.finalizeState(a.attentionState(q, k, v, { dim: 8 }), { empty: 'nearest' }),
    'regression softmax': (a) => a.kernelRegression(x, y, { dim: 1, kernel: 'softmax' }),
    'regression estimator': (a) => a.kernelRegression(x, y, { dim: 1, estimator: 'nw' }),
    'grid cauchy': (a) => a.kernelRegression(x, y, { dim: 1, kernel: 'cauchy', method: 'grid' }),
    'grid 3-D': (a) => a.cvScore(random(300, 1), random(100, 2), { dim: 3, bandwidth: 1, approximation: 'grid' }),
    'cv-gradient uniform': (a) => a.selectBandwidth(x, y, { dim: 1, kernel: 'uniform', method: 'cv-gradient' }),
    'sparse regression 4-D': (a) =>
      a.kernelRegression(random(400, 1), random(100, 2), { dim: 4, method: 'sparse', estimator: 'nadaraya-watson' }),
  };
  for (const [name, run] of Object.entries(bad)) add(`refuses: ${name}`, run);
  return list;
}

/** Bytes of every typed array and the value of everything else, in a stable order. */
function flatten(value, path = '', out = []) {
  if (ArrayBuffer.isView(value))
    out.push([
      path,
      value.constructor.name,
      Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex'),
    ]);
  else if (typeof value === 'function') return out;
  else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value).sort()) flatten(value[key], `${path}.${key}`, out);
  } else out.push([path, Object.is(value, -0) ? '-0' : String(value)]);
  return out;
}

async function outcome(api, run) {
  try {
    return JSON.stringify(flatten(await run(api)));
  } catch (e) {
    return JSON.stringify({ error: e.name, code: e.code, argument: e.argument, message: e.message });
  }
}

const [ref, test] = [await load(refDir), await load(testDir)];
let differ = 0;
let total = 0;
for (const threads of [1, 2]) {
  const [a, b] = [await ref.init({ threads: 1 }), await test.init({ threads })];
  for (const [name, run] of cases()) {
    const [x, y] = [await outcome(a, run), await outcome(b, run)];
    total++;
    if (x !== y) {
      differ++;
      console.log(
        `DIFFERS (threads ${threads}): ${name}\n  reference: ${x.slice(0, 300)}\n  tested:    ${y.slice(0, 300)}`,
      );
    }
  }
}
console.log(`${total - differ} of ${total} cases identical`);
process.exit(differ ? 1 : 0);
