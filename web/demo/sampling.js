// The compute worker's samples of the data: seeded subsamples (sorted by x) for the fits that still cannot take every
// point in time, and the queries the curve or surface is drawn at. Each cap is a measured cost (bench/demo-paths.mjs,
// one thread, on the "Sine + noise" example; docs/demo.md, "What runs on every point"); everything else takes every
// point: fits on the grid (1-D and 2-D, from 20,000 points), their derivative and robust refits, in 1-D the bandwidth
// search and the local-σ band where the plan is the grid (the search 0.16 s at 10⁵ points and 0.85 s at 10⁶, the fit
// with the band 0.22 s and 1.6 s: they had taken 100,000 points at most, 11.5 s and 20 s at 10⁶), LOWESS and loess.

// Exact fits and the attention views: an exact fit at one h costs about n² kernel terms in reach (local-linear + band
// at h = 0.1: 0.042 s at 10⁴ points, 3.3 s at 10⁵); the views are 340 × n terms at any h (0.073 s at 10⁵, 0.78 s at
// 10⁶).
export const FIT_MAX = 50_000;
// A live fit while the slider is dragged, where it runs exactly (a fit on the grid takes every point), and "Learn h"'s
// steps (each a leave-one-out pass over n² pairs).
const DRAFT_MAX = 2_000;
// The bandwidth search where the library's plan for it is exact (a 1-D search below 5,000 points, a kernel without a
// grid) and blocked CV: CV took 0.37 s at 4,000 points and 1.9 s at
// 10⁴, AICc 1.8 s and 13 s, blocked CV 1.3 s and 10 s (5.7 s at 2·10⁴ and 96 s at 10⁵, where its plan is the grid:
// the left-out band runs exactly).
const SELECT_MAX = 4_000;
// A 1-D AICc search where its plan is the grid: 0.08 s at 10⁴ points, 0.67 s at 10⁵, 8.0 s at 10⁶ (its scan's points
// below the grid's reach run exactly, with no bound to skip them as CV's descent does).
const AICC_MAX = 100_000;
// The local-σ band where the fit runs exactly: its variance smoother chooses a bandwidth by CV on the log squared
// residuals (0.48 s for the fit with the band at 10⁴ points, exact).
const LOCAL_MAX = 10_000;
// In 2-D (Gaussian, no category), the CV and AICc searches and, where the plan is the grid, the local-σ band ("2-D
// surface" example, one thread): the local-linear CV search took 0.47 s at 4,000 points, 1.1 s at 10⁴ and 2.3 s at
// 19,000 (exact), 1.7 s at 2·10⁴ (the grid), 2.7 s at 5·10⁴ and 6.2 s at 10⁵; Nadaraya–Watson's 1.4 s at 19,000 and
// 1.1 s at 2·10⁴; AICc's (local-linear, uniform points) 0.84 s at 10⁴, 2.0 s at 3·10⁴ and 8.8 s at 10⁵ (the grid
// from 5,000 points); the local-σ band on the grid 1.5 s at 2·10⁴ (1.7 s Nadaraya–Watson), 3.2 s at 5·10⁴ (exactly,
// 4.9 s at 10⁴).
const PLANAR_SEARCH_MAX = 20_000;
// Span fits run exactly, each point's fit over its own k = ⌊f·n⌋ nearest. A kernel whose weights reach every point
// (Gaussian, Laplacian, Cauchy) costs n² terms: 1.5 s at 4,000 points, 6.6 s at 10⁴; one of bounded reach, from
// window moments: 0.05 s at 4,000, 0.2 s at 10⁴, 1.3–1.8 s at 2·10⁴ (span 0.3, local-linear, with the band).
const SPAN_MAX = 4_000;
const SPAN_BOUNDED_MAX = 10_000;
// A live fit while a slider moves, on the grid, draws its band too up to this many points (10⁵: 67 ms with the band);
// beyond, the curve alone (10⁶: 12–95 ms against 0.6–2 s with the band; worker.js).
export const DRAFT_BAND_MAX = 100_000;
// LOWESS's curve joins its fitted values at the observations: beyond this many, at this many of them.
const CURVE_POINTS_MAX = 20_000;
const CURVE_QUERIES = 300; // 1-D: queries on a grid across the data
const SURFACE_SIDE = 48; // 2-D: SURFACE_SIDE² queries

/** The kernels whose weights reach every point: their span fits keep the smaller cap (SPAN_MAX). */
const REACH_EVERYWHERE = ['gaussian', 'laplacian', 'cauchy'];

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

/** `object` with a getter `name` that computes its value on first use and keeps it (a sample only where one runs). */
function lazy(object, name, make) {
  Object.defineProperty(object, name, {
    enumerable: true,
    configurable: true,
    get() {
      const value = make();
      Object.defineProperty(object, name, { value, enumerable: true });
      return value;
    },
  });
}

/**
 * The samples of x (n × dim, float64 as read) and y that the fits use, each made on first use: `all` (every point),
 * `full` (exact fits and the attention views: at most FIT_MAX), `draft` (an exact fit while a slider moves; "Learn
 * h"), `select` and `local` (the bandwidth search and the local-σ band where they run exactly; on the grid in 1-D
 * they take `all`, AICc's search `aicc`), `planar` (2-D: the CV search, and the local-σ band on the grid), `spanOf(kernel)` (span fits),
 * `lowess` (every point, sorted by x), and the `queries` of the curve or surface. Every sample is drawn from all the
 * points, sorted by x.
 */
export function samplesOf(x, y, dim) {
  const all = { x, y, n: y.length, dim };
  const samples = { n: all.n, dim, x64: x, y64: y, all, lowess: null };
  lazy(samples, 'full', () => subsample(all, FIT_MAX, 1));
  lazy(samples, 'draft', () => subsample(all, DRAFT_MAX, 2));
  lazy(samples, 'select', () => subsample(all, SELECT_MAX, 3));
  lazy(samples, 'aicc', () => subsample(all, AICC_MAX, 8));
  lazy(samples, 'local', () => subsample(all, LOCAL_MAX, 4));
  lazy(samples, 'planar', () => subsample(all, PLANAR_SEARCH_MAX, 7));
  lazy(samples, 'spanAll', () => subsample(all, SPAN_MAX, 5));
  lazy(samples, 'spanBounded', () => subsample(all, SPAN_BOUNDED_MAX, 5));
  // LOWESS (1-D): every point, sorted by x.
  if (dim === 1) lazy(samples, 'lowess', () => subsample(all, all.n, 0));
  samples.spanOf = (kernel) => (REACH_EVERYWHERE.includes(kernel) ? samples.spanAll : samples.spanBounded);
  samples.queries = queryGrid(bounds(all));
  return samples;
}

/** How many points each sample of n holds, for the data's status line (loading.js). */
export const sampleSizes = (n) => ({
  n,
  fitN: Math.min(n, FIT_MAX),
  draftN: Math.min(n, DRAFT_MAX),
  selectN: Math.min(n, SELECT_MAX),
  aiccN: Math.min(n, AICC_MAX),
  planarN: Math.min(n, PLANAR_SEARCH_MAX),
  localN: Math.min(n, LOCAL_MAX),
  spanN: Math.min(n, SPAN_MAX),
  spanBoundedN: Math.min(n, SPAN_BOUNDED_MAX),
});

/**
 * The indices (in x order) of the n sorted observations a curve through them is drawn at: null for all of them, else
 * CURVE_POINTS_MAX evenly spaced, the first and the last among them.
 */
export function curvePoints(n) {
  if (n <= CURVE_POINTS_MAX) return null;
  return Uint32Array.from({ length: CURVE_POINTS_MAX }, (_, k) => Math.round((k * (n - 1)) / (CURVE_POINTS_MAX - 1)));
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
  s.queries = queryGrid(bounds(s.all).slice(0, 1));
  return Object.assign(s, { lowess: null, labels });
}
