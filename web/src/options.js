// Reads the options shared by attention() and weights() into the call description the engine (engine.js) takes.
import { describe, KernelAttentionError } from './errors.js';
import { attentionFrame, coreEmpty } from './frame.js';
import {
  bandwidths,
  boolean,
  checkOptionNames,
  groupIds,
  numericArray,
  oneOf,
  ownLength,
  positiveInteger,
  rowsOf,
} from './validate.js';

export const SHARED_OPTIONS = ['dim', 'kernel', 'scale', 'bandwidth', 'mask', 'causal', 'groups', 'heads', 'empty'];

/**
 * Validates queries, keys (and values when given) and options against what `engine`'s core supports; returns the
 * call description, or throws before anything is allocated.
 */
export function readCall(engine, queries, keys, values, options, known = SHARED_OPTIONS) {
  if (options === undefined) {
    throw new KernelAttentionError(
      'BadArgument',
      '`options` is required: at least `{ dim }`, the number of columns of queries and keys',
      'options',
    );
  }
  checkOptionNames(options, known);
  const { dim, kernel = 'softmax', scale, bandwidth, mask, causal = false, groups, heads = 1, empty = 'nan' } = options;
  positiveInteger(dim, 'options.dim');
  queries = numericArray(queries, 'queries');
  keys = numericArray(keys, 'keys');
  const I = rowsOf(queries, dim, 'queries', 'options.dim');
  const J = rowsOf(keys, dim, 'keys', 'options.dim');
  if (J === 0)
    throw new KernelAttentionError('BadShape', '`keys` must hold at least one row; got an empty array', 'keys');

  let D = 0;
  // The outputs' type follows the values': float32 for a Float32Array, else float64, as JS numbers are (frame.js).
  const values64 = values !== undefined && !(values instanceof Float32Array);
  if (values !== undefined) {
    values = numericArray(values, 'values');
    if (values.length === 0 || values.length % J !== 0) {
      throw new KernelAttentionError(
        'BadShape',
        `\`values\` must have J·D entries for J = ${J} keys and some D ≥ 1; got length ${values.length}`,
        'values',
      );
    }
    D = values.length / J;
  }

  oneOf(
    kernel,
    engine.kernels.map((k) => k.name),
    'options.kernel',
  );
  positiveInteger(heads, 'options.heads');
  if (dim % heads !== 0) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`options.heads\` = ${heads} must divide \`options.dim\` = ${dim}`,
      'options.heads',
    );
  }
  if (values !== undefined && D % heads !== 0) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`options.heads\` = ${heads} must divide the value width D = ${D} (values.length / J)`,
      'options.heads',
    );
  }

  let scaleValue = 0;
  let bandwidthValue = null;
  if (!engine.kernel(kernel).distance) {
    if (bandwidth !== undefined) {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.bandwidth\` applies to distance kernels, not '${kernel}' (use \`scale\`)`,
        'options.bandwidth',
      );
    }
    scaleValue = scale === undefined ? 1 / Math.sqrt(dim / heads) : scale;
    if (typeof scaleValue !== 'number' || !Number.isFinite(Math.fround(scaleValue))) {
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.scale\` must be a finite number within float32 range; got ${describe(scale)}`,
        'options.scale',
      );
    }
  } else {
    if (scale !== undefined) {
      const scaled = engine.kernels
        .filter((k) => !k.distance)
        .map((k) => `'${k.name}'`)
        .join(', ');
      throw new KernelAttentionError(
        'BadArgument',
        `\`options.scale\` applies to ${scaled} only; kernel '${kernel}' uses \`bandwidth\``,
        'options.scale',
      );
    }
    bandwidthValue = bandwidths(bandwidth === undefined ? 1 : bandwidth, dim, 'options.bandwidth');
  }

  let leaveOneOut = false;
  let keyPadding = null;
  let general = null;
  if (mask !== undefined) {
    if (mask === 'loo') {
      if (I !== J) {
        throw new KernelAttentionError(
          'BadShape',
          `\`options.mask\` 'loo' needs as many queries as keys; got I = ${I}, J = ${J}`,
          'options.mask',
        );
      }
      leaveOneOut = true;
    } else if (mask instanceof Uint8Array && ArrayBuffer.isView(mask) && ownLength(mask, 'options.mask') === J) {
      keyPadding = mask;
    } else if (mask instanceof Uint8Array && ArrayBuffer.isView(mask) && mask.length === I * J) {
      general = mask;
    } else {
      throw new KernelAttentionError(
        mask instanceof Uint8Array && ArrayBuffer.isView(mask) ? 'BadShape' : 'BadArgument',
        `\`options.mask\` must be 'loo', a Uint8Array of length J = ${J} (key padding) or I·J = ${I * J} (general); ` +
          `got ${describe(mask)}`,
        'options.mask',
      );
    }
  }
  boolean(causal, 'options.causal');

  let queryGroups = null;
  let keyGroups = null;
  if (groups !== undefined) {
    checkOptionNames(groups, ['queries', 'keys'], 'options.groups');
    queryGroups = groupIds(groups.queries, I, 'options.groups.queries');
    keyGroups = groupIds(groups.keys, J, 'options.groups.keys');
  }
  oneOf(empty, engine.emptyPolicies, 'options.empty');

  return {
    queries,
    keys,
    values,
    values64,
    I,
    J,
    M: dim,
    D,
    kernel,
    distance: engine.kernel(kernel).distance,
    scale: scaleValue,
    bandwidth: bandwidthValue,
    heads,
    causal,
    leaveOneOut,
    keyPadding,
    general,
    queryGroups,
    keyGroups,
    empty,
  };
}

/** Throws unless `values` was given to `fn` (its signature names the argument order in the message). */
export function requireValues(values, fn) {
  if (values === undefined) {
    throw new KernelAttentionError(
      'BadArgument',
      `\`values\` is required: ${fn}(queries, keys, values, options)`,
      'values',
    );
  }
}

/** The call's frame (frame.js, attentionFrame), chosen once per call: set `call.frame` first to choose another. */
export function frameOf(call) {
  call.frame ??= attentionFrame(call, call.distance);
  return call.frame;
}

/**
 * Copies the call's inputs into the heap, in its frame (frameOf): byte offsets of queries, keys and values (0 without
 * values), and the CallOptions the engine takes. Outputs come back through outputOf() (frame.js).
 */
export function copyCall(heap, call) {
  const frame = frameOf(call);
  return {
    q: heap.f32Shifted(call.queries, call.M, frame.queries),
    k: heap.f32Shifted(call.keys, call.M, frame.keys),
    v: call.values === undefined ? 0 : heap.f32Shifted(call.values, call.D, frame.values),
    options: {
      kernel: call.kernel,
      scale: call.scale,
      bandwidth: call.bandwidth ? heap.f32(call.bandwidth) : 0,
      heads: call.heads,
      causal: call.causal,
      leaveOneOut: call.leaveOneOut,
      keyPadding: call.keyPadding ? heap.u8(call.keyPadding) : 0,
      generalMask: call.general ? heap.u8(call.general) : 0,
      queryGroups: call.queryGroups ? heap.i32(call.queryGroups) : 0,
      keyGroups: call.keyGroups ? heap.i32(call.keyGroups) : 0,
      empty: coreEmpty(call.empty, frame.values),
    },
  };
}
