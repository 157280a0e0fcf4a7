// selectBandwidth's search of a criterion (leave-one-out CV or AICc; the core's select_cv, bandwidth.h), and the rules
// of thumb with their CV score, as a generator of one step per criterion evaluation.
import { checkResult, KernelAttentionError } from './errors.js';
import { sampleFrame } from './frame.js';
import { gridTolerance } from './plan.js';
import { fitOptions } from './sample.js';
import { discreteOptions, joinBandwidth } from './categories.js';

// The curve a search reports holds its first evaluations.
export const CURVE_CAPACITY = 256;

/**
 * The selection as a generator: each criterion evaluation of a CV/AICc search is one step (the core's search is
 * stopped after it by its progress hook and resumed from its curve, bandwidth.h), yielding `{ done, total }`
 * evaluations; `total` is an estimate until the last step. Without `stepwise` the search runs in one call.
 */
export function* searchSteps(engine, threads, s, stepwise) {
  const { n, dim, width, x, y, weights, rule, plan, mixed } = s;
  // Mixed data: the search's point is (h, λ), dim + count values (cpp/core/stats/mixed.h, select_mixed).
  const size = dim + (mixed ? mixed.count : 0);
  const heap = engine.openHeap();
  // The core's state of this search across its steps (its sorted and binned sample), freed with the heap.
  let search = 0;
  try {
    const frame = sampleFrame(x, dim, y, width); // bandwidths and scores are invariant to shifting x and y (frame.js)
    const xp = heap.f32Shifted(x, dim, frame.x);
    const yp = heap.f32Shifted(y, width, frame.y);
    const options = fitOptions({
      kernel: s.kernel,
      estimator: s.estimator,
      weights: weights ? heap.f32(weights) : 0,
      threads,
      tolerance: gridTolerance(plan),
      exclude: s.exclude,
      discrete: discreteOptions(engine, heap, mixed, { codes: s.codes }),
    });
    const h = heap.alloc(size * 8);
    const score = heap.alloc(8);
    checkResult(engine.ruleOfThumb({ x: xp, n, dim, rule: rule === 'silverman' ? 'silverman' : 'scott', h }));
    const criterion = rule === 'aicc' ? 'aicc' : 'cv';
    let count = 0;
    let capacity = CURVE_CAPACITY;
    let curveH = 0;
    let curveScore = 0;
    if (rule === 'cv' || rule === 'aicc') {
      curveH = heap.alloc(capacity * size * 8);
      curveScore = heap.alloc(capacity * 8);
      // Typical evaluations: a scan of the whole range (7 a decade, about 30) and about 10 of Brent's, then, per
      // dimension, 18 more each.
      const estimate = 40 + (s.perDimension && dim > 1 ? 18 * dim : 0) + (mixed ? 60 * mixed.count : 0);
      if (stepwise) {
        search = engine.cvSearchCreate({});
        if (!search) throw new KernelAttentionError('OutOfMemory', 'could not allocate the search state');
      }
      for (;;) {
        if (stepwise && count + 1 > capacity) {
          // A resumed search replays its whole curve: it must hold every evaluation.
          const [bigger, biggerScore] = [heap.alloc(2 * capacity * size * 8), heap.alloc(2 * capacity * 8)];
          heap.moveF64(bigger, curveH, count * size);
          heap.moveF64(biggerScore, curveScore, count);
          [curveH, curveScore, capacity] = [bigger, biggerScore, 2 * capacity];
        }
        const r = engine.selectCv({
          x: xp,
          y: yp,
          n,
          dim,
          width,
          options,
          score: criterion,
          perDimension: s.perDimension,
          h,
          best: score,
          curveH,
          curveScore,
          capacity,
          recorded: count,
          stopAt: stepwise ? count + 1 : 0,
          search,
        });
        const paused = stepwise && r.status === 'Cancelled' && r.count > count;
        if (!paused) {
          checkResult(r);
          count = r.count;
          break;
        }
        count = r.count;
        yield { done: count, total: Math.max(estimate, count + 1) };
      }
    } else {
      checkResult(engine.cvScore({ x: xp, y: yp, n, dim, width, options, score: 'cv', h, out: score }));
    }
    const best = heap.readF64(score, 1)[0];
    if (count && !Number.isFinite(best)) {
      throw new KernelAttentionError(
        'BadShape',
        `no bandwidth gives a finite ${rule === 'aicc' ? 'AICc' : 'CV score'} ` +
          `for these ${n} points (${
            rule === 'aicc'
              ? "AICc needs more points than the fit's degrees of freedom + 2"
              : "some point never has another within the kernel's reach"
          }); choose a bandwidth or use a rule`,
        'x',
      );
    }
    const shown = Math.min(count, CURVE_CAPACITY); // the curve holds the first 256 evaluations
    const result = {
      rule,
      method: plan.method,
      reason: plan.reason,
      bandwidth: userLayout(mixed, heap.readF64(h, size), dim),
      score: best,
      curve: {
        bandwidths: shown ? userLayout(mixed, heap.readF64(curveH, shown * size), dim) : new Float64Array(0),
        scores: shown ? heap.readF64(curveScore, shown) : new Float64Array(0),
      },
    };
    if (stepwise) yield { done: Math.max(count, 1), total: Math.max(count, 1) };
    return result;
  } finally {
    if (search) engine.cvSearchFree({ search });
    heap.free();
  }
}

/** Points (h, λ) of dim + count values each in the user's column order (categories.js); as they are without `mixed`. */
function userLayout(mixed, points, dim) {
  if (!mixed) return points;
  const size = dim + mixed.count;
  const out = new Float64Array((points.length / size) * mixed.dim);
  for (let k = 0; k * size < points.length; k++) {
    const at = points.subarray(k * size, (k + 1) * size);
    out.set(joinBandwidth(mixed, at.subarray(0, dim), at.subarray(dim)), k * mixed.dim);
  }
  return out;
}
