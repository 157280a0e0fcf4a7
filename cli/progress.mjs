// The progress bar on stderr: drawn for long work when stderr is a terminal (KA_PROGRESS=1 forces it, e.g. for tests;
// KA_PROGRESS=0 or --quiet turns it off), redrawn at most every 100 ms, and erased when the work ends.

const WIDTH = 30;
const EVERY_MS = 100;

/**
 * An `onProgress` callback drawing `label [#####-----] 45% (done/total)` on `stream`, or undefined when no bar should be
 * shown; call the returned `done()` when the work has ended (it erases the bar).
 */
export function progressBar(label, { quiet = false, stream = process.stderr, env = process.env } = {}) {
  const forced = env.KA_PROGRESS;
  const show = !quiet && forced !== '0' && (forced === '1' || stream.isTTY === true);
  if (!show) return { onProgress: undefined, done() {} };
  let last = -Infinity;
  let drawn = false;
  return {
    onProgress({ done, total }) {
      const now = performance.now();
      if (done < total && now - last < EVERY_MS) return;
      last = now;
      const fraction = total > 0 ? Math.min(1, done / total) : 1;
      const filled = Math.round(fraction * WIDTH);
      stream.write(
        `\r${label} [${'#'.repeat(filled)}${'-'.repeat(WIDTH - filled)}] ${String(Math.floor(fraction * 100)).padStart(3)}% (${done}/${total})`,
      );
      drawn = true;
    },
    done() {
      if (drawn) stream.write('\r\x1b[2K');
      drawn = false;
    },
  };
}

/** Runs `work(onProgress)` with a progress bar labelled `label` on stderr unless --quiet, erased at the end. */
export async function withProgress(label, values, work) {
  const bar = progressBar(label, { quiet: Boolean(values.quiet) });
  try {
    return await work(bar.onProgress);
  } finally {
    bar.done();
  }
}
