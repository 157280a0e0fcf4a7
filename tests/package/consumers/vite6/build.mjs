// vite build of ../app: dist/page from page.html with no configuration; dist/threads from threads.html with the
// README's configuration (worker.format 'es': the app's own Worker imports the package, whose loader imports its builds
// dynamically, which Vite's default worker format cannot hold).
import { build } from 'vite';

const common = { root: 'app', configFile: false, logLevel: 'error' };
await build({
  ...common,
  build: { outDir: '../dist/page', emptyOutDir: true, rollupOptions: { input: 'app/page.html' } },
});
await build({
  ...common,
  worker: { format: 'es' },
  build: { outDir: '../dist/threads', emptyOutDir: true, rollupOptions: { input: 'app/threads.html' } },
});
