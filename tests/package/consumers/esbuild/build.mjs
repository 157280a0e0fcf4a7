// esbuild of ../app: dist/page and dist/threads as ES modules (--bundle --format=esm --splitting), one build each, the
// HTML pages copied; and dist/iife in esbuild's default format (IIFE, classic scripts): the page, and a page whose
// classic Worker runs iife-worker.js. esbuild does not copy files named by new URL(…, import.meta.url): as the README
// says, copy the package's .wasm and worker files into the output folder, where the modules look for them next.
import { copyFileSync, readdirSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';

const files = 'node_modules/kernel-attention/web/dist/';
const copyFiles = (out) => {
  for (const f of readdirSync(files)) if (/\.(wasm|worker\.js)$/.test(f)) copyFileSync(files + f, `${out}/${f}`);
};
for (const [page, entries] of [
  ['page', ['page']],
  ['threads', ['threads', 'worker']],
]) {
  await build({
    entryPoints: entries.map((e) => `app/${e}.js`),
    bundle: true,
    format: 'esm',
    splitting: true,
    minify: true,
    outdir: `dist/${page}`,
    logLevel: 'error',
  });
  copyFileSync(`app/${page}.html`, `dist/${page}/${page}.html`);
  copyFiles(`dist/${page}`);
}

await build({
  entryPoints: ['app/page.js', 'iife-worker.js'],
  bundle: true,
  minify: true,
  outdir: 'dist/iife',
  entryNames: '[name]',
  logLevel: 'error',
});
const html = (script) =>
  '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>iife</title><link rel="icon" href="data:,">' +
  `</head>\n<body><script>${script}</script></body></html>\n`;
writeFileSync('dist/iife/page.html', html('</script><script src="./page.js">'));
writeFileSync(
  'dist/iife/worker.html',
  html(
    "const w = new Worker('./iife-worker.js'); w.onmessage = (e) => { window.results = [e.data]; };" +
      ' w.onerror = (e) => { window.results = [{ error: e.message }]; };',
  ),
);
copyFiles('dist/iife');
