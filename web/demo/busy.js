// The sign at the plot while the visitor waits on the compute worker: a fit or a bandwidth choice that has run for
// more than SHOW_AFTER_MS says what it is doing, for how long, and how far it is where the library reports progress
// (the bandwidth search's evaluations, through selectBandwidthAsync's onProgress). Drafts while a slider moves are
// quick and show none. Before, a derivative of 200,000 rows (4–7 s) or a blocked CV (12–16 s) left the old fit and
// its status line on screen with no sign that anything was under way.
import { ui } from './ui.js';

// `?busy-after=<ms>` in the page's address sets the delay: 0 shows the sign for every fit (the browser tests, which
// cannot count on a search lasting 250 ms on a fast machine).
const RENDER_EVERY_MS = 250;
const delay = Number(new URLSearchParams(location.search).get('busy-after') ?? RENDER_EVERY_MS);
const SHOW_AFTER_MS = Number.isFinite(delay) && delay >= 0 ? delay : RENDER_EVERY_MS;
const works = new Set(); // { what: 'fit' | 'select', label, started, stage, done, total }
let timer = null;

/** Work the visitor waits for begins (`what`: 'fit' or 'select', the worker's name for its progress reports). */
export function startWork(what, label) {
  const work = { what, label, started: performance.now(), stage: null, done: 0, total: 0 };
  works.add(work);
  timer ??= setInterval(render, RENDER_EVERY_MS);
  render();
  return work;
}

export function endWork(work) {
  works.delete(work);
  render();
}

/** A progress report of the compute worker: the stage a fit is at, or a search's evaluations done of total. */
export function showProgress({ what, stage, done, total }) {
  for (const work of works) {
    if (work.what !== what) continue;
    if (stage !== undefined) work.stage = stage;
    if (total) Object.assign(work, { done, total });
  }
  render();
}

function render() {
  if (!works.size) {
    clearInterval(timer);
    timer = null;
  }
  const now = performance.now();
  // The longest-running work that has run long enough to be waited for.
  const work = [...works].find((w) => now - w.started >= SHOW_AFTER_MS);
  ui.plotBox.setAttribute('aria-busy', String(works.size > 0));
  ui.busy.hidden = !work;
  window.demoState.busySign = work ? { text: '', progress: null } : null;
  if (!work) return;
  const seconds = Math.floor((now - work.started) / 1000);
  ui.busyText.textContent =
    `${work.label}${work.stage ? `: ${work.stage}` : ''}…` +
    (work.total ? ` evaluation ${work.done} of ${work.total}` : '') +
    (seconds ? ` (${seconds} s)` : '');
  if (work.total) ui.busyProgress.value = work.done / work.total;
  else ui.busyProgress.removeAttribute('value'); // under way, no measure of how far
  window.demoState.busySign = { text: ui.busyText.textContent, progress: work.total ? work.done / work.total : null };
}
