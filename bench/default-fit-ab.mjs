// The 1-D default fit, `kernelRegression(x, y, { dim: 1 })`, of two builds and R's `dpill` + `locpoly` (the R peer,
// bench/peers/r.mjs), called in turn with the order rotating each round, so that the shared machine's drifting load
// falls on all three alike; prints the medians and each round's seconds, and the load average seen.
//   node bench/default-fit-ab.mjs <reference web/src> [--src=<web/src under test, default this checkout's>]
//                                 [--sizes=1e5,1e6] [--rounds=3]
import { loadavg } from 'node:os';
import { describeMachine } from './machine.mjs';
import { median } from './measure.mjs';
import { rAvailable, rPeer } from './peers/r.mjs';
import { sample } from './scale.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback;
const reference = args.find((a) => !a.startsWith('--'));
if (!reference) throw new Error('usage: node bench/default-fit-ab.mjs <reference web/src> [--src=DIR] [--sizes=…]');
const tested = option('src', new URL('../web/src', import.meta.url).pathname);
const sizes = option('sizes', '1e5,1e6').split(',').map(Number);
const rounds = Number(option('rounds', '3'));
const load = async (dir) => (await import(`${dir}/index.js`)).init({ threads: 1 });
const builds = { reference: await load(reference), tested: await load(tested) };
const missing = rAvailable();
const r = missing ? null : rPeer();
if (r) await r.start();
console.log(describeMachine().join('\n'));

for (const n of sizes) {
  const { x, y } = sample(n);
  const runs = {
    reference: async () => builds.reference.kernelRegression(x, y, { dim: 1 }).dispose(),
    tested: async () => builds.tested.kernelRegression(x, y, { dim: 1 }).dispose(),
  };
  if (r)
    runs.R = async () => {
      // R's own seconds (timed inside R): dpill, then locpoly at its bandwidth (local-linear, 401 grid points).
      await r.load('dpill', x, y, n, []);
      const select = (await r.run()).seconds;
      const [h] = await r.output();
      await r.load('locpoly', x, y, n, [1, h, 401]);
      return select + (await r.run()).seconds;
    };
  const names = Object.keys(runs);
  const seconds = Object.fromEntries(names.map((k) => [k, []]));
  const loads = [];
  if (n <= 1e5) for (const k of names) await runs[k](); // a warm-up, where a call is short
  for (let round = 0; round < rounds; round++)
    for (let k = 0; k < names.length; k++) {
      const name = names[(k + round) % names.length];
      const start = performance.now();
      const inner = await runs[name]();
      seconds[name].push(name === 'R' ? inner : (performance.now() - start) / 1e3);
      loads.push(loadavg()[0]);
    }
  const line = names.map(
    (k) => `${k} ${median(seconds[k]).toFixed(3)} s [${seconds[k].map((t) => t.toFixed(2)).join(' ')}]`,
  );
  console.log(`n = ${n}: ${line.join(', ')}; load ${Math.min(...loads).toFixed(1)}–${Math.max(...loads).toFixed(1)}`);
}
await r?.close();
