// The backward pass against the forward (issue 9: "backward ≤ 2.5× forward" on attention I = J = 4096, M = D = 64):
// ka.attentionGradients (forward + backward, one call) and ka.attention on the same inputs through the public API,
// each the median of 7 runs alternating between the two, on one WebAssembly thread. The backward's own cost is the
// difference of the two.
// Exports benchBackward() → { header, rows } for a Markdown table (report.mjs's table()); run alone with
//   node bench/backward.mjs [n]
import { fileURLToPath } from 'node:url';
import { sig, table, time } from './report.mjs';
import { attentionCase, mulberry32, normal } from './workloads.mjs';

/**
 * Median seconds of each of `fns` over `runs` rounds, after one warm-up call each. The calls alternate within a
 * round (in turned order every other round), so a slow stretch of the machine falls on both alike.
 */
function medians(fns, runs) {
  for (const fn of fns) fn();
  const times = fns.map(() => []);
  for (let r = 0; r < runs; r++) {
    const order = fns.map((_, k) => (r % 2 ? fns.length - 1 - k : k));
    for (const k of order) {
      const t = performance.now();
      fns[k]();
      times[k].push((performance.now() - t) / 1e3);
    }
  }
  return times.map((x) => x.sort((a, b) => a - b)[Math.floor(x.length / 2)]);
}

/**
 * Times attention and attentionGradients at I = J = n (M = D = 64, softmax, scale 1/8, random normal data and dOut).
 * `ka`: an initialised API (init({ threads: 1 }) when omitted). Returns { header, rows, ratios } where rows are the
 * Markdown table's cells and ratios { gradients, backward } the two quotients by the forward's time.
 */
export async function benchBackward({ n = 4096, runs = 7, ka } = {}) {
  if (!ka) {
    const { init } = await import('../web/src/index.js');
    ka = await init({ threads: 1 });
  }
  const c = attentionCase(n);
  const rand = mulberry32(9);
  const dOut = Float32Array.from({ length: n * c.D }, () => normal(rand));
  const options = { dim: c.M }; // softmax, scale 1/√M
  const [forward, gradients] = medians(
    [() => ka.attention(c.q, c.k, c.v, options), () => ka.attentionGradients(c.q, c.k, c.v, dOut, options)],
    runs,
  );
  const backward = gradients - forward;
  const ratios = { gradients: gradients / forward, backward: backward / forward };
  const header = ['call (wasm SIMD, 1 thread)', `time, I = J = ${n}, M = D = ${c.M}`, '÷ forward'];
  const rows = [
    ['attention (forward)', time(forward), '1×'],
    ['attentionGradients (forward + backward)', time(gradients), `${sig(ratios.gradients, 3)}×`],
    ['backward alone (the difference)', time(backward), `${sig(ratios.backward, 3)}×`],
  ];
  return { header, rows, ratios };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const n = Number(process.argv[2] ?? 4096);
  const { header, rows } = await benchBackward({ n });
  console.log(table(header, rows));
}
