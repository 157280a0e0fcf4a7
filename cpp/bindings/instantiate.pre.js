// Compiles the module's separate .wasm file. Emscripten 3.1.6's own loader would call fetch() on a file path in Node
// 20 and fail, so this reads the bytes itself there (node:fs through a non-literal specifier, which bundlers leave
// alone). In browsers it compiles while downloading (instantiateStreaming), and from the bytes when the server does
// not send application/wasm. Callers may pass wasmBinary (bytes) or locateFile (where the .wasm is) instead.
// Module.wasmUrl (the loader's: where a bundler put the file) wins over Emscripten's own guess. Runs inside the
// module factory, where wasmBinaryFile (already passed through locateFile), _scriptDir and abort are in scope.
// A pthread's worker.js brings its own instantiateWasm (the module compiled once, posted by the main thread): keep it.
if (!Module['instantiateWasm']) Module['instantiateWasm'] = function (imports, receiveInstance) {
  var url = Module['wasmUrl'] || wasmBinaryFile;
  // In Node an ES6 build for the web has no script directory: resolve the bare file name against the module's URL.
  if (!Module['wasmUrl'] && !Module['locateFile'] && typeof _scriptDir === 'string' && /^file:/.test(_scriptDir) &&
      !/^([a-z]+:|\/)/i.test(url)) url = new URL(url, _scriptDir).href;
  var instantiated;
  if (Module['wasmBinary']) {
    instantiated = WebAssembly.instantiate(Module['wasmBinary'], imports);
  } else if (typeof process === 'object' && process.versions && process.versions.node && !/^(https?|blob|data):/.test(url)) {
    var fsSpecifier = 'node:fs/promises';
    instantiated = import(fsSpecifier)
      .then(function (fs) { return fs.readFile(/^file:/.test(url) ? new URL(url) : url); })
      .then(function (bytes) { return WebAssembly.instantiate(bytes, imports); });
  } else {
    // Where a bundler did not copy the file to the loader's URL (esbuild), the app may have put it next to the module.
    var fallback = Module['wasmUrl'] && url !== wasmBinaryFile ? wasmBinaryFile : null;
    var get = function (from) {
      return fetch(from, { credentials: 'same-origin' }).then(function (response) {
        if (response.status === 404 && fallback && from !== fallback) return get(fallback);
        if (!response.ok) throw new Error('HTTP ' + response.status + ' for ' + from);
        return response;
      });
    };
    instantiated = get(url).then(function (response) {
      if (typeof WebAssembly.instantiateStreaming !== 'function') {
        return response.arrayBuffer().then(function (bytes) { return WebAssembly.instantiate(bytes, imports); });
      }
      // A server that sends another Content-Type makes streaming reject with a TypeError before compiling anything.
      var copy = response.clone();
      return WebAssembly.instantiateStreaming(response, imports).catch(function (error) {
        if (!(error instanceof TypeError)) throw error;
        return copy.arrayBuffer().then(function (bytes) { return WebAssembly.instantiate(bytes, imports); });
      });
    });
  }
  instantiated
    .then(function (result) { receiveInstance(result.instance, result.module); })
    .catch(function (error) {
      // Tell the loader why (abort() alone would only say "Aborted"), then reject the factory's promise.
      if (Module['onLoadError']) Module['onLoadError'](error);
      // abort() rejects the factory's promise and then throws, which here would only be an unhandled rejection.
      try { abort(error && error.message || error); } catch (ignored) {}
    });
  return {};
};
