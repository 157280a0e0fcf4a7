// Public entry: init() loads a WebAssembly build (single-thread or pthreads) once and returns the API.
import { makeAttention, makeAttentionAsync, makeAttentionWithInfo, makeWeights } from './attention.js';
import { makeBandwidth } from './bandwidth.js';
import { describe, KernelAttentionError } from './errors.js';
import { makeAttentionGradients } from './attention-gradients.js';
import { makeEngine } from './engine.js';
import { ensureWorkers, hardwareThreads, loadModule, loadThreadsModule, readLocate, threadSupport } from './loader.js';
import { makeLoess } from './loess.js';
import { makeLowess } from './lowess.js';
import { makeAttentionPooling } from './pooling.js';
import { makePlan } from './plan.js';
import { makeRegression, makeRegressionAsync } from './regression.js';
import { makeStates } from './states.js';
import { checkOptionNames } from './validate.js';

export { KernelAttentionError };

// Most threads init() accepts, and the most 'auto' picks (beyond that, starting threads costs more than it saves
// on typical calls; a larger explicit count is still honoured up to MAX_THREADS).
const MAX_THREADS = 64;
const AUTO_MAX_THREADS = 16;

// One module per build, and one API object per (build, thread count) sharing it. Failed loads may be retried.
const modules = new Map();
const apis = new Map();

function cached(map, key, make) {
  if (!map.has(key)) {
    const promise = make();
    map.set(key, promise);
    promise.catch(() => map.delete(key));
  }
  return map.get(key);
}

function readThreads(threads) {
  if (threads === 'auto' || (Number.isInteger(threads) && threads >= 1 && threads <= MAX_THREADS)) return threads;
  throw new KernelAttentionError(
    'BadArgument',
    `\`options.threads\` must be 'auto' or an integer from 1 to ${MAX_THREADS}; got ${describe(threads)}`,
    'options.threads',
  );
}

// Where the .wasm files are (init's locateFile / wasmPaths): used by the first init() that loads each build.
let locate;

function api(build, threads) {
  return cached(apis, `${build}:${threads}`, async () => {
    const module = await cached(modules, build, () => (build === 'threads' ? loadThreadsModule : loadModule)(locate));
    if (build === 'threads') await ensureWorkers(module, threads - 1);
    // The module's one caller, with the core's kernel table and limits read once.
    const engine = makeEngine(module);
    const bandwidth = makeBandwidth(engine, threads);
    const attention = makeAttention(engine, threads);
    const attentionGradients = makeAttentionGradients(engine, threads);
    return Object.freeze({
      attention,
      attentionAsync: makeAttentionAsync(engine, threads),
      attentionWithInfo: makeAttentionWithInfo(engine, threads),
      weights: makeWeights(engine),
      attentionGradients,
      attentionPooling: makeAttentionPooling(engine, attention, attentionGradients),
      ...makeStates(engine, threads),
      ...bandwidth,
      kernelRegression: makeRegression(engine, threads, bandwidth.selectBandwidth, bandwidth.selectBandwidthAsync),
      kernelRegressionAsync: makeRegressionAsync(
        engine,
        threads,
        bandwidth.selectBandwidthAsync,
        bandwidth.selectBandwidth,
      ),
      lowess: makeLowess(engine, threads),
      loess: makeLoess(engine, threads),
      plan: makePlan(engine),
      simd: engine.simdName(),
      build,
      threads,
    });
  });
}

/** 'auto': the pthreads build where it can run and blocking is allowed, with one thread per core; else one thread. */
async function autoApi() {
  const support = await threadSupport();
  const cores = Math.min(await hardwareThreads(), AUTO_MAX_THREADS);
  if (!support.run || !support.auto || cores < 2) return api('single', 1);
  try {
    return await api('threads', cores);
  } catch {
    return api('single', 1); // e.g. a bundle that left the worker script behind: still works, on one thread
  }
}

// The thread count init() uses when its options do not say (setThreads; in Node also the environment variable
// KERNEL_ATTENTION_THREADS, which worker_threads workers inherit, so it holds for the whole process).
let defaultThreads = 'auto';
let environmentRead = false;
function readEnvironmentThreads() {
  environmentRead = true;
  const text = typeof process === 'object' ? process.env?.KERNEL_ATTENTION_THREADS : undefined;
  if (text === undefined || text === '') return;
  const threads = text === 'auto' ? text : /^[1-9]\d*$/.test(text) ? Number(text) : text;
  try {
    defaultThreads = readThreads(threads);
  } catch {
    throw new KernelAttentionError(
      'BadArgument',
      `the environment variable KERNEL_ATTENTION_THREADS must be 'auto' or an integer from 1 to ${MAX_THREADS}; got ${JSON.stringify(text)}`,
      'KERNEL_ATTENTION_THREADS',
    );
  }
}

/** Sets the thread count of later init() calls that do not pass `threads` ('auto' or 1–64); returns the old one. */
export function setThreads(threads) {
  environmentRead = true;
  const old = defaultThreads;
  defaultThreads = readThreads(threads);
  return old;
}

export async function init(options) {
  if (!environmentRead) readEnvironmentThreads();
  const {
    threads = defaultThreads,
    locateFile,
    wasmPaths,
  } = checkOptionNames(options, ['threads', 'locateFile', 'wasmPaths']);
  readThreads(threads);
  const located = readLocate({ locateFile, wasmPaths });
  if (located) locate = located;
  if (threads === 'auto') return cached(apis, 'auto', autoApi);
  if (threads === 1) return api('single', 1);
  const support = await threadSupport();
  if (!support.run) {
    throw new KernelAttentionError(
      'Unsupported',
      `\`options.threads\` is ${threads}, but ${support.why}`,
      'options.threads',
    );
  }
  return api('threads', threads);
}
