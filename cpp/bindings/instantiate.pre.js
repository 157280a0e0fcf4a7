// Compiles the wasm embedded in this single-file module from its bytes. Emscripten 3.1.6 would otherwise fetch() its
// own data: URL first, which a strict Content-Security-Policy (connect-src without data:) reports as a violation.
// Runs inside the module factory, where wasmBinaryFile and tryParseAsDataURI are in scope.
// A pthread's worker.js brings its own instantiateWasm (the module compiled once, posted by the main thread): keep it.
if (!Module['instantiateWasm']) Module['instantiateWasm'] = function (imports, receiveInstance) {
  WebAssembly.instantiate(tryParseAsDataURI(wasmBinaryFile), imports)
    .then(function (result) { receiveInstance(result.instance, result.module); })
    .catch(abort);
  return {};
};
