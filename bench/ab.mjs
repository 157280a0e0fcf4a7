// Interleaved A/B of the exact engine through the public API: two copies of web/src (each importing its own
// web/dist), one thread each, attention 4,096² (M = D = 64) and 1-D Gaussian Nadaraya–Watson 10⁴ × 10⁴, the two
// copies called alternately so that the host's drifting load falls on both; prints the medians, their ratio and
// whether the outputs are bit-identical.
//   node bench/ab.mjs <reference web/src> [<web/src under test, default this checkout's>] [rounds, default 11]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { attentionCase, regressionCase } from './workloads.mjs';

const [refDir, testDir = new URL('../web/src', import.meta.url).pathname, rounds = '11'] = process.argv.slice(2);
if (!refDir) {
  console.error('usage: node bench/ab.mjs <reference web/src> [<web/src under test>] [rounds]');
  process.exit(2);
}
const load = async (dir) => (await import(pathToFileURL(resolve(dir, 'index.js')).href)).init({ threads: 1 });
const [reference, tested] = [await load(refDir), await load(testDir)];
const call = (ka, c) =>
  c.kind === 'nw'
    ? ka.attention(c.q, c.k, c.v, { dim: 1, kernel: 'gaussian', bandwidth: c.h, method: 'exact' })
    : ka.attention(c.q, c.k, c.v, { dim: c.M, scale: c.scale, method: 'exact' });
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
const bytes = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

for (const c of [attentionCase(4096), regressionCase(1e4)]) {
  const same = bytes(call(reference, c)).equals(bytes(call(tested, c)));
  const t = { reference: [], tested: [] };
  for (let r = 0; r < Number(rounds); r++) {
    const order =
      r % 2
        ? [
            ['tested', tested],
            ['reference', reference],
          ]
        : [
            ['reference', reference],
            ['tested', tested],
          ];
    for (const [name, ka] of order) {
      const t0 = performance.now();
      call(ka, c);
      t[name].push(performance.now() - t0);
    }
  }
  const [a, b] = [median(t.reference), median(t.tested)];
  console.log(
    `${c.id}: bit-identical ${same}; median reference ${a.toFixed(1)} ms, tested ${b.toFixed(1)} ms, ` +
      `tested/reference ${(b / a).toFixed(3)}`,
  );
}
