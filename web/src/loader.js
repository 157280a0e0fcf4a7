// The only module that knows how the WebAssembly is found and compiled (docs/package.md, Loading). Each build is an ES
// module plus a separate .wasm, imported only once init() has chosen it, so an app downloads one build: the
// single-thread one, or the pthreads one (an ES module for cross-origin-isolated browser scopes, CommonJS for Node).
// The .wasm is compiled while it downloads (cpp/bindings/instantiate.pre.js); `new URL(…, import.meta.url)` below is
// the pattern bundlers recognise to copy it, and `locateFile` / `wasmPaths` point elsewhere (a CDN).
import { KernelAttentionError } from './errors.js';

// Held in variables so that bundlers do not try to resolve Node built-ins for browser bundles.
const nodeModuleSpecifier = 'node:module';
const nodeOsSpecifier = 'node:os';
const nodeWorkerSpecifier = 'node:worker_threads';
const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';
const isBrowserWorker = typeof WorkerGlobalScope === 'function' && globalThis instanceof WorkerGlobalScope;
// A backstop only: a worker that fails to load reports an error event at once (the loader listens for it). This bounds
// a worker that neither loads nor fails (a server that never answers).
const WORKER_START_MS = 10000;

const THREADS_WORKER = 'kernel_attention_threads.worker.js';

// The smallest module that uses a SIMD128 instruction: () -> v128 { i8x16.splat(i32.const 0) }.
const simdProbe = new Uint8Array([
  0x00,
  0x61,
  0x73,
  0x6d,
  0x01,
  0x00,
  0x00,
  0x00, // magic, version
  0x01,
  0x05,
  0x01,
  0x60,
  0x00,
  0x01,
  0x7b, // type section: () -> v128
  0x03,
  0x02,
  0x01,
  0x00, // function section
  0x0a,
  0x08,
  0x01,
  0x06,
  0x00,
  0x41,
  0x00,
  0xfd,
  0x0f,
  0x0b, // code: i32.const 0; i8x16.splat; end
]);

function checkWebAssembly() {
  if (typeof WebAssembly !== 'object') {
    throw new KernelAttentionError('Unsupported', 'this JavaScript runtime has no WebAssembly');
  }
  if (!WebAssembly.validate(simdProbe)) {
    throw new KernelAttentionError(
      'Unsupported',
      'this runtime lacks WebAssembly SIMD (Chrome/Edge 91+, Firefox 89+, Safari 16.4+, Node 16.4+ have it)',
    );
  }
}

function loadFailed(what, cause) {
  const error = new KernelAttentionError('Unsupported', `the ${what} failed to load: ${cause?.message ?? cause}`);
  error.cause = cause;
  return error;
}

/**
 * The factory options for one build: where its .wasm (and worker.js) are. A user's `locateFile(name, prefix)` decides
 * for every file; otherwise the .wasm is the URL the bundler resolved (`wasmUrl`) and Emscripten finds worker.js
 * through its own `new URL(…, import.meta.url)`. `onLoadError` lets the pre-js report the real cause.
 */
function factoryOptions(locate, wasmUrl, failure) {
  const options = {
    onLoadError: (error) => {
      failure.error = error;
    },
  };
  // In Node only the .wasm moves: the worker is the Node build's own CommonJS file, beside its module.
  if (locate)
    options.locateFile = (name, prefix) =>
      isNode && !name.endsWith('.wasm') ? prefix + name : sameOriginWorker(name, locate(name, prefix));
  else if (wasmUrl) options.wasmUrl = wasmUrl;
  return options;
}

// A classic Worker cannot be constructed from another origin (a CDN): start it from a same-origin blob that imports
// the script instead. The script still needs CORS headers, as any cross-origin module does.
function sameOriginWorker(name, url) {
  if (name !== THREADS_WORKER || isNode || typeof location !== 'object') return url;
  const absolute = new URL(url, location.href);
  if (absolute.origin === location.origin) return url;
  return URL.createObjectURL(
    new Blob([`importScripts(${JSON.stringify(absolute.href)});`], { type: 'text/javascript' }),
  );
}

/**
 * Reads `init()`'s loading options into one `locateFile(name, prefix)`, or undefined for the default places.
 * `wasmPaths` (a URL or path prefix ending in '/', as onnxruntime-web and tfjs-backend-wasm take) is shorthand for
 * `locateFile: (name) => wasmPaths + name`.
 */
export function readLocate({ locateFile, wasmPaths }) {
  if (locateFile !== undefined && wasmPaths !== undefined) {
    throw new KernelAttentionError(
      'BadArgument',
      '`options.locateFile` and `options.wasmPaths` say the same thing: pass one',
      'options.wasmPaths',
    );
  }
  if (locateFile !== undefined) {
    if (typeof locateFile !== 'function') {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.locateFile\` must be a function (name, prefix) => URL; got ${typeof locateFile}`,
        'options.locateFile',
      );
    }
    return (name, prefix) => String(locateFile(name, prefix));
  }
  if (wasmPaths !== undefined) {
    if (typeof wasmPaths !== 'string' && !(wasmPaths instanceof URL)) {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.wasmPaths\` must be a string or URL (the folder holding the .wasm files); got ${typeof wasmPaths}`,
        'options.wasmPaths',
      );
    }
    const prefix = String(wasmPaths).endsWith('/') ? String(wasmPaths) : `${wasmPaths}/`;
    return (name) => prefix + name;
  }
  return undefined;
}

async function create(factory, options, failure) {
  try {
    return await factory(options);
  } catch (cause) {
    throw failure.error ?? cause;
  }
}

/** The single-thread SIMD module (a fresh instance per call); `locate` as readLocate returns. */
export async function loadModule(locate) {
  checkWebAssembly();
  const failure = {};
  try {
    const { default: factory } = await import('../dist/kernel_attention.mjs');
    return await create(
      factory,
      factoryOptions(locate, new URL('../dist/kernel_attention.wasm', import.meta.url).href, failure),
      failure,
    );
  } catch (cause) {
    throw loadFailed('WebAssembly module', cause);
  }
}

/**
 * Where the pthreads module can run: `run` (SharedArrayBuffer and blocking waits are available: Node, or a
 * cross-origin-isolated page or worker), `auto` (it is also a good default: Node's main thread, or such a browser
 * worker; a page's main thread cannot block, so joining threads there busy-waits; a Node worker_threads worker is
 * usually one of several the app already runs in parallel), and `why` not, for messages.
 */
export async function threadSupport() {
  if (isNode) {
    const { isMainThread } = await import(nodeWorkerSpecifier);
    return {
      run: typeof SharedArrayBuffer === 'function',
      auto: isMainThread,
      why: isMainThread ? 'SharedArrayBuffer is missing' : 'a worker_threads worker shares the cores with its siblings',
    };
  }
  if (typeof SharedArrayBuffer !== 'function' || globalThis.crossOriginIsolated !== true) {
    return {
      run: false,
      auto: false,
      why:
        'this scope is not cross-origin isolated (SharedArrayBuffer needs the headers Cross-Origin-Opener-Policy: ' +
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
    timer = setTimeout(
      () => reject(new Error(`${what} did not start within ${WORKER_START_MS / 1000} s`)),
      WORKER_START_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Idle pool workers must not keep Node running once the user is done (a thread in use is joined before the call
// returns, so none is ever running when the event loop could exit).
function unrefWorkers(module) {
  if (isNode) for (const worker of module.PThread.unusedWorkers) worker.unref();
}

/** The pthreads module (a fresh instance per call, no workers yet: ensureWorkers starts them). */
export async function loadThreadsModule(locate) {
  checkWebAssembly();
  const failure = {};
  try {
    if (isNode) {
      const { createRequire } = await import(nodeModuleSpecifier);
      const factory = createRequire(import.meta.url)('../dist/node/kernel_attention_threads.js');
      // Both pthreads builds link the same objects with the same flags but for the JavaScript environment, so their
      // .wasm files are byte-identical (tests/package/pack.test.mjs checks it) and only the browsers' one ships.
      return await create(
        factory,
        factoryOptions(locate, new URL('../dist/kernel_attention_threads.wasm', import.meta.url).href, failure),
        failure,
      );
    }
    const { default: factory } = await import('../dist/kernel_attention_threads.mjs');
    // (It throws before fetching the .wasm where a bundler made import.meta.url a file: URL: threads_es.pre.js.)
    return await create(
      factory,
      factoryOptions(locate, new URL('../dist/kernel_attention_threads.wasm', import.meta.url).href, failure),
      failure,
    );
  } catch (cause) {
    throw loadFailed('pthreads WebAssembly module', cause);
  }
}

/**
 * Grows the module's worker pool to at least `count` workers, all loaded: a thread can only start synchronously on a
 * worker that is already running (a new Worker needs its creator's event loop, which a blocked join never yields).
 * A worker that fails to load (its file missing from a bundle, blocked by a policy) rejects at once, and its error
 * event is handled here rather than by Emscripten, which would rethrow it as an uncaught error.
 */
export async function ensureWorkers(module, count) {
  const { PThread } = module;
  const loading = [];
  const added = [];
  while (PThread.unusedWorkers.length + PThread.runningWorkers.length < count) {
    PThread.allocateUnusedWorker();
    const worker = PThread.unusedWorkers[PThread.unusedWorkers.length - 1];
    added.push(worker);
    let restore;
    const loaded = new Promise((resolve, reject) => {
      PThread.loadWasmModuleToWorker(worker, resolve);
      const own = worker.onerror; // set by loadWasmModuleToWorker
      restore = () => {
        worker.onerror = own;
      };
      worker.onerror = (event) => {
        event?.preventDefault?.();
        reject(
          new Error(
            `a pthreads worker failed to load${event?.message ? `: ${event.message}` : ''}` +
              (event?.filename ? ` (${event.filename})` : ` (is ${THREADS_WORKER} served next to the module?)`),
          ),
        );
      };
    });
    // Once loaded, errors are Emscripten's again (a crash inside a running thread).
    loading.push(loaded.then(restore));
  }
  try {
    await withTimeout(Promise.all(loading), 'a pthreads worker');
  } catch (cause) {
    // Drop the workers that did not load, so that a later call does not pick a dead one.
    for (const worker of added) {
      const at = PThread.unusedWorkers.indexOf(worker);
      if (at >= 0) PThread.unusedWorkers.splice(at, 1);
      worker.terminate();
    }
    throw loadFailed('pthreads worker pool', cause);
  } finally {
    unrefWorkers(module);
  }
}
