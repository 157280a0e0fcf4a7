// Types for `require('kernel-attention')` (web/src/index.cjs), for TypeScript projects compiled to CommonJS with
// module/moduleResolution node16 or nodenext. Every declaration lives in index.d.ts (the ES module); this file
// re-exports its types and declares the CommonJS entry's two values: init() and an asynchronous setThreads(). The error class is not on the
// CommonJS entry: its type is here for annotations, and `error.name === 'KernelAttentionError'` and `error.code`
// identify it at run time (or take the class from `(await import('kernel-attention')).KernelAttentionError`).
import type { InitOptions, KernelAttention } from './index.js' with { 'resolution-mode': 'import' };

export type * from './index.js' with { 'resolution-mode': 'import' };

/**
 * Loads and compiles a WebAssembly build once per build, and resolves to the API for the thread count (the same
 * object the ES module's init() gives).
 * @throws {KernelAttentionError} as a rejection: `'BadArgument'` for an unknown option or a bad `threads`;
 * `'Unsupported'` when WebAssembly SIMD, or the threads asked for, are not available.
 */
export declare function init(options?: InitOptions): Promise<KernelAttention>;

/**
 * The thread count of later init() calls that do not pass `threads` ('auto' or 1–64), as the ES module's
 * setThreads(); asynchronous here because the CommonJS entry loads the ES module first. Resolves to the old default;
 * an init() called after it (awaited or not) uses the new one.
 * @throws {KernelAttentionError} as a rejection: `'BadArgument'` for a bad `threads`.
 */
export declare function setThreads(threads: 'auto' | number): Promise<'auto' | number>;
