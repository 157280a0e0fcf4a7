// Progress and cancellation for the async siblings (attentionAsync, selectBandwidthAsync, kernelRegressionAsync,
// model.predictAsync / predictIntervalAsync): the work runs in steps (query chunks, search evaluations), and between
// steps the call reports progress and yields a macrotask, so an AbortSignal fired by the page or by a Worker
// message takes effect at the next step.
import { fail } from './errors.js';

export const CONTROL_OPTIONS = ['signal', 'onProgress'];

// Multiply-adds per step of attentionAsync and predictAsync (about 5–20 ms of one wasm thread): steps long enough that
// reporting and yielding between them costs nothing measurable, short enough that an abort takes effect quickly.
export const STEP_WORK = 2 ** 25;

/** Reads `signal` (an AbortSignal) and `onProgress` (a function) from `options`, naming `where` in errors. */
export function readControl(options, where = 'options') {
  const { signal, onProgress } = options ?? {};
  // Duck-typed, so that a signal of another realm (an iframe, a vm context) is accepted.
  if (
    signal !== undefined &&
    (signal === null ||
      typeof signal !== 'object' ||
      typeof signal.aborted !== 'boolean' ||
      typeof signal.addEventListener !== 'function')
  ) {
    fail('BadArgument', `${where}.signal`, 'an AbortSignal', signal);
  }
  if (onProgress !== undefined && typeof onProgress !== 'function')
    fail('BadArgument', `${where}.onProgress`, 'a function', onProgress);
  return { signal, onProgress };
}

/** What an aborted call rejects with: the signal's reason, or a DOMException named 'AbortError' when it has none. */
export function abortReason(signal) {
  if (signal.reason !== undefined) return signal.reason;
  return new DOMException('This operation was aborted', 'AbortError');
}

/** Throws the abort reason when `signal` has fired. */
export function throwIfAborted(signal) {
  if (signal?.aborted) throw abortReason(signal);
}

// A macrotask, not a microtask: only then do timers, messages (a Worker's 'cancel') and abort() calls queued by the
// page get to run. setImmediate in Node (a MessageChannel port would keep the process alive); elsewhere one
// MessageChannel, created on first use.
let channel;
const waiting = [];
export function nextTask() {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  if (!channel) {
    channel = new MessageChannel();
    channel.port1.onmessage = () => waiting.shift()();
  }
  return new Promise((resolve) => {
    waiting.push(resolve);
    channel.port2.postMessage(0);
  });
}

/**
 * Runs the generator `steps` (which yields `{ done, total }` after each step and returns the result): in one go
 * when `control` is null (the synchronous functions), else reporting each yield to onProgress and then, while work
 * remains, yielding to the event loop and stopping with the abort reason if the signal fired meanwhile.
 */
export function drive(steps, control) {
  if (!control) {
    for (;;) {
      const { done, value } = steps.next();
      if (done) return value;
    }
  }
  const { signal, onProgress } = control;
  return (async () => {
    try {
      throwIfAborted(signal);
      for (;;) {
        const { done, value } = steps.next();
        if (done) return value;
        if (onProgress) onProgress({ done: value.done, total: value.total });
        if (value.done < value.total) {
          await nextTask();
          throwIfAborted(signal);
        }
      }
    } finally {
      steps.return(); // runs the generator's finally blocks: frees its wasm memory on every path
    }
  })();
}
