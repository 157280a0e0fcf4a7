// The page's two workers: compute (every kernel-attention call, worker.js) and parser (the table reader,
// parse-worker.js), each a request/answer channel; and fail(), where an error of either ends up.
import { showProgress } from './busy.js';
import { channel } from './channel.js';
import { noteViolation, publish, state } from './state.js';
import { showError, ui } from './ui.js';
import { errorText } from './wording.js';

const workerUrl = new URL('./worker.js', import.meta.url);
const threadsParam = new URLSearchParams(location.search).get('threads');
if (threadsParam) workerUrl.searchParams.set('threads', threadsParam);
export const compute = channel(
  new Worker(workerUrl, { type: 'module' }),
  (msg) => {
    if (msg.op === 'csp') noteViolation(`compute worker: ${msg.violation}`);
    if (msg.op === 'progress') showProgress(msg);
  },
  (err) => fail(err),
);
export const parser = channel(
  new Worker(new URL('./parse-worker.js', import.meta.url), { type: 'module' }),
  (msg) => {
    if (msg.op === 'progress') ui.progress.value = msg.fraction;
    if (msg.op === 'csp') noteViolation(`parse worker: ${msg.violation}`);
  },
  (err) => fail(err),
);

export function fail(err) {
  state.error = errorText(String((err && err.message) || err));
  showError(ui.fitStatus, `Error: ${state.error}`);
  if (/^Choosing/.test(ui.selectionCaption.textContent))
    ui.selectionCaption.textContent = 'No bandwidth was chosen (see the error above).';
  publish();
}
