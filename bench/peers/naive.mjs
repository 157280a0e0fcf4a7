// Contender: plain float64 JavaScript, two passes per query (every log-weight and their maximum, then the weighted
// sums). It is the same loop as the reference, so its error column only shows that it is the reference.
import { naiveRows } from '../workloads.mjs';

export function naiveJs() {
  return {
    label: 'naive JS (float64, two-pass)',
    ceiling: null,
    threads: 1,
    start: async () => '',
    async load(c, rows) {
      let out;
      return {
        async run() {
          const start = performance.now();
          out = naiveRows(c, rows);
          return (performance.now() - start) / 1e3;
        },
        output: () => out,
      };
    },
  };
}
