// The one caller of the WebAssembly module: one function per binding (cpp/bindings/), taking heap offsets
// and sizes as the binding does and option objects whose enumerated fields are the JS names ('gaussian', 'nan',
// 'local-linear'), which become the core's embind enums here. Results come back with `status` as the Status name
// ('Ok', 'EmptyRow', …) for errors.js's checkResult. What each kernel supports and the core's limits are read once,
// from the core. With heap.js (memory), this is the only code that touches `module`.
import { heapTraffic, openHeap, resident, residentUse, withHeap } from './heap.js';

const engines = new WeakMap();

/** The names of an embind enum, in the core's order (the enum object also holds `values`, its map by number). */
const namesOf = (enumType) => Object.keys(enumType).filter((name) => name !== 'values');

/** The engine over `module`, made once per module. */
export function makeEngine(module) {
  if (!engines.has(module)) engines.set(module, createEngine(module));
  return engines.get(module);
}

function createEngine(module) {
  const { Status, KernelKind, EmptyPolicy, Estimator, Rule, Score, LandmarkSampling, Method, Task } = module;
  const statusNames = new Map(namesOf(Status).map((name) => [Status[name], name]));
  const named = (result) => ({ ...result, status: statusNames.get(result.status) });
  const status = (s) => ({ status: statusNames.get(s) });
  const callOptions = (o) => ({ ...o, kernel: KernelKind[o.kernel], empty: EmptyPolicy[o.empty] });
  const fitOptions = (o) => ({
    queryScale: 0,
    ...o,
    kernel: KernelKind[o.kernel],
    estimator: Estimator[o.estimator],
    empty: EmptyPolicy[o.empty],
  });
  const approxCall = (a) => ({ ...a, sampling: LandmarkSampling[a.sampling] });
  const methodNames = new Map(namesOf(Method).map((name) => [Method[name], name]));

  // kernel_traits (cpp/core/kernel/traits.h), in KernelKind order.
  const kernels = namesOf(KernelKind).map((name) => Object.freeze(module._kernelTraits(KernelKind[name])));

  return Object.freeze({
    /** Per kernel: { name, distance, compact, heavyTail, gradient, grid, randomFeatures, nystrom, sparse }. */
    kernels: Object.freeze(kernels),
    kernel: (name) => kernels.find((k) => k.name === name),
    emptyPolicies: Object.freeze(namesOf(EmptyPolicy)),
    estimators: Object.freeze(namesOf(Estimator)),
    samplings: Object.freeze(namesOf(LandmarkSampling)),
    /** How a bandwidth is chosen: the criteria a search minimises ('cv', 'aicc'), then the rules ('scott', 'silverman'). */
    selections: Object.freeze([...namesOf(Score), ...namesOf(Rule)]),
    /**
     * The core's limits (random_features.h, nystrom.h, sparse.h, grid.h) and the exact engine's row blocks: queries
     * per packed tile (key_tile.h) and the rows from which a call never cuts its keys into shards (exact.h).
     */
    limits: Object.freeze({
      maxFeatures: module.maxFeatures,
      maxLandmarks: module.maxLandmarks,
      sparseMaxDims: module.sparseMaxDims,
      maxGridDims: module.maxGridDims,
      queryBlock: module.queryBlock,
      unshardedRows: module.unshardedRows,
    }),
    /** In bandwidths, where `kernel`'s weight falls to `tolerance` of its peak (traits.h, sparse_reach). */
    sparseReach: (kernel, tolerance) => module._sparseReach(KernelKind[kernel], tolerance),
    simdName: () => module._simdName(),

    withHeap: (body) => withHeap(module, body),
    openHeap: () => openHeap(module),
    /** A reference-counted long-lived copy of float32 arrays in the heap (heap.js resident()): a model's sample. */
    resident: (arrays) => resident(module, arrays),
    /** Bytes copied from JS into the heap since start (the tests count a call's copies with it). */
    heapTraffic: () => heapTraffic(module),
    /** { blocks, bytes } that live resident copies hold. */
    residentUse: () => residentUse(module),

    attention: (q, k, v, out, I, J, M, D, o, threads) =>
      named(module._attention(q, k, v, out, I, J, M, D, callOptions(o), threads)),
    weights: (q, k, out, I, J, M, o) => named(module._weights(q, k, out, I, J, M, callOptions(o))),
    attentionGradients: (q, k, v, dout, out, dq, dk, dv, dtheta, I, J, M, D, o, threads) =>
      named(module._attentionGradients(q, k, v, dout, out, dq, dk, dv, dtheta, I, J, M, D, callOptions(o), threads)),
    attentionStates: (q, k, v, max, sum, acc, I, J, M, D, o, threads) =>
      named(module._attentionStates(q, k, v, max, sum, acc, I, J, M, D, callOptions(o), threads)),
    mergeStates: (max, sum, acc, max2, sum2, acc2, I, D, H) =>
      named(module._mergeStates(max, sum, acc, max2, sum2, acc2, I, D, H)),
    finalizeStates: (max, sum, acc, I, D, H, empty, out) =>
      named(module._finalizeStates(max, sum, acc, I, D, H, EmptyPolicy[empty], out)),
    randomFeaturesAttention: (q, k, v, out, I, J, M, D, o, a) =>
      named(module._randomFeaturesAttention(q, k, v, out, I, J, M, D, callOptions(o), approxCall(a))),
    nystromAttention: (q, k, v, out, I, J, M, D, o, a) =>
      named(module._nystromAttention(q, k, v, out, I, J, M, D, callOptions(o), approxCall(a))),
    sparseAttention: (q, k, v, out, I, J, M, D, o, tolerance, threads, dropped, sumSq, eff, logden) =>
      named(
        module._sparseAttention(
          q,
          k,
          v,
          out,
          I,
          J,
          M,
          D,
          callOptions(o),
          tolerance,
          threads,
          dropped,
          sumSq,
          eff,
          logden,
        ),
      ),
    topKAttention: (q, k, v, out, I, J, M, D, o, topK, dropped) =>
      named(module._topKAttention(q, k, v, out, I, J, M, D, callOptions(o), topK, dropped)),
    /** LOWESS (stats/lowess.h): x, y, fitted, weights are offsets of n doubles each. */
    lowess: (x, y, n, frac, iterations, delta, threads, fitted, weights) =>
      status(module._lowess(x, y, n, frac, iterations, delta, threads, fitted, weights)),
    /** `rule`: 'scott' or 'silverman'. */
    ruleOfThumb: (x, n, dim, rule, h) => status(module._ruleOfThumb(x, n, dim, Rule[rule], h)),
    /**
     * `score`: 'cv' (leave-one-out) or 'aicc'. `search`: a cvSearchCreate handle kept across the calls of one search
     * resumed in steps (its sorted and binned sample, bandwidth.h's CvSearchState), or 0.
     */
    selectCv: (
      x,
      y,
      n,
      dim,
      width,
      o,
      score,
      perDimension,
      h,
      best,
      curveH,
      curveScore,
      capacity,
      recorded,
      stopAt,
      search = 0,
    ) =>
      named(
        module._selectCv(
          x,
          y,
          n,
          dim,
          width,
          fitOptions(o),
          Score[score],
          perDimension,
          h,
          best,
          curveH,
          curveScore,
          capacity,
          recorded,
          stopAt,
          search,
        ),
      ),
    /** What one CV search keeps between its steps: a handle (0: out of memory), freed by cvSearchFree. */
    cvSearchCreate: () => module._cvSearchCreate(),
    cvSearchFree: (search) => module._cvSearchFree(search),
    selectCvGradient: (
      x,
      y,
      n,
      dim,
      width,
      o,
      rank,
      transform,
      maxIterations,
      h,
      best,
      curveH,
      curveScore,
      curveGrad,
      capacity,
      recorded,
      stopAt,
    ) =>
      named(
        module._selectCvGradient(
          x,
          y,
          n,
          dim,
          width,
          fitOptions(o),
          rank,
          transform,
          maxIterations,
          h,
          best,
          curveH,
          curveScore,
          curveGrad,
          capacity,
          recorded,
          stopAt,
        ),
      ),
    cvScore: (x, y, n, dim, width, o, score, h, out) =>
      status(module._cvScore(x, y, n, dim, width, fitOptions(o), Score[score], h, out)),
    localFit: (x, y, q, n, I, dim, width, o, mean, sumSq, self, eff, logden) =>
      named(module._localFit(x, y, q, n, I, dim, width, fitOptions(o), mean, sumSq, self, eff, logden)),
    /** ∂f/∂q (local_rows.h): gradient I×dim×width doubles; sumSq I×dim and mean I×width doubles, or 0. */
    localGradient: (x, y, q, n, I, dim, width, o, gradient, sumSq, mean) =>
      named(module._localGradient(x, y, q, n, I, dim, width, fitOptions(o), gradient, sumSq, mean)),
    /** Span bandwidths (neighbours.h): out[i] the distance from query i to its k-th nearest of the n points x, scaled. */
    kthNeighbourDistances: (x, n, q, I, dim, scale, k, threads, out) =>
      status(module._kthNeighbourDistances(x, n, q, I, dim, scale, k, threads, out)),
    fitSummary: (x, y, n, dim, width, o, sigma2) =>
      named(module._fitSummary(x, y, n, dim, width, fitOptions(o), sigma2)),
    /**
     * A model's grid (methods/grid/model.h) over its resident sample: a handle (0: out of memory) that keeps the bins
     * and moments between gridModelFit calls, freed by gridModelFree. gridModelFit: the fit at the I queries q on a
     * grid of `nodes` nodes per axis (the plan's); mean I × width floats, sumSq, eff, logden I doubles or 0, error 1
     * double (the measured error estimate) or 0.
     */
    gridModelCreate: (x, y, n, dim, width, weights) => module._gridModelCreate(x, y, n, dim, width, weights),
    gridModelFit: (model, x, y, q, n, I, dim, width, o, nodes, mean, sumSq, eff, logden, error) =>
      named(
        module._gridModelFit(model, x, y, q, n, I, dim, width, fitOptions(o), nodes, mean, sumSq, eff, logden, error),
      ),
    gridModelFree: (model) => module._gridModelFree(model),
    /** localGradient on a grid model's sample (its sorted copy, made once: each query reads the keys in its reach). */
    gridModelGradient: (model, x, y, q, n, I, dim, width, o, gradient, sumSq, mean) =>
      named(module._gridModelGradient(model, x, y, q, n, I, dim, width, fitOptions(o), gradient, sumSq, mean)),
    /** { binnings, convolutions, sorts, keysRead } of a grid model: its passes, and the keys its far rows read. */
    gridModelCounts: (model) => module._gridModelCounts(model),
    /** { nodes, reason }: grid nodes per axis for this sample, kernel, bandwidth and tolerance (0: run exactly), and why. */
    gridNodes: (x, n, dim, o) => module._gridNodes(x, n, dim, fitOptions(o)),
    /**
     * { method, reason, tolerance } (plan.h): the method that runs call `c` ({ task: 'attention' | 'regression', kernel,
     * queries, keys, dims, heads, generalMask, groups, keyData, bandwidth }, keyData and bandwidth heap offsets or 0)
     * when `method` is asked for at `tolerance` (0: the method's default, returned). Method 'auto' back means the
     * decision needs the keys: ask again with keyData and bandwidth.
     */
    plan: (c, method, tolerance) => {
      const defaults = { heads: 1, generalMask: false, groups: false, keyData: 0, bandwidth: 0 };
      const p = module._plan(
        { ...defaults, ...c, task: Task[c.task], kernel: KernelKind[c.kernel] },
        Method[method],
        tolerance,
      );
      return { ...p, method: methodNames.get(p.method) };
    },
  });
}
