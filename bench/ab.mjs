// Interleaved A/B of the exact engine through the public API: two copies of web/src (each importing its own
// web/dist), one thread each, attention 4,096² (M = D = 64) and 1-D Gaussian Nadaraya–Watson 10⁴ × 10⁴, the two
// copies called alternately so that the host's drifting load falls on both; prints the medians, their ratio and
// whether the outputs are bit-identical.
//   node bench/ab.mjs <reference web/src> [<web/src under test, default this checkout's>] [rounds, default 11]
import { interleaved, loadPair } from './interleave.mjs';
import { attentionCase, regressionCase } from './workloads.mjs';

const pair = await loadPair('ab.mjs');
const call = (ka, c) =>
  c.kind === 'nw'
    ? ka.attention(c.q, c.k, c.v, { dim: 1, kernel: 'gaussian', bandwidth: c.h, method: 'exact' })
    : ka.attention(c.q, c.k, c.v, { dim: c.M, scale: c.scale, method: 'exact' });
const bytes = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

for (const c of [attentionCase(4096), regressionCase(1e4)]) {
  const same = bytes(call(pair.reference, c)).equals(bytes(call(pair.tested, c)));
  console.log(`${c.id}: bit-identical ${same}; ${interleaved(pair, (ka) => call(ka, c)).line}`);
}
