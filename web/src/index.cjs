// CommonJS entry (`require('kernel-attention')`), for Node 20 releases before 20.19 that cannot require() an ES module:
// init() loads the ES module entry with a dynamic import and resolves to the same API object. The error class is on
// the ES module: `(await import('kernel-attention')).KernelAttentionError`, or test `error.name` / `error.code`.
'use strict';

// The ES module, loaded once, by the first call that needs it.
let entry = null;
const load = () => (entry ??= import('./index.js'));

// setThreads() must load the ES module first, so here it is asynchronous: it resolves to the old default (rejects
// as the ES module's throws), and an init() called after it, without awaiting it, still sees the new default.
let pending = Promise.resolve();
exports.setThreads = (threads) => {
  const result = load().then((m) => m.setThreads(threads));
  pending = result.catch(() => {});
  return result;
};
exports.init = (options) => pending.then(load).then((m) => m.init(options));
