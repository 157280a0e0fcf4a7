// What the A/B scripts (ab-outputs.mjs, ab-plan.mjs) share: their two web/src arguments, loading a copy of the API,
// and seeded inputs.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/** [reference web/src, web/src under test (default this checkout's)] from the command line, or exit 2 with `usage`. */
export function readDirs(script) {
  const [refDir, testDir = new URL('../web/src', import.meta.url).pathname] = process.argv.slice(2);
  if (!refDir) {
    console.error(`usage: node scripts/${script} <reference web/src> [<web/src under test>]`);
    process.exit(2);
  }
  return [refDir, testDir];
}

/** The module of the API in `dir` (its index.js). */
export const load = (dir) => import(pathToFileURL(resolve(dir, 'index.js')).href);

/** A seeded uniform generator on [0, 1). */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n seeded float32 values uniform on [-scale, scale). */
export const random = (n, seed, scale = 1) => {
  const r = rng(seed);
  return Float32Array.from({ length: n }, () => scale * (2 * r() - 1));
};
