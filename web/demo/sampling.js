// The compute worker's samples of the data: seeded subsamples (sorted by x) for the fits that cannot take every point,
// and the queries the curve or surface is drawn at.

export const FIT_MAX = 50_000; // points an exact fit and the attention views use (a seeded subsample beyond that)
const DRAFT_MAX = 2_000; // points a live fit uses while the slider is dragged
const SELECT_MAX = 4_000; // points the bandwidth search uses (each CV pass is O(n²))
// Points a fit with the local-σ band uses: its variance smoother chooses a bandwidth by CV on the log squared
// residuals, which took 2 s on 10,000 points and over a minute on 100,000 (Node, one thread).
const LOCAL_MAX = 10_000;
// Points a span fit uses (a draft: DRAFT_MAX): it runs exactly in double, each point's fit over its own k = ⌊f·n⌋
// nearest, and the Gaussian kernel reaches every point: 10,000 points took 6–10 s, 2,000 0.3–0.4 s (Node, one thread).
const SPAN_MAX = 4_000;
const CURVE_QUERIES = 300; // 1-D: queries on a grid across the data
const SURFACE_SIDE = 48; // 2-D: SURFACE_SIDE² queries

/**
 * A seeded subsample of at most `max` rows, in the order of the first coordinate (keys sorted by x), in float64 as
 * read: the library centres every input in double before its float32 pass, so timestamps or values with a large
 * offset keep their precision only if they reach it unrounded.
 */
function subsample({ x, y, n, dim }, max, seed) {
  let rows = Array.from({ length: n }, (_, i) => i);
  if (n > max) {
    let s = seed >>> 0;
    for (let i = 0; i < max; i++) {
      // partial Fisher–Yates
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
      const j = i + Math.floor((s / 2 ** 32) * (n - i));
      [rows[i], rows[j]] = [rows[j], rows[i]];
    }
    rows = rows.slice(0, max);
  }
  rows.sort((a, b) => x[a * dim] - x[b * dim] || a - b);
  const xs = new Float64Array(rows.length * dim);
  const ys = new Float64Array(rows.length);
  rows.forEach((r, i) => {
    for (let d = 0; d < dim; d++) xs[i * dim + d] = x[r * dim + d];
    ys[i] = y[r];
  });
  return { x: xs, y: ys, n: rows.length, dim };
}

function bounds({ x, n, dim }) {
  return Array.from({ length: dim }, (_, d) => {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < n; i++) {
      lo = Math.min(lo, x[i * dim + d]);
      hi = Math.max(hi, x[i * dim + d]);
    }
    // The grid runs from the first observation to the last: no fitted value beyond the data.
    return hi > lo ? [lo, hi] : [lo - 1, hi + 1];
  });
}

/** Query points: a line of CURVE_QUERIES in 1-D, a SURFACE_SIDE² grid (row-major, x₂ outer) in 2-D. */
function queryGrid(box) {
  const at = ([lo, hi], m, i) => lo + ((hi - lo) * i) / (m - 1);
  if (box.length === 1) return Float64Array.from({ length: CURVE_QUERIES }, (_, i) => at(box[0], CURVE_QUERIES, i));
  const q = new Float64Array(SURFACE_SIDE * SURFACE_SIDE * 2);
  for (let r = 0; r < SURFACE_SIDE; r++) {
    for (let c = 0; c < SURFACE_SIDE; c++) {
      q[(r * SURFACE_SIDE + c) * 2] = at(box[0], SURFACE_SIDE, c);
      q[(r * SURFACE_SIDE + c) * 2 + 1] = at(box[1], SURFACE_SIDE, r);
    }
  }
  return q;
}

/**
 * The samples of x (n × dim, float64 as read) and y that the fits use: `all` (the grid and loess take every point), `full`
 * (exact fits, the attention views and LOWESS: at most FIT_MAX), `draft` (while a slider moves), `select` (the
 * bandwidth search), `local` (the local-σ band), `span` (span fits), and the `queries` of the curve or surface.
 */
export function samplesOf(x, y, dim) {
  const all = { x, y, n: y.length, dim };
  const full = subsample(all, FIT_MAX, 1);
  return {
    n: all.n,
    dim,
    x64: x,
    y64: y,
    all,
    full,
    draft: subsample(full, DRAFT_MAX, 2),
    select: subsample(full, SELECT_MAX, 3),
    local: subsample(full, LOCAL_MAX, 4),
    span: subsample(full, SPAN_MAX, 5),
    // LOWESS (1-D): the same rows as the exact fits (the same seed), sorted by x.
    lowess: dim === 1 ? full : null,
    queries: queryGrid(bounds(full)),
  };
}

/**
 * samplesOf() for one x with a category: each row as [x, its level's code], the layout the library takes with
 * `types: ['continuous', 'unordered']`, subsampled as one; no LOWESS; the queries a line over x, which the fit
 * repeats at each level (category-fit.js). `labels`: the levels' names, code k the k-th.
 */
export function categorySamples(x, y, codes, labels) {
  const rows = new Float64Array(2 * y.length);
  for (let i = 0; i < y.length; i++) [rows[2 * i], rows[2 * i + 1]] = [x[i], codes[i]];
  const s = samplesOf(rows, y, 2);
  return { ...s, lowess: null, queries: queryGrid(bounds(s.full).slice(0, 1)), labels };
}
