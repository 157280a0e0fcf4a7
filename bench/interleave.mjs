// What the interleaved A/B benchmarks (ab.mjs, ab-centring.mjs) share: two copies of web/src from the command line,
// each on one thread, and timing them alternately so that the host's drifting load falls on both.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * { reference, tested, rounds } from `node bench/<script> <reference web/src> [<web/src under test, default this
 * checkout's>] [rounds, default 11]`: the two APIs on one thread each; exits 2 with the usage line without a reference.
 */
export async function loadPair(script) {
  const [refDir, testDir = new URL('../web/src', import.meta.url).pathname, rounds = '11'] = process.argv.slice(2);
  if (!refDir) {
    console.error(`usage: node bench/${script} <reference web/src> [<web/src under test>] [rounds]`);
    process.exit(2);
  }
  const load = async (dir) => (await import(pathToFileURL(resolve(dir, 'index.js')).href)).init({ threads: 1 });
  return { reference: await load(refDir), tested: await load(testDir), rounds: Number(rounds) };
}

const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];

/**
 * The median milliseconds of `run(ka)` on each API over `rounds` rounds, the order alternating every round; and a
 * line saying them with their ratio.
 */
export function interleaved({ reference, tested, rounds }, run) {
  const t = { reference: [], tested: [] };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? ['tested', 'reference'] : ['reference', 'tested'];
    for (const name of order) {
      const ka = name === 'tested' ? tested : reference;
      const t0 = performance.now();
      run(ka);
      t[name].push(performance.now() - t0);
    }
  }
  const [a, b] = [median(t.reference), median(t.tested)];
  return {
    reference: a,
    tested: b,
    line: `median reference ${a.toFixed(1)} ms, tested ${b.toFixed(1)} ms, tested/reference ${(b / a).toFixed(3)}`,
  };
}
