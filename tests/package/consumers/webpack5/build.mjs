// webpack 5 with its defaults (production mode, web target) of ../app: dist/page and dist/threads, one build each;
// the HTML pages are copied, and every warning webpack gave is written to dist/warnings.json for the test.
import { copyFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import webpack from 'webpack';

const warnings = [];
for (const page of ['page', 'threads']) {
  const compiler = webpack({
    mode: 'production',
    context: resolve('app'),
    entry: { [page]: `./${page}.js` },
    output: { path: resolve('dist', page), clean: true },
  });
  const stats = await new Promise((ok, fail) => compiler.run((error, result) => (error ? fail(error) : ok(result))));
  await new Promise((ok) => compiler.close(ok));
  if (stats.hasErrors()) throw new Error(stats.toString({ all: false, errors: true }));
  const { warnings: given } = stats.toJson({ all: false, warnings: true });
  warnings.push(...given.map((w) => ({ page, name: w.name, module: w.moduleName, message: w.message })));
  copyFileSync(`app/${page}.html`, `dist/${page}/${page}.html`);
}
writeFileSync('dist/warnings.json', JSON.stringify(warnings, null, 2));
