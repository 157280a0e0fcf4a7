// Runs in a module Worker: on a cross-origin-isolated page the pthreads build must give the single-thread build's
// bytes for 2 and 4 threads; elsewhere threads > 1 must be refused and the default must be one thread. Either way the
// single-thread build's outputs, computed twice, are reported as digests (the test compares them with Node's).
import { init } from '/web/src/index.js';
import { WORKLOADS, bytes, digest } from './workloads.mjs';

const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

async function report() {
  const auto = await init();
  const out = {
    worker: {
      build: auto.build,
      threads: auto.threads,
      isolated: crossOriginIsolated,
      cores: navigator.hardwareConcurrency,
    },
  };
  const single = await init({ threads: 1 });
  out.single = {};
  for (const [name, run] of Object.entries(WORKLOADS)) {
    const [first, again] = [run(single), run(single)];
    out.single[name] = { digest: await digest(first), repeat: same(bytes(first), bytes(again)) };
  }
  if (!crossOriginIsolated) {
    const error = await init({ threads: 2 }).then(
      () => null,
      (e) => e,
    );
    out.refused = error && { code: error.code, argument: error.argument, message: error.message };
    return out;
  }
  const apis = await Promise.all([1, 2, 4].map((threads) => init({ threads })));
  out.builds = apis.map((ka) => [ka.build, ka.threads]);
  out.workloads = {};
  for (const [name, run] of Object.entries(WORKLOADS)) {
    const [one, ...more] = apis.map((ka) => bytes(run(ka)));
    out.workloads[name] = { length: one.length, same: more.map((b) => same(one, b)) };
  }
  return out;
}

report().then(
  (out) => postMessage(out),
  (err) => postMessage({ error: String((err && err.stack) || err) }),
);
