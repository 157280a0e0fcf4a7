// Which build is loaded and how (docs/package.md, Loading). Each build is an ES module plus a separate .wasm, imported
// only once init() has chosen it, so an app downloads one build: the single-thread one, or the pthreads one (an ES
// module for cross-origin-isolated browser scopes, CommonJS for Node). Where the files are is locate.js's: in Node the
// .wasm's bytes are read there and handed over; in browsers the pre-js (cpp/bindings/instantiate.pre.js) compiles the
// .wasm while it downloads from the URL given.
import { KernelAttentionError } from './errors.js';
import { browserWasmUrl, esModule, isNode, loadHint, nodeBuiltin, nodeDist, nodeWasm } from './locate.js';

export { readLocate } from './locate.js';

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

/**
 * One error for a load that failed, naming where the file was looked for and, in browsers, what fixes it (Emscripten's
 * own "Aborted(…)" line is kept off the console: factoryOptions).
 */
function loadFailed(what, cause) {
  const url = cause?.url ?? cause?.where;
  const message = String(cause?.message ?? cause);
  const from = url && !message.includes(url) ? ` from ${url}` : '';
  const hint = url && !isNode && !(cause instanceof KernelAttentionError) ? `. ${loadHint(url)}` : '';
  const error = new KernelAttentionError(
    cause instanceof KernelAttentionError ? cause.code : 'Unsupported',
    `the ${what} failed to load${from}: ${message}${hint}`,
  );
  error.cause = cause;
  return error;
}

/**
 * The factory options for `build`: where its .wasm (and in browsers worker.js) are, `onLoadError` (the pre-js reports
 * the real cause and the URL through it) and `printErr`. A user's `locateFile(name, prefix)` decides for every file in
 * browsers; in Node the .wasm is read here (nodeWasm) and the worker is the Node build's own CommonJS file, beside it.
 */
async function factoryOptions(build, locate, failure, dist) {
  const options = {
    onLoadError: (error, url) => {
      failure.error = error;
      failure.where = url ?? failure.where;
    },
    // Emscripten's abort() prints "Aborted(<the cause>)" besides rejecting: the rejection is the one report.
    printErr: (text) => {
      if (!(failure.error && /^Aborted\(/.test(text))) console.warn(text);
    },
  };
  if (isNode) {
    // Where init() said the .wasm is, the package's own folder need not be found (it is the prefix locateFile gets).
    const folder = dist ?? (await nodeDist().catch((error) => (locate ? '' : Promise.reject(error))));
    const { wasmBinary, wasmUrl, where } = await nodeWasm(build, locate, folder);
    failure.where = where;
    return { ...options, ...(wasmBinary ? { wasmBinary } : { wasmUrl }) };
  }
  if (locate) return { ...options, locateFile: (name, prefix) => sameOriginWorker(name, locate(name, prefix)) };
  const wasmUrl = browserWasmUrl(build);
  if (!wasmUrl) {
    throw new KernelAttentionError(
      'Unsupported',
      'this bundle has neither import.meta.url nor a script URL to find the .wasm by: bundle as an ES module ' +
        "(esbuild --format=esm), or pass init({ wasmPaths: '<URL of the folder that holds the .wasm files>' })",
    );
  }
  failure.where = wasmUrl;
  // The single-thread build asks locateFile for its .wasm only, and with one Emscripten's own new URL(…,
  // import.meta.url) stays unevaluated (it throws in a bundle without import.meta). The pthreads build keeps its own
  // worker URL, the pattern bundlers copy the worker by, so it is told the .wasm's URL alone.
  if (build === 'threads') return { ...options, wasmUrl };
  return { ...options, locateFile: (name, prefix) => (name.endsWith('.wasm') ? wasmUrl : prefix + name) };
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

/** Runs the build's factory; a failure is the pre-js's cause when it reported one, with where the .wasm was. */
async function create(factory, build, locate, dist) {
  const failure = {};
  try {
    return await factory(await factoryOptions(build, locate, failure, dist));
  } catch (cause) {
    const error = failure.error ?? cause;
    if (error && typeof error === 'object' && failure.where && error.url === undefined) error.where = failure.where;
    throw error;
  }
}

/** The single-thread SIMD module (a fresh instance per call); `locate` as readLocate returns. */
export async function loadModule(locate) {
  checkWebAssembly();
  try {
    const { default: factory } = await import('../dist/kernel_attention.mjs');
    return await create(factory, 'single', locate);
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
    const { isMainThread } = await nodeBuiltin('node:worker_threads');
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
    const os = await nodeBuiltin('node:os');
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
  try {
    if (isNode) {
      // Required where it lies on disk, by a path no bundler follows: its worker.js is found beside it.
      const { createRequire } = await nodeBuiltin('node:module');
      const dist = await nodeDist();
      const file = `${dist}node/kernel_attention_threads.js`;
      // Both pthreads builds link the same objects with the same flags but for the JavaScript environment, so their
      // .wasm files are byte-identical (tests/package/pack.test.mjs checks it) and only the browsers' one ships.
      return await create(createRequire(file)(file), 'threads', locate, dist);
    }
    if (!esModule) {
      throw new KernelAttentionError(
        'Unsupported',
        "the pthreads build's workers import the module by its URL, which a classic-script bundle (esbuild's " +
          'default format, IIFE) does not have: bundle as an ES module (esbuild --format=esm)',
      );
    }
    const { default: factory } = await import('../dist/kernel_attention_threads.mjs');
    // (It throws before fetching the .wasm where a bundler made import.meta.url a file: URL: threads_es.pre.js.)
    return await create(factory, 'threads', locate);
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
