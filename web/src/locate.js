// Where a build's files are (docs/package.md, Loading): init()'s locateFile / wasmPaths first; in Node, the package's
// web/dist/ on disk, whose .wasm is read here; in browsers, the URL a bundler gave the .wasm, or the folder of the
// bundle where the bundler kept this module but not the file. With loader.js, the only module that knows about URLs,
// files and Node's built-ins.
import { KernelAttentionError } from './errors.js';

// (`process` is read through globalThis below: Parcel polyfills a bare `process` it sees used.)
export const isNode = typeof process === 'object' && typeof process.versions?.node === 'string';

/**
 * A Node built-in module. process.getBuiltinModule (Node 20.16, 22.3) is invisible to bundlers; the import() before
 * it is left alone by webpack, Turbopack and Vite (the comments), so no server bundle tries to resolve it and no
 * browser bundle warns about it.
 */
export async function nodeBuiltin(name) {
  return globalThis.process.getBuiltinModule?.(name) ?? import(/* webpackIgnore: true */ /* @vite-ignore */ name);
}

// The line a Next.js app adds when its server bundle runs this module away from the package's files (README, Server
// rendering), quoted by the error that needs it.
export const SERVER_EXTERNAL = "serverExternalPackages: ['kernel-attention']";

const WASM = { single: 'kernel_attention.wasm', threads: 'kernel_attention_threads.wasm' };
// Held in a variable so that bundlers do not resolve it at build time (the point is where the app runs).
const PACKAGE_MANIFEST = 'kernel-attention/package.json';

/**
 * The URL this module was loaded from: import.meta.url, or, in a classic-script bundle (esbuild's default IIFE format
 * leaves import.meta empty), the script's own URL, read while it runs (document.currentScript is null later).
 */
const moduleUrl =
  typeof import.meta.url === 'string'
    ? import.meta.url
    : globalThis.document?.currentScript?.src || globalThis.location?.href || undefined;

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

/**
 * In Node: the package's web/dist/ folder on disk (with a trailing separator). First this module's own folder (Node,
 * and webpack's server bundles, which keep the source's file: URL); else, for a server bundle that runs it from its
 * own output (Next.js), the package as installed where the app runs. Neither: an error naming the fix.
 */
export async function nodeDist() {
  const path = await nodeBuiltin('node:path');
  const { existsSync } = await nodeBuiltin('node:fs');
  const { fileURLToPath } = await nodeBuiltin('node:url');
  const tried = [];
  if (moduleUrl?.startsWith('file:')) tried.push(path.join(path.dirname(fileURLToPath(moduleUrl)), '..', 'dist'));
  try {
    const { createRequire } = await nodeBuiltin('node:module');
    const manifest = createRequire(path.join(globalThis.process.cwd(), 'package.json')).resolve(PACKAGE_MANIFEST);
    tried.push(path.join(path.dirname(manifest), 'web', 'dist'));
  } catch {
    // Not installed where the app runs: the error below says what was tried.
  }
  const found = tried.find((dir) => existsSync(path.join(dir, WASM.single)));
  if (found) return found + path.sep;
  throw new KernelAttentionError(
    'Unsupported',
    `cannot find the package's .wasm files (looked in ${tried.join(' and ') || 'no folder'}): a server bundle runs ` +
      `this module away from them. In Next.js add ${SERVER_EXTERNAL} to next.config.js; elsewhere keep the package ` +
      `out of the server bundle, or pass init({ wasmPaths: '<path of node_modules/kernel-attention/web/dist/>' })`,
  );
}

/**
 * In Node: what the factory needs to instantiate `build`'s .wasm: its bytes (`{ wasmBinary }`), read from `dist` or
 * from where `locate` says; a URL that is not a file (http:, data:) is fetched by the pre-js (`{ wasmUrl }`).
 */
export async function nodeWasm(build, locate, dist) {
  const where = locate ? locate(WASM[build], dist) : dist + WASM[build];
  if (/^(https?|data|blob):/.test(where)) return { wasmUrl: where, where };
  const { readFile } = await nodeBuiltin('node:fs/promises');
  const { fileURLToPath } = await nodeBuiltin('node:url');
  const file = where.startsWith('file:') ? fileURLToPath(where) : where;
  try {
    return { wasmBinary: await readFile(file), where: file };
  } catch (cause) {
    const error = new Error(`cannot read ${file}: ${cause.message}`);
    error.url = file;
    throw error;
  }
}

/** What `new URL('../dist/' + name, base)` gives, written without the pattern bundlers rewrite. */
function besideSource(base, name) {
  const url = new URL(base);
  url.search = '';
  url.hash = '';
  const parts = url.pathname.split('/');
  parts.splice(-2, 2, 'dist', name);
  url.pathname = parts.join('/');
  return url.href;
}

/** `name` in the folder of the file at `base`. */
function besideFile(base, name) {
  const url = new URL(base);
  url.search = '';
  url.hash = '';
  url.pathname = url.pathname.replace(/[^/]*$/, name);
  return url.href;
}

/**
 * In browsers: the URL of `build`'s .wasm when init() was given no locateFile / wasmPaths. The loader's
 * `new URL('../dist/…', import.meta.url)` is the pattern Vite, webpack, Rollup's plugin, Parcel and Turbopack rewrite
 * to where they copied the file. A bundler that kept this module but not that reference (esbuild) leaves it pointing
 * at a dist/ folder beside the bundle, which does not exist: the file is next to the bundle then (the README's copy
 * step), and so it is for a classic-script bundle (no import.meta at all). Null where no URL can be known.
 */
export function browserWasmUrl(build) {
  const name = WASM[build];
  if (typeof import.meta.url !== 'string') return moduleUrl ? besideFile(moduleUrl, name) : null;
  const given =
    build === 'threads'
      ? new URL('../dist/kernel_attention_threads.wasm', import.meta.url).href
      : new URL('../dist/kernel_attention.wasm', import.meta.url).href;
  const rewritten = given !== besideSource(import.meta.url, name);
  const unbundled = /\/src\/locate\.js$/.test(new URL(import.meta.url).pathname);
  return rewritten || unbundled ? given : besideFile(import.meta.url, name);
}

/** Whether this module runs as an ES module (the pthreads build's workers import the module file by its URL). */
export const esModule = typeof import.meta.url === 'string';

/** What to do when the .wasm did not load from `url` (browsers): the fix for where it was looked for. */
export function loadHint(url) {
  if (/\/\.vite\/deps\//.test(url ?? '')) {
    return (
      "Vite's dev server pre-bundled the package away from its .wasm files: add optimizeDeps: { exclude: " +
      "['kernel-attention'] } to vite.config.js (README, Bundlers)"
    );
  }
  return (
    'the file is not where the module looked: a bundler that does not copy files named by new URL(…, ' +
    'import.meta.url) (esbuild) needs kernel-attention/web/dist/*.wasm and *.worker.js copied next to its output, ' +
    "or pass init({ wasmPaths: '<URL of the folder that holds them>' }) (README, Bundlers)"
  );
}
