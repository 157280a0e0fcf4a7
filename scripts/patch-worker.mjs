// Post-link step of the ES6 pthreads build (CMakeLists.txt): Emscripten 3.1.6's worker.js imports the module by a
// literal path when the page sends none, and bundlers follow that literal into a second copy of the engine (and, in
// Vite 5/6, into a code-split classic worker they refuse to build). The module always sends its own URL
// (cpp/bindings/threads_es.pre.js), so the worker only ever needs the non-literal import, which bundlers must skip.
import { readFileSync, writeFileSync } from 'node:fs';

const [file] = process.argv.slice(2);
const text = readFileSync(file, 'utf8');
const literal = /\(e\.data\.urlOrBlob\?import\(e\.data\.urlOrBlob\):import\("\.\/[\w.]+\.mjs"\)\)/;
if (!literal.test(text))
  throw new Error(`${file}: the import this step rewrites is not there (another Emscripten version?)`);
// A module that fails to import (a bundler that rewrote import.meta.url to a file: URL, a file left behind) is rethrown
// from a task, which makes it an error event on the Worker: the loader handles that one at once and falls back, where
// a rejected promise would only be logged here and leave the loader waiting.
const rethrow = 'function(error){setTimeout(function(){throw error});return new Promise(function(){})}';
writeFileSync(
  file,
  text.replace(literal, `import(/* webpackIgnore: true */ /* @vite-ignore */ e.data.urlOrBlob).catch(${rethrow})`),
);
