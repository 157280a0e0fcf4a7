// The only module that knows how the WebAssembly is found and compiled. The build embeds the wasm in one ES module
// (see docs/design.md), so loading needs no URL, fetch or file access in Node, browsers, workers or bundlers.
// The pthreads build (docs/design.md, Threads) is an ES module for cross-origin-isolated browser scopes and a
// CommonJS module for Node; both are loaded only when asked for, so the single-thread path never pulls them in.
import createKernelAttention from '../dist/kernel_attention.mjs';
import { KernelAttentionError } from './errors.js';

// Held in variables so that bundlers do not try to resolve Node built-ins for browser bundles.
const nodeModuleSpecifier = 'node:module';
const nodeOsSpecifier = 'node:os';
const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';
const isBrowserWorker = typeof WorkerGlobalScope === 'function' && globalThis instanceof WorkerGlobalScope;
// Workers that do not start within this time (a missing worker.js, a blocked URL) make the threaded load fail.
const WORKER_START_MS = 20000;

// The smallest module that uses a SIMD128 instruction: () -> v128 { i8x16.splat(i32.const 0) }.
const simdProbe = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type section: () -> v128
  0x03, 0x02, 0x01, 0x00, // function section
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x0f, 0x0b, // code: i32.const 0; i8x16.splat; end
]);

function checkWebAssembly() {
  if (typeof WebAssembly !== 'object') {
    throw new KernelAttentionError('Unsupported', 'this JavaScript runtime has no WebAssembly');
  }
  if (!WebAssembly.validate(simdProbe)) {
    throw new KernelAttentionError('Unsupported',
      'this runtime lacks WebAssembly SIMD (Chrome/Edge 91+, Firefox 89+, Safari 16.4+, Node 16.4+ have it)');
  }
}

function loadFailed(what, cause) {
  const error = new KernelAttentionError('Unsupported', `the ${what} failed to load: ${cause?.message ?? cause}`);
  error.cause = cause;
  return error;
}

/** The single-thread SIMD module (a fresh instance per call). */
export async function loadModule() {
  checkWebAssembly();
  try {
    return await createKernelAttention();
  } catch (cause) {
    throw loadFailed('WebAssembly module', cause);
  }
}

/**
 * Where the pthreads module can run: `run` (SharedArrayBuffer and blocking waits are available: Node, or a
 * cross-origin-isolated page or worker), `auto` (it is also a good default: Node, or such a worker; a page's main
 * thread cannot block, so joining threads there busy-waits), and `why` not, for messages.
 */
export function threadSupport() {
  if (isNode) return { run: typeof SharedArrayBuffer === 'function', auto: true, why: 'SharedArrayBuffer is missing' };
  if (typeof SharedArrayBuffer !== 'function' || globalThis.crossOriginIsolated !== true) {
    return {
      run: false, auto: false,
      why: 'this scope is not cross-origin isolated (SharedArrayBuffer needs the headers Cross-Origin-Opener-Policy: ' +
        'same-origin and Cross-Origin-Embedder-Policy: require-corp)',
    };
  }
  return { run: true, auto: isBrowserWorker, why: 'the main thread of a page cannot block; call from a Worker' };
}

/** Hardware threads of this machine (1 when unknown). */
export async function hardwareThreads() {
  if (isNode) {
    const os = await import(nodeOsSpecifier);
    return os.availableParallelism?.() ?? os.cpus().length ?? 1;
  }
  return globalThis.navigator?.hardwareConcurrency || 1;
}

function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not start within ${WORKER_START_MS / 1000} s`)), WORKER_START_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Idle pool workers must not keep Node running once the user is done (a thread in use is joined before the call
// returns, so none is ever running when the event loop could exit).
function unrefWorkers(module) {
  if (isNode) for (const worker of module.PThread.unusedWorkers) worker.unref();
}

/** The pthreads module (a fresh instance per call), with its worker pool started. */
export async function loadThreadsModule() {
  checkWebAssembly();
  try {
    let create;
    if (isNode) {
      const { createRequire } = await import(nodeModuleSpecifier);
      create = createRequire(import.meta.url)('../dist/node/kernel_attention_threads.js');
    } else {
      create = (await import('../dist/kernel_attention_threads.mjs')).default;
    }
    const module = await withTimeout(create(), 'the pthreads worker pool');
    unrefWorkers(module);
    return module;
  } catch (cause) {
    throw loadFailed('pthreads WebAssembly module', cause);
  }
}

/**
 * Grows the module's worker pool to at least `count` workers, all loaded: a thread can only start synchronously on a
 * worker that is already running (a new Worker needs its creator's event loop, which a blocked join never yields).
 */
export async function ensureWorkers(module, count) {
  const { PThread } = module;
  const loading = [];
  while (PThread.unusedWorkers.length + PThread.runningWorkers.length < count) {
    PThread.allocateUnusedWorker();
    const worker = PThread.unusedWorkers[PThread.unusedWorkers.length - 1];
    loading.push(new Promise((resolve) => PThread.loadWasmModuleToWorker(worker, resolve)));
  }
  try {
    await withTimeout(Promise.all(loading), 'a pthreads worker');
  } catch (cause) {
    throw loadFailed('pthreads worker pool', cause);
  } finally {
    unrefWorkers(module);
  }
}
