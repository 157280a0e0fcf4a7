// Contender: our core compiled natively (bench/native_bench.cpp linked against ka_core), SSE4.1 or AVX2 build.
import { fileURLToPath } from 'node:url';
import { loadCommand, startChild } from './child.mjs';

/** flavour: 'sse4.1' (the WebAssembly SIMD width) or 'avx2'; both are built by bench/build.sh. */
export function native(flavour) {
  const binary = fileURLToPath(new URL(`../../build/bench/native-${flavour}/ka_native_bench`, import.meta.url));
  let child;
  return {
    label: `ours: native ${flavour === 'avx2' ? 'AVX2+FMA' : 'SSE4.1'}, 1 thread`,
    ceiling: flavour,
    threads: 1,
    async start() {
      child = await startChild(binary, []);
      return `xsimd arch ${child.info.simd}`;
    },
    async load(c, rows) {
      await child.send(loadCommand(c, rows));
      return {
        run: async () => (await child.send('run')).seconds,
        output: () => child.output(),
      };
    },
    /** GFLOP/s of `calls` calls of a ceiling probe ('dot' or 'madd') built into the same binary. */
    async probe(name, calls) {
      return (await child.send(`ceiling ${name} ${calls}`)).gflops;
    },
    close: () => child?.close(),
  };
}
