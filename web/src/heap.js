// With engine.js, the only code that touches the module: this file owns the wasm heap (scoped allocation, copy in,
// copy out, free on every path), engine.js the calls into the core. The API modules see neither `module` nor HEAP*.
import { KernelAttentionError } from './errors.js';

/**
 * Runs body(heap) with a scoped allocator; everything it allocates is freed when body returns or throws.
 * Heap views are re-read on every access because memory growth replaces (detaches) them.
 */
const MAX_BYTES = 2 ** 31;

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
  const alloc = (bytes) => {
    // malloc takes a 32-bit size: a larger request would wrap around to a small block and be overrun.
    if (!(bytes <= MAX_BYTES)) {
      throw new KernelAttentionError(
        'OutOfMemory',
        `the call would need ${(bytes / 2 ** 20).toFixed(0)} MiB of WebAssembly memory in one block, beyond its 2 GiB`,
      );
    }
    const ptr = module._malloc(Math.max(bytes, 8));
    if (!ptr) {
      throw new KernelAttentionError('OutOfMemory', `could not allocate ${bytes} bytes of WebAssembly memory`);
    }
    pointers.push(ptr);
    return ptr;
  };
  const heap = {
    alloc,
    /** Copies numbers in as float32; returns the byte offset. */
    f32(data) {
      const ptr = alloc(data.length * 4);
      module.HEAPF32.set(data, ptr >> 2);
      return ptr;
    },
    /** Copies numbers in as float64 (8-byte aligned: malloc aligns to 8). */
    f64(data) {
      const ptr = alloc(data.length * 8);
      module.HEAPF64.set(data, ptr >> 3);
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
      return ptr;
    },
    /** setF32() of rows × cols numbers minus `shift` per column, as f32Shifted(). */
    setF32Shifted(ptr, data, cols, shift) {
      if (!shift) module.HEAPF32.set(data, ptr >> 2);
      else writeShifted(module.HEAPF32, ptr >> 2, data, cols, shift);
    },
    u8(data) {
      const ptr = alloc(data.length);
      module.HEAPU8.set(data, ptr);
      return ptr;
    },
    i32(data) {
      const ptr = alloc(data.length * 4);
      module.HEAP32.set(data, ptr >> 2);
      return ptr;
    },
    /** Copies float32 data into the n floats at ptr (already allocated). */
    setF32(ptr, data) {
      module.HEAPF32.set(data, ptr >> 2);
    },
    setU8(ptr, data) {
      module.HEAPU8.set(data, ptr);
    },
    setI32(ptr, data) {
      module.HEAP32.set(data, ptr >> 2);
    },
    /** The double at ptr, and setting it. */
    getF64(ptr) {
      return module.HEAPF64[ptr >> 3];
    },
    setF64(ptr, value) {
      module.HEAPF64[ptr >> 3] = value;
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
