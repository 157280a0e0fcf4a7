// CommonJS entry (`require('kernel-attention')`), for Node 20 releases before 20.19 that cannot require() an ES module:
// init() loads the ES module entry with a dynamic import and resolves to the same API object. The error class is on
// the ES module: `(await import('kernel-attention')).KernelAttentionError`, or test `error.name` / `error.code`.
'use strict';

exports.init = (options) => import('./index.js').then((m) => m.init(options));
