// The app's code from its own origin, the package's .wasm and pthreads worker from the origin in ?cdn=.
import { init } from '../../../web/src/index.js';
import { compute } from '../consumers/app/compute.js';

const cdn = new URLSearchParams(location.search).get('cdn');
const fetched = [];
init({
  threads: 2,
  locateFile: (name) => {
    fetched.push(cdn + name);
    return cdn + name;
  },
}).then(
  (ka) => postMessage({ ...compute(ka), fetched }),
  (e) => postMessage({ error: String((e && e.stack) || e) }),
);
