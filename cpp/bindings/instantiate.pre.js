// Compiles the module's separate .wasm (docs/package.md, Loading). In Node the loader reads the bytes and passes them
// as wasmBinary (Emscripten 3.1.6's own loader would call fetch() on a file path and fail). In browsers this compiles
// while downloading (instantiateStreaming) from Module.wasmUrl (the loader's: where a bundler put the file) or
// Emscripten's own wasmBinaryFile (already passed through locateFile); a server that does not send application/wasm
// gets its bytes compiled instead, once checked to be WebAssembly (a dev server's HTML page for a missing file is
// named as such, with the URL). Runs inside the module factory, where wasmBinaryFile and abort are in scope.
// A pthread's worker.js brings its own instantiateWasm (the module compiled once, posted by the main thread): keep it.
if (!Module['instantiateWasm']) Module['instantiateWasm'] = function (imports, receiveInstance) {
  var url = Module['wasmUrl'] || wasmBinaryFile;
  var fromBytes = function (bytes) {
    var head = new Uint8Array(bytes, 0, Math.min(4, bytes.byteLength));
    if (head[0] !== 0 || head[1] !== 0x61 || head[2] !== 0x73 || head[3] !== 0x6d) {
      var start = String.fromCharCode.apply(null, new Uint8Array(bytes, 0, Math.min(16, bytes.byteLength)));
      throw new Error(url + ' is not a WebAssembly file (it starts with ' + JSON.stringify(start) + ')');
    }
    return WebAssembly.instantiate(bytes, imports);
  };
  var instantiated;
  if (Module['wasmBinary']) {
    instantiated = WebAssembly.instantiate(Module['wasmBinary'], imports);
  } else {
    instantiated = fetch(url, { credentials: 'same-origin' }).then(function (response) {
      if (!response.ok) throw new Error('HTTP ' + response.status + ' for ' + url);
      var wasm = /^application\/wasm\b/.test(response.headers.get('Content-Type') || '');
      if (!wasm || typeof WebAssembly.instantiateStreaming !== 'function') return response.arrayBuffer().then(fromBytes);
      return WebAssembly.instantiateStreaming(response, imports);
    });
  }
  instantiated
    .then(function (result) { receiveInstance(result.instance, result.module); })
    .catch(function (error) {
      // Tell the loader why and where (abort() alone would only say "Aborted"), then reject the factory's promise.
      if (Module['onLoadError']) Module['onLoadError'](error, Module['wasmBinary'] ? undefined : url);
      // abort() rejects the factory's promise and then throws, which here would only be an unhandled rejection.
      try { abort(error && error.message || error); } catch (ignored) {}
    });
  return {};
};
