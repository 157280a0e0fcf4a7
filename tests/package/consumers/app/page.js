// A page that uses the package on its main thread, with no bundler configuration: the single-thread build.
import { init } from 'kernel-attention';
import { compute } from './compute.js';

init().then(
  (ka) => {
    window.results = [compute(ka)];
  },
  (e) => {
    window.results = [{ error: String(e) }];
  },
);
