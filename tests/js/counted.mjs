// A module whose _malloc and _free are counted, for the white-box tests that every call gives back what it allocated.
import { readFileSync } from 'node:fs';
import createKernelAttention from '../../web/dist/kernel_attention.mjs';

/**
 * A fresh single-thread module whose allocations go through a ledger: `live` holds the pointers allocated and not yet
 * freed; `stats.mallocs` counts allocations, `stats.badFrees` frees of pointers it did not allocate (or twice), and
 * `stats.failNext = k` makes the k-th next allocation fail (a simulated out-of-memory).
 */
export async function countedModule() {
  // Made here without the loader, which reads the .wasm in Node (web/src/locate.js): given its bytes.
  const module = await createKernelAttention({
    wasmBinary: readFileSync(new URL('../../web/dist/kernel_attention.wasm', import.meta.url)),
  });
  // Emscripten's export stubs replace themselves with the raw wasm export on their first call, which would silently
  // drop a wrapper installed before that: call each once first.
  module._free(module._malloc(8));
  const [malloc, free] = [module._malloc, module._free];
  const live = new Set();
  const stats = { mallocs: 0, badFrees: 0, failNext: 0 };
  module._malloc = (bytes) => {
    stats.mallocs++;
    if (stats.failNext > 0 && --stats.failNext === 0) return 0;
    const ptr = malloc(bytes);
    if (ptr) live.add(ptr);
    return ptr;
  };
  module._free = (ptr) => {
    if (!live.delete(ptr)) stats.badFrees++;
    free(ptr);
  };
  return { module, live, stats };
}
