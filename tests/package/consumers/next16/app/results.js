// The computation of ../app/compute.js (copied here as compute.js by nextjs.test.mjs), shown in a server-rendered
// page as a data attribute the test reads back.
import { init } from 'kernel-attention';
import { compute } from './compute.js';

export async function Results() {
  const ka = await init();
  return <pre id="results" data-results={JSON.stringify([compute(ka)])} />;
}
