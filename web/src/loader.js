// The only module that knows how the WebAssembly is found and compiled. The build embeds the wasm in one ES module
// (see docs/design.md), so loading needs no URL, fetch or file access in Node, browsers, workers or bundlers.
import createKernelAttention from '../dist/kernel_attention.mjs';
import { KernelAttentionError } from './errors.js';

// The smallest module that uses a SIMD128 instruction: () -> v128 { i8x16.splat(i32.const 0) }.
const simdProbe = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type section: () -> v128
  0x03, 0x02, 0x01, 0x00, // function section
  0x0a, 0x08, 0x01, 0x06, 0x00, 0x41, 0x00, 0xfd, 0x0f, 0x0b, // code: i32.const 0; i8x16.splat; end
]);

export async function loadModule() {
  if (typeof WebAssembly !== 'object') {
    throw new KernelAttentionError('Unsupported', 'this JavaScript runtime has no WebAssembly');
  }
  if (!WebAssembly.validate(simdProbe)) {
    throw new KernelAttentionError('Unsupported',
      'this runtime lacks WebAssembly SIMD (Chrome/Edge 91+, Firefox 89+, Safari 16.4+, Node 16.4+ have it)');
  }
  try {
    return await createKernelAttention();
  } catch (cause) {
    const error = new KernelAttentionError('Unsupported', `the WebAssembly module failed to load: ${cause?.message ?? cause}`);
    error.cause = cause;
    throw error;
  }
}
