// The machine's single-core SIMD ceilings: the probes of bench/ceiling_kernels.h as WebAssembly (build/bench/wasm,
// built by bench/build.sh with the core's wasm flags) and inside each native driver. Returns
// { wasm: { dot, madd }, 'sse4.1': {…}, avx2: {…} } in GFLOP/s, each the median of 5 measurements after a warm-up.
// The run measures them before, between and after its cases and keeps the best figure of each: a ceiling is the best
// the machine did, and this VM's speed drifts by tens of per cent from one minute to the next.

// Calls per measurement: about 0.05 s each at the speeds measured here.
const calls = { dot: 100000, madd: 10000 };

async function median5(gflops, count) {
  await gflops(count);  // warm-up: V8 tiers the kernel up during this one
  const g = [];
  for (let n = 0; n < 5; n++) g.push(await gflops(count));
  return g.sort((a, b) => a - b)[2];
}

let wasm;  // the probe module, instantiated once

const measure = async (probe) => ({
  dot: await median5((n) => probe('dot', n), calls.dot),
  madd: await median5((n) => probe('madd', n), calls.madd),
});

/**
 * natives: native contenders; `ceiling` names their flavour and probe(name, calls) runs a probe in their binary.
 * With `earlier` (a previous result), each figure is the larger of the earlier and the new one.
 */
export async function measureCeilings(natives, earlier = {}) {
  wasm ??= import('../build/bench/wasm/ceiling.mjs').then(({ default: createCeiling }) => createCeiling());
  const m = await wasm;
  const result = { wasm: await measure((name, n) => (name === 'dot' ? m._ceiling_dot(n) : m._ceiling_madd(n))) };
  for (const who of natives) result[who.ceiling] = await measure((name, n) => who.probe(name, n));
  for (const [key, now] of Object.entries(result)) {
    const before = earlier[key] ?? now;
    result[key] = { dot: Math.max(before.dot, now.dot), madd: Math.max(before.madd, now.madd) };
  }
  return result;
}
