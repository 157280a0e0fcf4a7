// With engine.js, the only code that touches the module: this file owns the wasm heap (scoped allocation, copy in,
// copy out, free on every path; the long-lived copies models keep their sample in), engine.js the calls into the
// core. The API modules see neither `module` nor HEAP*.
import { KernelAttentionError } from './errors.js';

// The WebAssembly memory (2 GiB) and malloc's largest block (its size argument is 32 bits): what every size check of
// the API measures against.
export const MAX_WASM_BYTES = 2 ** 31;

/**
 * Refuses, before anything is allocated, a result of `floats` float32 values beyond the 2 GiB WebAssembly memory
 * (blamed on `argument`, whose row count makes it that large; `fn` and `shape` name the call and the result's shape).
 */
export function tooLarge(floats, fn, argument, shape) {
  if (floats * 4 > MAX_WASM_BYTES) {
    throw new KernelAttentionError(
      'OutOfMemory',
      `${fn} would return ${shape} = ${floats} floats (${((floats * 4) / 2 ** 20).toFixed(0)} MiB) for these \`${argument}\`, ` +
        'beyond the 2 GiB WebAssembly memory',
      argument,
    );
  }
}

// Per module: bytes copied from JS into the heap since the module was first used (heapTraffic(), for the tests that a
// model's predict copies only its queries), and the blocks and bytes that resident() allocations hold now.
const ledgers = new WeakMap();
function ledger(module) {
  let l = ledgers.get(module);
  if (!l) ledgers.set(module, (l = { traffic: 0, residentBlocks: 0, residentBytes: 0 }));
  return l;
}

/** Bytes written into `module`'s heap from JS so far (every copy in heap.js counts; reads do not). */
export const heapTraffic = (module) => ledger(module).traffic;

/** { blocks, bytes } that live resident() allocations of `module` hold. */
export function residentUse(module) {
  const { residentBlocks: blocks, residentBytes: bytes } = ledger(module);
  return { blocks, bytes };
}

/** malloc(bytes) or a typed OutOfMemory error. */
function allocate(module, bytes) {
  // malloc takes a 32-bit size: a larger request would wrap around to a small block and be overrun.
  if (!(bytes <= MAX_WASM_BYTES)) {
    throw new KernelAttentionError(
      'OutOfMemory',
      `the call would need ${(bytes / 2 ** 20).toFixed(0)} MiB of WebAssembly memory in one block, beyond its 2 GiB`,
    );
  }
  const ptr = module._malloc(Math.max(bytes, 8));
  if (!ptr) {
    throw new KernelAttentionError('OutOfMemory', `could not allocate ${bytes} bytes of WebAssembly memory`);
  }
  return ptr;
}

/**
 * A long-lived copy of `arrays` (typed arrays of float32 values, Int32Arrays kept as int32, or null: offset 0) in the heap, outside any scope:
 * { offsets, bytes, retain(), release(), attach(free) }. It is reference-counted: retain() adds an owner, release() drops one and
 * frees the blocks with the last (further calls do nothing). On an allocation failure nothing stays allocated.
 */
export function resident(module, arrays) {
  const l = ledger(module);
  const offsets = [];
  let bytes = 0;
  try {
    for (const a of arrays) {
      if (!a) {
        offsets.push(0);
        continue;
      }
      const ptr = allocate(module, a.length * 4);
      offsets.push(ptr);
      l.residentBlocks++;
      l.residentBytes += a.length * 4;
      bytes += a.length * 4;
      // Int32Array: a mixed regression's codes (typed array set() would convert them to float32 values).
      (a instanceof Int32Array ? module.HEAP32 : module.HEAPF32).set(a, ptr >> 2);
      l.traffic += a.length * 4;
    }
  } catch (e) {
    for (const ptr of offsets) if (ptr) module._free(ptr);
    l.residentBlocks -= offsets.filter(Boolean).length;
    l.residentBytes -= bytes;
    throw e;
  }
  let owners = 1;
  const cleanups = [];
  return {
    offsets,
    bytes,
    /** Runs free() at the last release(): what the owners built on this copy (a grid's bins). */
    attach(free) {
      cleanups.push(free);
    },
    retain() {
      if (owners === 0) throw new Error('resident(): retain() after the last release()');
      owners++;
    },
    release() {
      if (owners === 0 || --owners > 0) return;
      for (const free of cleanups.splice(0)) free();
      for (const ptr of offsets) {
        if (!ptr) continue;
        module._free(ptr);
        l.residentBlocks--;
      }
      l.residentBytes -= bytes;
    },
  };
}

/**
 * Runs body(heap) with a scoped allocator; everything it allocates is freed when body returns or throws.
 * Heap views are re-read on every access because memory growth replaces (detaches) them.
 */
export function withHeap(module, body) {
  const heap = openHeap(module);
  try {
    return body(heap);
  } finally {
    heap.free();
  }
}

/**
 * The scoped allocator of withHeap, for work that spans several steps (a generator, an async call): the caller
 * must call free() on every path (in a `finally`); free() is idempotent.
 */
export function openHeap(module) {
  let pointers = [];
  const l = ledger(module);
  const alloc = (bytes) => {
    const ptr = allocate(module, bytes);
    pointers.push(ptr);
    return ptr;
  };
  const heap = {
    alloc,
    /** Copies numbers in as float32; returns the byte offset. */
    f32(data) {
      const ptr = alloc(data.length * 4);
      module.HEAPF32.set(data, ptr >> 2);
      l.traffic += data.length * 4;
      return ptr;
    },
    /** Copies numbers in as float64 (8-byte aligned: malloc aligns to 8). */
    f64(data) {
      const ptr = alloc(data.length * 8);
      module.HEAPF64.set(data, ptr >> 3);
      l.traffic += data.length * 8;
      return ptr;
    },
    /**
     * Copies rows × cols numbers in as float32 after subtracting `shift` per column in double (frame.js): one pass
     * from the caller's array into the heap. f32() when `shift` is null.
     */
    f32Shifted(data, cols, shift) {
      if (!shift) return heap.f32(data);
      const ptr = alloc(data.length * 4);
      writeShifted(module.HEAPF32, ptr >> 2, data, cols, shift);
      l.traffic += data.length * 4;
      return ptr;
    },
    /** setF32() of rows × cols numbers minus `shift` per column, as f32Shifted(). */
    setF32Shifted(ptr, data, cols, shift) {
      if (!shift) module.HEAPF32.set(data, ptr >> 2);
      else writeShifted(module.HEAPF32, ptr >> 2, data, cols, shift);
      l.traffic += data.length * 4;
    },
    u8(data) {
      const ptr = alloc(data.length);
      module.HEAPU8.set(data, ptr);
      l.traffic += data.length;
      return ptr;
    },
    i32(data) {
      const ptr = alloc(data.length * 4);
      module.HEAP32.set(data, ptr >> 2);
      l.traffic += data.length * 4;
      return ptr;
    },
    /** Copies float32 data into the n floats at ptr (already allocated). */
    setF32(ptr, data) {
      module.HEAPF32.set(data, ptr >> 2);
      l.traffic += data.length * 4;
    },
    setU8(ptr, data) {
      module.HEAPU8.set(data, ptr);
      l.traffic += data.length;
    },
    setI32(ptr, data) {
      module.HEAP32.set(data, ptr >> 2);
      l.traffic += data.length * 4;
    },
    /** The double at ptr, and setting it. */
    getF64(ptr) {
      return module.HEAPF64[ptr >> 3];
    },
    setF64(ptr, value) {
      module.HEAPF64[ptr >> 3] = value;
      l.traffic += 8;
    },
    /** Moves n doubles from `from` to `to` (both allocated). */
    moveF64(to, from, n) {
      module.HEAPF64.copyWithin(to >> 3, from >> 3, (from >> 3) + n);
    },
    /** Copies n floats at ptr into `target` from index `at` (no intermediate copy). */
    readF32Into(ptr, n, target, at) {
      target.set(module.HEAPF32.subarray(ptr >> 2, (ptr >> 2) + n), at);
    },
    /** A fresh Float32Array copy of n floats at ptr (never a view of the heap). */
    readF32(ptr, n) {
      return module.HEAPF32.slice(ptr >> 2, (ptr >> 2) + n);
    },
    readF64(ptr, n) {
      return module.HEAPF64.slice(ptr >> 3, (ptr >> 3) + n);
    },
    free() {
      for (const ptr of pointers) module._free(ptr);
      pointers = [];
    },
  };
  return heap;
}

/** view[at + i] = data[i] − shift[i mod cols], rounded once to float32. */
function writeShifted(view, at, data, cols, shift) {
  for (let i = 0; i < data.length; i += cols) {
    for (let c = 0; c < cols; c++) view[at + i + c] = data[i + c] - shift[c];
  }
}
