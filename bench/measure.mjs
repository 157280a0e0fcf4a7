// How one table cell (a contender on a case) is timed. The same policy applies to every contender:
// - warm-up calls (JIT tier-up, page faults, caches) until they have taken `warmup` seconds or `maxWarmups` were made,
//   then up to `maxRuns` timed calls within about `budget` seconds; the cell reports their median. After a first call
//   longer than `budget`, one more call is the only, reported, run: a first call pays one-time costs (tfjs-backend-
//   wasm's first attention 4,096² took 3 s, its next ones 0.85 s) and would be reported in some runs and not in
//   others, as its length fell either side of the budget. One warm-up was not enough for calls of a millisecond or two:
//   V8 tiers wasm functions up once they have run for a while, so 1-D regression at 10^3 x 10^3 timed 1.25 ms after
//   one warm-up, 1.2 ms after twenty and 0.93 ms after 0.3 s of them (native: 0.81 ms).
// - a cell whose full run is estimated (from the same contender's previous, smaller case) to take longer than
//   `skipAbove` seconds is not run in full: it runs on the first `rows` queries only, sized to take about
//   `probeSeconds`, and reports "skipped (est. N s)" with the throughput of that probe. Every query costs the same
//   (J keys each), so the time scales with the number of queries.
//
// A contender is { label, ceiling, threads, supports?(c), start() → note, load(c, rows) → { run() → seconds,
// output() → rows × D numbers }, close?() }; `ceiling` names the ceiling row its throughput is compared with.
export const policy = { warmup: 0.3, maxWarmups: 1000, budget: 1.5, maxRuns: 15, skipAbove: 10, probeSeconds: 1.5 };

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

/** Median of the timed calls after the warm-up; the second call alone if the first took longer than the budget. */
export async function timeCalls(run, { budget = policy.budget, maxRuns = policy.maxRuns } = {}) {
  const first = await run();
  if (first >= budget) return { seconds: await run(), runs: 1 };
  let warm = first,
    last = first;
  for (let n = 1; n < policy.maxWarmups && warm < policy.warmup; n++) warm += last = await run();
  const times = [];
  const count = Math.min(maxRuns, Math.max(1, Math.floor(budget / last)));
  for (let n = 0; n < count; n++) times.push(await run());
  return { seconds: median(times), runs: times.length };
}

/**
 * Measures contender `who` on case c. `previous` is this contender's result on the previous case of the same
 * workload (or undefined); a partial run keeps at least `minRows` queries (the rows the error is checked on). Returns { rows, seconds (for those rows), runs, fullSeconds (estimated for all I rows),
 * throughput (work per second in c.unit), output }.
 */
export async function measureCell(who, c, previous, minRows) {
  let rows = c.I;
  if (previous) {
    const estimate = previous.fullSeconds * (c.work / previous.work);
    if (estimate > policy.skipAbove) {
      const wanted = Math.ceil((c.I * policy.probeSeconds) / estimate / 64) * 64;
      rows = Math.min(c.I, Math.max(minRows, wanted));
    }
  }
  const cell = await who.load(c, rows);
  const { seconds, runs } = await timeCalls(cell.run);
  const fullSeconds = (seconds * c.I) / rows;
  return {
    rows,
    seconds,
    runs,
    fullSeconds,
    work: c.work,
    throughput: c.work / fullSeconds / c.perUnit,
    output: await cell.output(),
  };
}
