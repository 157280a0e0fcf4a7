// Contender: npm kernel-smooth (plain JS arrays, a kernel function call per pair; its Gaussian is the normal pdf,
// whose constant cancels in Nadaraya–Watson). 1-D regression only.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export function kernelSmooth() {
  let ks;
  return {
    label: 'kernel-smooth (npm, float64)',
    ceiling: null,
    threads: 1,
    supports: (c) => c.kind === 'nw',
    async start() {
      ks = require('kernel-smooth');
      return `kernel-smooth ${require('kernel-smooth/package.json').version}`;
    },
    async load(c, rows) {
      const estimator = ks.regression(Array.from(c.k), Array.from(c.v), ks.fun.gaussian, c.h);
      const queries = Array.from(c.q.subarray(0, rows));
      let out;
      return {
        async run() {
          const start = performance.now();
          out = estimator(queries);
          return (performance.now() - start) / 1e3;
        },
        output: () => out,
      };
    },
  };
}
