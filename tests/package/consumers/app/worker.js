import { init } from 'kernel-attention';
import { compute } from './compute.js';

init().then((ka) => postMessage(compute(ka)), (e) => postMessage({ error: String((e && e.stack) || e) }));
