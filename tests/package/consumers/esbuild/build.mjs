// esbuild (--bundle --format=esm --splitting) of ../app: dist/page and dist/threads, one build each; the HTML pages are
// copied. esbuild does not copy files named by new URL(…, import.meta.url): as the README says, copy the package's
// .wasm and worker files into the output folder, where the modules look for them next.
import { copyFileSync, readdirSync } from 'node:fs';
import { build } from 'esbuild';

const files = 'node_modules/kernel-attention/web/dist/';
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
  for (const f of readdirSync(files)) if (/\.(wasm|worker\.js)$/.test(f)) copyFileSync(files + f, `dist/${page}/${f}`);
}
