// Rollup 4 with @rollup/plugin-node-resolve, @rollup/plugin-terser and @web/rollup-plugin-import-meta-assets (which
// copies the files named by new URL(…, import.meta.url): the .wasm and the pthreads worker) of ../app: dist/page and
// dist/threads, one build each; the HTML pages are copied.
import { copyFileSync } from 'node:fs';
import { rollup } from 'rollup';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import terser from '@rollup/plugin-terser';
import { importMetaAssets } from '@web/rollup-plugin-import-meta-assets';

for (const [page, entries] of [
  ['page', ['page']],
  ['threads', ['threads', 'worker']],
]) {
  const bundle = await rollup({
    input: entries.map((e) => `app/${e}.js`),
    // The plugin rewrites the package's new URL(…)s; the app's own worker is an entry here, not a file to copy as is.
    plugins: [
      nodeResolve({ browser: true }),
      importMetaAssets({ include: '**/node_modules/kernel-attention/**' }),
      terser(),
    ],
  });
  await bundle.write({ dir: `dist/${page}`, format: 'es' });
  await bundle.close();
  copyFileSync(`app/${page}.html`, `dist/${page}/${page}.html`);
}
