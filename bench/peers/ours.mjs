// Contender: the package itself, through its public API (web/src/index.js). Only the call is timed; the inputs are
// already Float32Arrays (the call copies them into the wasm heap and the result out, as every user call does).

/**
 * `initOptions` go to init() and `options` into every call, so a build or method variant is one more line. The
 * default is the single-thread build (init()'s own default would pick the pthreads build in Node).
 */
export function ours({
  label = 'ours: wasm SIMD, 1 thread',
  initOptions = { threads: 1 },
  options = {},
  threads = 1,
} = {}) {
  let ka;
  return {
    label,
    ceiling: 'wasm',
    threads,
    async start() {
      const { init } = await import('../../web/src/index.js'); // fails here, as a note, when the build is missing
      ka = await init(initOptions);
      if (ka.threads !== threads)
        throw new Error(`init(${JSON.stringify(initOptions)}) gave ${ka.threads} threads, not ${threads}`);
      return `simd ${ka.simd}, ${ka.build} build`;
    },
    async load(c, rows) {
      const q = c.q.subarray(0, rows * c.M);
      const callOptions =
        c.kind === 'nw'
          ? { dim: 1, kernel: 'gaussian', bandwidth: c.h, method: 'exact', ...options }
          : { dim: c.M, method: 'exact', ...options }; // softmax with the default scale 1/√M
      let out;
      return {
        async run() {
          const start = performance.now();
          out = ka.attention(q, c.k, c.v, callOptions);
          return (performance.now() - start) / 1e3;
        },
        output: () => out,
      };
    },
  };
}
