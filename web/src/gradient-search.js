// selectBandwidth's rule 'cv-gradient': L-BFGS on the exact leave-one-out CV gradient (the core's
// select_cv_gradient, bandwidth.h), as a generator of one step per CV evaluation.
import { checkResult, KernelAttentionError } from './errors.js';
import { sampleFrame } from './frame.js';
import { fitOptions } from './sample.js';
import { CURVE_CAPACITY } from './search.js';

/** Per evaluation of a metric search (count matrices L, rank × dim), the bandwidth along each axis: 1/‖L e_d‖. */
function columnScales(transforms, count, rank, dim) {
  const out = new Float64Array(count * dim);
  for (let e = 0; e < count; e++) {
    for (let d = 0; d < dim; d++) {
      let norm = 0;
      for (let r = 0; r < rank; r++) norm += transforms[(e * rank + r) * dim + d] ** 2;
      out[e * dim + d] = 1 / Math.sqrt(norm);
    }
  }
  return out;
}

/**
 * The gradient search as a generator, one step per CV evaluation, paused and resumed as the CV search below is
 * (its curve also holds each evaluation's gradient, which the replay needs).
 */
export function* gradientSearchSteps(engine, threads, s, stepwise) {
  const { n, dim, width, x, y, metric, maxIterations } = s;
  const rank = metric === 'full' ? dim : 0;
  const params = rank ? rank * dim : dim;
  const heap = engine.openHeap();
  try {
    const frame = sampleFrame(x, dim, y, width); // bandwidths and scores are invariant to shifting x and y (frame.js)
    const xp = heap.f32Shifted(x, dim, frame.x);
    const yp = heap.f32Shifted(y, width, frame.y);
    const options = fitOptions({ kernel: s.kernel, estimator: s.estimator, threads });
    const h = heap.alloc(dim * 8);
    const score = heap.alloc(8);
    const transform = rank ? heap.alloc(params * 8) : 0;
    checkResult(engine.ruleOfThumb({ x: xp, n, dim, rule: 'scott', h }));
    let count = 0;
    let iterations = 0;
    let capacity = CURVE_CAPACITY;
    let curve = [heap.alloc(capacity * params * 8), heap.alloc(capacity * 8), heap.alloc(capacity * params * 8)];
    const estimate = 15 + 4 * params; // typical evaluations: a little more than one per L-BFGS iteration
    for (;;) {
      if (count + 1 > capacity) {
        // A resumed search replays its whole curve (and a search without pauses must record it to report it).
        const bigger = [
          heap.alloc(2 * capacity * params * 8),
          heap.alloc(2 * capacity * 8),
          heap.alloc(2 * capacity * params * 8),
        ];
        [params, 1, params].forEach((per, k) => heap.moveF64(bigger[k], curve[k], count * per));
        [curve, capacity] = [bigger, 2 * capacity];
      }
      // Without pauses the search stops at the curve's capacity and resumes with a bigger one.
      const r = engine.selectCvGradient({
        x: xp,
        y: yp,
        n,
        dim,
        width,
        options,
        rank,
        transform,
        maxIterations,
        h,
        best: score,
        curveH: curve[0],
        curveScore: curve[1],
        curveGrad: curve[2],
        capacity,
        recorded: count,
        stopAt: stepwise ? count + 1 : capacity,
      });
      const paused = r.status === 'Cancelled' && r.count > count;
      count = r.count;
      iterations = r.iterations;
      if (!paused) {
        checkResult(r);
        break;
      }
      if (stepwise) yield { done: count, total: Math.max(estimate, count + 1) };
    }
    const best = heap.readF64(score, 1)[0];
    if (!Number.isFinite(best)) {
      throw new KernelAttentionError(
        'BadShape',
        `no bandwidth gives a finite CV score for these ${n} points ` +
          "(some point never has another within the kernel's reach); choose a bandwidth or use a rule",
        'x',
      );
    }
    const values = heap.readF64(curve[0], count * params);
    const result = {
      rule: 'cv-gradient',
      method: s.plan.method,
      reason: s.plan.reason,
      bandwidth: heap.readF64(h, dim),
      score: best,
      curve: {
        bandwidths: rank ? columnScales(values, count, rank, dim) : values,
        scores: heap.readF64(curve[1], count),
      },
      metric,
      iterations,
    };
    if (rank) {
      result.transform = heap.readF64(transform, params);
      result.curve.transforms = values;
    }
    if (stepwise) yield { done: Math.max(count, 1), total: Math.max(count, 1) };
    return result;
  } finally {
    heap.free();
  }
}
