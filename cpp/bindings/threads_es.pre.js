// The ES6 pthreads build: each pthread's worker imports the very module file the page or worker already loaded (its
// import.meta.url, which bundlers keep for a chunk), so no bundler follows a second import into a second copy.
// A bundler that replaced import.meta.url with a file: URL at build time (webpack 5) leaves nothing a worker could
// import: stop here, before the .wasm is downloaded, so that the loader falls back to the single-thread build.
if (typeof _scriptDir === 'string' && /^file:/.test(_scriptDir) && typeof location === 'object' && location.protocol !== 'file:') {
  throw new Error('the bundler replaced import.meta.url with a file: URL, so pthreads workers cannot import the module');
}
if (!Module['mainScriptUrlOrBlob'] && typeof _scriptDir === 'string') Module['mainScriptUrlOrBlob'] = _scriptDir;
