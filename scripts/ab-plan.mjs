// Runs a matrix of calls whose method 'auto' decides (attention with every kernel at sizes, dimensions, bandwidths and
// tolerances around the sparse thresholds; regression models, CV scores and selections at sample sizes around the
// grid threshold) on two copies of web/src, each importing its own web/dist, and compares the method that ran and
// every output byte. `reason` (what the core's plan says) is left out: a reference from before plan.h has none.
//   node scripts/ab-plan.mjs <web/src of the reference> [<web/src under test, default this checkout's>]
// Single-thread builds. Exit status 1 on any difference.
import { load, random, readDirs } from './ab-common.mjs';

const [refDir, testDir] = readDirs('ab-plan.mjs');

function cases() {
  const list = [];
  const add = (name, run) => list.push([name, run]);
  const kernels = ['softmax', 'gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'];
  // I·J around 2^20 pairs (the least 'auto' runs sparse at); keys in [-1, 1]^M, so a bandwidth h puts about
  // (reach·h)^M of them in reach: 0.02 to 0.3 straddle the 15 % share in 1-D to 3-D.
  const shapes = [
    [1023, 1024],
    [1024, 1024],
    [600, 4000],
    [2048, 2048],
  ];
  for (const kernel of kernels) {
    for (const [I, J] of shapes) {
      for (const dim of [1, 2, 3, 4]) {
        const q = random(I * dim, I + dim);
        const k = random(J * dim, J + dim + 7);
        const v = random(J * 2, J + 3);
        for (const h of kernel === 'softmax' ? [null] : [0.02, 0.1, 0.3]) {
          for (const tolerance of [undefined, 1e-2, 1e-5]) {
            const o = {
              dim,
              kernel,
              ...(h === null ? {} : { bandwidth: h }),
              ...(tolerance === undefined ? {} : { tolerance }),
            };
            add(`${kernel} ${I}×${J} dim ${dim} h ${h} tol ${tolerance}`, (a) => a.attentionWithInfo(q, k, v, o));
          }
        }
        if (kernel === 'gaussian' && dim === 4 && I === 2048) {
          const o = { dim, kernel, bandwidth: 0.05 };
          add(`${kernel} ${I}×${J} heads 2`, (a) => a.attentionWithInfo(q, k, v, { ...o, heads: 2 }));
          add(`${kernel} ${I}×${J} heads 4`, (a) => a.attentionWithInfo(q, k, v, { ...o, heads: 4 }));
        }
        if (kernel === 'gaussian' && dim === 2 && I === J) {
          const o = { dim, kernel, bandwidth: 0.02 };
          add(`${kernel} ${I}×${J} causal`, (a) => a.attentionWithInfo(q, k, v, { ...o, causal: true }));
          add(`${kernel} ${I}×${J} loo`, (a) => a.attentionWithInfo(q, k, v, { ...o, mask: 'loo' }));
          const groups = {
            queries: Int32Array.from({ length: I }, (_, i) => i % 3),
            keys: Int32Array.from({ length: J }, (_, j) => j % 3),
          };
          add(`${kernel} ${I}×${J} groups`, (a) => a.attentionWithInfo(q, k, v, { ...o, groups }));
          add(`${kernel} ${I}×${J} key padding`, (a) =>
            a.attentionWithInfo(q, k, v, { ...o, mask: Uint8Array.from({ length: J }, (_, j) => j % 5 === 0) }),
          );
        }
      }
    }
  }
  // Regression around 20,000 points (the least 'auto' bins), with a fixed bandwidth so each case costs one fit.
  for (const n of [19999, 20000]) {
    for (const dim of [1, 2, 3]) {
      const x = random(n * dim, n + dim, 2);
      const y = Float32Array.from({ length: n }, (_, i) => Math.sin(x[i * dim]) + 0.1 * Math.cos(37 * i));
      const xq = random(30 * dim, 5 + dim, 2);
      for (const kernel of ['gaussian', 'epanechnikov', 'cauchy']) {
        for (const bandwidth of dim === 1 ? [0.05, 1e-5] : [0.3]) {
          add(`kernelRegression n ${n} dim ${dim} ${kernel} h ${bandwidth}`, (a) => {
            const m = a.kernelRegression(x, y, { dim, kernel, bandwidth, estimator: 'nadaraya-watson' });
            try {
              return {
                method: m.method,
                edf: m.effectiveDegreesOfFreedom,
                sigma2: m.residualVariance,
                predict: m.predict(xq),
              };
            } finally {
              m.dispose();
            }
          });
        }
        add(`cvScore n ${n} dim ${dim} ${kernel}`, (a) =>
          a.cvScore(x, y, { dim, kernel, estimator: 'nadaraya-watson', bandwidth: 0.3 }),
        );
      }
      if (dim === 1) {
        add(`selectBandwidth scott n ${n}`, (a) =>
          a.selectBandwidth(x, y, { dim, estimator: 'nadaraya-watson', method: 'scott' }),
        );
        add(`selectBandwidth aicc-free rule silverman n ${n}`, (a) =>
          a.selectBandwidth(x, y, { dim, estimator: 'nadaraya-watson', method: 'silverman', kernel: 'epanechnikov' }),
        );
      }
    }
  }
  return list;
}

/** Bytes of every typed array and the value of everything else but `reason`, in a stable order. */
function flatten(value, path = '', out = []) {
  if (ArrayBuffer.isView(value))
    out.push([
      path,
      value.constructor.name,
      Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex'),
    ]);
  else if (typeof value === 'function') return out;
  else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value).sort()) if (key !== 'reason') flatten(value[key], `${path}.${key}`, out);
  } else out.push([path, Object.is(value, -0) ? '-0' : String(value)]);
  return out;
}

async function outcome(api, run) {
  try {
    const value = await run(api);
    return { method: value.approximation ?? value.method, bytes: JSON.stringify(flatten(value)) };
  } catch (e) {
    return {
      method: 'error',
      bytes: JSON.stringify({ error: e.name, code: e.code, argument: e.argument, message: e.message }),
    };
  }
}

const [ref, test] = [await load(refDir), await load(testDir)];
const [a, b] = [await ref.init({ threads: 1 }), await test.init({ threads: 1 })];
let differ = 0;
let total = 0;
const methods = {};
for (const [name, run] of cases()) {
  const [x, y] = [await outcome(a, run), await outcome(b, run)];
  total++;
  methods[x.method] = (methods[x.method] ?? 0) + 1;
  if (x.method !== y.method || x.bytes !== y.bytes) {
    differ++;
    console.log(
      `DIFFERS: ${name}\n  reference: ${x.method} ${x.bytes.slice(0, 200)}\n  tested:    ${y.method} ${y.bytes.slice(0, 200)}`,
    );
  }
}
console.log(`methods in the reference: ${JSON.stringify(methods)}`);
console.log(`${total - differ} of ${total} cases identical (method and bytes)`);
process.exit(differ ? 1 : 0);
