// Contender: PyTorch on the CPU (Debian's /usr/bin/python3 with python3-torch), float32, run by bench/torch_bench.py
// at a given thread count. All thread counts share one Python process. Missing torch makes start() throw, and the
// runner prints that as a note and leaves the rows out.
import { fileURLToPath } from 'node:url';
import { loadCommand, startChild } from './child.mjs';

const script = fileURLToPath(new URL('../torch_bench.py', import.meta.url));
let shared; // the one child, started on first use

export function torch(threads) {
  let child;
  return {
    label: `PyTorch (CPU, float32, ${threads} thread${threads > 1 ? 's' : ''})`,
    ceiling: 'avx2',
    threads,
    async start() {
      shared ??= startChild('/usr/bin/python3', [script]);
      child = await shared;
      return `torch ${child.info.torch}, libblas.so.3 → ${child.info.blas}`;
    },
    async load(c, rows) {
      const set = await child.send(`threads ${threads}`);
      if (set.threads !== threads) throw new Error(`torch runs ${set.threads} threads, not ${threads}`);
      await child.send(loadCommand(c, rows));
      return {
        run: async () => (await child.send('run')).seconds,
        output: () => child.output(),
      };
    },
    async close() {
      const closing = shared;
      shared = undefined;
      if (closing) await (await closing).close();
    },
  };
}
