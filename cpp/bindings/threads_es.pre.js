// The ES6 pthreads build: each pthread's worker imports the very module file the page or worker already loaded (its
// import.meta.url, which bundlers keep for a chunk), so no bundler follows a second import into a second copy.
if (!Module['mainScriptUrlOrBlob'] && typeof _scriptDir === 'string') Module['mainScriptUrlOrBlob'] = _scriptDir;
