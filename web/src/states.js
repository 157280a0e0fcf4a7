// Mergeable partial states: attentionState() per key shard, mergeStates() in any order, finalizeState() once.
import { checkResult, describe, fail, KernelAttentionError } from './errors.js';
import { attentionFrame } from './frame.js';
import { MAX_WASM_BYTES } from './heap.js';
import { copyCall, readCall, requireValues, SHARED_OPTIONS } from './options.js';
import { checkOptionNames, oneOf } from './validate.js';

const STATE_OPTIONS = SHARED_OPTIONS.filter((name) => name !== 'empty');

/** Checks that `state` is a state object as attentionState() returns it (possibly after a postMessage). */
function readState(state, name) {
  if (state === null || typeof state !== 'object') fail('BadArgument', name, 'a state from attentionState()', state);
  const { queries, heads, width, max, sum, acc } = state;
  const sizes = [queries, heads, width].every((n) => Number.isInteger(n) && n >= 0) && heads >= 1;
  if (
    !sizes ||
    !(max instanceof Float32Array) ||
    !(sum instanceof Float32Array) ||
    !(acc instanceof Float32Array) ||
    max.length !== queries * heads ||
    sum.length !== queries * heads ||
    acc.length !== queries * width ||
    width % heads !== 0
  ) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`${name}\` must be a state from attentionState() ({ queries, heads, width, max, sum, acc }); got ${describe(state)}`,
      name,
    );
  }
  // max may be ±Infinity (no admissible key; scores beyond float32) and acc may overflow, but a NaN max or a sum that
  // is not a finite count ≥ 0 cannot come from attentionState() and would silently spoil the merge.
  for (let n = 0; n < max.length; n++) {
    if (Number.isNaN(max[n]) || !(sum[n] >= 0 && sum[n] < Infinity)) {
      const [field, x] = Number.isNaN(max[n]) ? ['max', max[n]] : ['sum', sum[n]];
      throw new KernelAttentionError(
        x < 0 ? 'BadArgument' : 'NonFinite',
        `\`${name}.${field}[${n}]\` must be ${field === 'max' ? 'a number (not NaN)' : 'a finite number ≥ 0'}; got ${describe(x)}`,
        name,
      );
    }
  }
  return state;
}

function sameShape(a, b, name) {
  if (a.queries !== b.queries || a.heads !== b.heads || a.width !== b.width) {
    throw new KernelAttentionError(
      'BadShape',
      `\`${name}\` has ${b.queries} queries × ${b.width} values in ${b.heads} heads; the first state has ` +
        `${a.queries} × ${a.width} in ${a.heads}`,
      name,
    );
  }
}

/** The partial-state functions on `engine` (engine.js); attentionState() runs on up to `threads` threads. */
export function makeStates(engine, threads = 1) {
  function attentionState(queries, keys, values, options) {
    requireValues(values, 'attentionState');
    const call = readCall(engine, queries, keys, values, options, STATE_OPTIONS);
    // The one frame every shard agrees on: a distance kernel's queries' shift, nothing else (frame.js).
    call.frame = attentionFrame(call, call.distance, { states: true });
    const rows = call.I * call.heads;
    const floats = 2 * rows + call.I * call.D;
    if (floats * 4 > MAX_WASM_BYTES) {
      // refused before allocating: a byte count past 2³² would otherwise wrap when it reaches malloc
      throw new KernelAttentionError(
        'OutOfMemory',
        `attentionState() would need ${floats} floats (${(floats / 2 ** 18).toFixed(0)} MiB) for I = ${call.I} \`queries\` ` +
          `and D = ${call.D}, beyond the 2 GiB WebAssembly memory`,
        'queries',
      );
    }
    return engine.withHeap((heap) => {
      const { q, k, v, options } = copyCall(heap, call);
      const max = heap.alloc(rows * 4);
      const sum = heap.alloc(rows * 4);
      const acc = heap.alloc(call.I * call.D * 4);
      const { I, J, M, D } = call;
      checkResult(engine.attentionStates({ q, k, v, max, sum, acc, I, J, M, D, options, threads }));
      return {
        queries: call.I,
        heads: call.heads,
        width: call.D,
        max: heap.readF32(max, rows),
        sum: heap.readF32(sum, rows),
        acc: heap.readF32(acc, call.I * call.D),
      };
    });
  }

  function mergeStates(...states) {
    if (states.length === 0) fail('BadArgument', 'states', 'at least one state', undefined);
    const first = readState(states[0], 'states[0]');
    states.forEach((s, n) => sameShape(first, readState(s, `states[${n}]`), `states[${n}]`));
    const { queries: I, heads: H, width: D } = first;
    return engine.withHeap((heap) => {
      const max = heap.f32(first.max);
      const sum = heap.f32(first.sum);
      const acc = heap.f32(first.acc);
      for (const s of states.slice(1)) {
        const [max2, sum2, acc2] = [heap.f32(s.max), heap.f32(s.sum), heap.f32(s.acc)];
        checkResult(engine.mergeStates({ max, sum, acc, max2, sum2, acc2, I, D, H }));
      }
      return {
        queries: I,
        heads: H,
        width: D,
        max: heap.readF32(max, I * H),
        sum: heap.readF32(sum, I * H),
        acc: heap.readF32(acc, I * D),
      };
    });
  }

  function finalizeState(state, options) {
    readState(state, 'state');
    const { empty = 'nan' } = checkOptionNames(options, ['empty']);
    // 'nearest' needs the keys, which a state no longer has.
    oneOf(
      empty,
      engine.emptyPolicies.filter((p) => p !== 'nearest'),
      'options.empty',
    );
    const { queries: I, heads: H, width: D } = state;
    return engine.withHeap((heap) => {
      const out = heap.alloc(I * D * 4);
      checkResult(
        engine.finalizeStates({
          max: heap.f32(state.max),
          sum: heap.f32(state.sum),
          acc: heap.f32(state.acc),
          I,
          D,
          H,
          empty,
          out,
        }),
      );
      return heap.readF32(out, I * D);
    });
  }

  return { attentionState, mergeStates, finalizeState };
}
