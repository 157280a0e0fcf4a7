// Parcel 2 (its API, no configuration) of ../app: dist/page from page.html and dist/threads from threads.html.
import { Parcel } from '@parcel/core';

for (const page of ['page', 'threads']) {
  const bundler = new Parcel({
    entries: `app/${page}.html`,
    defaultConfig: '@parcel/config-default',
    mode: 'production',
    shouldDisableCache: true,
    defaultTargetOptions: { distDir: `dist/${page}`, publicUrl: './' },
    logLevel: 'error',
  });
  await bundler.run();
}
