// The one caller of the WebAssembly module: one function per binding (cpp/bindings/), each called with one object of
// named fields (heap offsets, sizes, and option objects whose enumerated fields are the JS names 'gaussian', 'nan',
// 'local-linear', which become the core's embind enums here). Results come back with `status` as the Status name
// ('Ok', 'EmptyRow', …) for errors.js's checkResult. What each kernel supports and the core's limits are read once,
// from the core. With heap.js (memory), this is the only code that touches `module`.
import { heapTraffic, openHeap, resident, residentUse, withHeap } from './heap.js';

const engines = new WeakMap();
// FitOptions without discrete columns (categories.js sets them for mixed data).
const NO_DISCRETE = { discreteColumns: 0, categories: 0, queryCategories: 0, levels: 0, discreteKernels: 0, lambda: 0 };

/** The names of an embind enum, in the core's order (the enum object also holds `values`, its map by number). */
const namesOf = (enumType) => Object.keys(enumType).filter((name) => name !== 'values');

/** The engine over `module`, made once per module. */
export function makeEngine(module) {
  if (!engines.has(module)) engines.set(module, createEngine(module));
  return engines.get(module);
}

/**
 * Every binding: the order of its arguments, by the names its callers give them (the only place that order is
 * written), and what it returns: 'result' (an object with a Status: the status as its name), 'status' (a Status
 * alone: { status }), 'value' (as the module returns it). An argument `name:converter` is converted on its way (an
 * option object's names into the core's enums); `name?` is 0 (no array) when not given.
 */
const BINDINGS = {
  attention: ['result', 'q k v out I J M D options:call threads'],
  weights: ['result', 'q k out I J M options:call'],
  attentionGradients: ['result', 'q k v dOut out dq dk dv dTheta I J M D options:call threads'],
  attentionStates: ['result', 'q k v max sum acc I J M D options:call threads'],
  mergeStates: ['result', 'max sum acc max2 sum2 acc2 I D H'],
  finalizeStates: ['result', 'max sum acc I D H empty:EmptyPolicy out'],
  randomFeaturesAttention: ['result', 'q k v out I J M D options:call approximation:approximation'],
  nystromAttention: ['result', 'q k v out I J M D options:call approximation:approximation'],
  sparseAttention: ['result', 'q k v out I J M D options:call tolerance threads dropped? sumSq? eff? logden?'],
  topKAttention: ['result', 'q k v out I J M D options:call topK dropped'],
  /**
   * R's loess (cpp/bindings/loess.cpp), a model by handle (loessCreate, below): x n × dim, y and weights n, q m × dim,
   * fit and se m, out n doubles. `options` carries dim, span, degree, family, surface, normalize, iterations, cell,
   * statistics and traceHat (the enumerated ones as their JS names); `threads`, the model's fits and predictions
   * (the same results on any number). loessFit's result: { status, problem }.
   */
  loessFit: ['result', 'model x y weights? n options:loess threads'],
  loessSummary: ['value', 'model'],
  loessFitted: ['value', 'model out'],
  loessResiduals: ['value', 'model out'],
  loessRobustnessWeights: ['value', 'model out'],
  loessPredict: ['status', 'model q m fit se?'],
  loessFree: ['value', 'model'],
  /** Student's t quantile (stats/loess/statistics.h), p in (0, 1), df > 0; NaN otherwise. */
  studentTQuantile: ['value', 'p df'],
  /** LOWESS (stats/lowess.h): x, y, fitted, weights are offsets of n doubles each. */
  lowess: ['status', 'x y n frac iterations delta threads fitted weights'],
  /** `rule`: 'scott' or 'silverman'; h: dim doubles. */
  ruleOfThumb: ['status', 'x n dim rule:Rule h'],
  /** The median gap between sorted distinct values (bandwidth.h): x, n doubles `stride` apart; out, 1 double. */
  medianSpacing: ['status', 'x n stride out'],
  /**
   * `score`: 'cv' (leave-one-out) or 'aicc'; a search resumed from `recorded` evaluations, stopped at `stopAt`;
   * `search`: a cvSearchCreate handle kept across the calls of one search resumed in steps (its sorted and binned
   * sample, bandwidth.h's CvSearchState), or 0.
   */
  selectCv: [
    'result',
    'x y n dim width options:fit score:Score perDimension h best curveH curveScore capacity recorded stopAt search?',
  ],
  /** What one CV search keeps between its steps: a handle (0: out of memory), freed by cvSearchFree. */
  cvSearchCreate: ['value', ''],
  cvSearchFree: ['value', 'search'],
  selectCvGradient: [
    'result',
    'x y n dim width options:fit rank transform maxIterations h best curveH curveScore curveGrad capacity recorded stopAt',
  ],
  cvScore: ['status', 'x y n dim width options:fit score:Score h out'],
  /**
   * The plug-in bandwidth (stats/plugin.h) with dpill's defaults: x, y offsets of n doubles each; { status, issue
   * (the PluginIssue name: 'none', 'too-few-points', …), h, n, blocks, blocksMax, sigma2, theta22, sigma2Quartic,
   * theta24Quartic, gamma, lambda }.
   */
  pluginBandwidth: ['result', 'x y n'],
  /** dpill's h times this is `kernel`'s plug-in bandwidth (plugin_kernel_factor); NaN where there is none. */
  pluginKernelFactor: ['value', 'kernel:KernelKind'],
  localFit: ['result', 'x y q n I dim width options:fit mean sumSq? self? eff? logden?'],
  /** ∂f/∂q (local_rows.h): gradient I×dim×width doubles; sumSq I×dim and mean I×width doubles, or 0. */
  localGradient: ['result', 'x y q n I dim width options:fit gradient sumSq? mean?'],
  /** Span bandwidths (neighbours.h): out[i] the distance from query i to its k-th nearest of the n points x, scaled. */
  kthNeighbourDistances: ['status', 'x n q I dim scale k threads out'],
  fitSummary: ['result', 'x y n dim width options:fit sigma2'],
  /**
   * A model's grid (methods/grid/model.h) over its resident sample: a handle (0: out of memory) that keeps the bins
   * and moments between gridModelFit calls, freed by gridModelFree. gridModelFit: the fit at the I queries q on a
   * grid of `nodes` nodes per axis (the plan's); mean I × width floats, sumSq, eff, logden I doubles or 0, error 1
   * double (the measured error estimate) or 0.
   */
  gridModelCreate: ['value', 'x y n dim width weights?'],
  gridModelFit: ['result', 'model x y q n I dim width options:fit nodes mean sumSq? eff? logden? error?'],
  gridModelFree: ['value', 'model'],
  /**
   * localGradient on a grid model's sample: from its grid of `nodes` nodes per axis where that serves the row, the
   * other rows exactly over its sorted copy (made once: each query reads the keys in its reach).
   */
  gridModelGradient: ['result', 'model x y q n I dim width options:fit nodes gradient sumSq? mean?'],
  /** fitSummary on a grid model's sample sorted by its first coordinate (sorted once): exact, for a bandwidth no grid serves. */
  gridModelSummary: ['result', 'model x y n dim width options:fit sigma2'],
  /** { binnings, convolutions, sorts, keysRead } of a grid model: its passes, and the keys its far rows read. */
  gridModelCounts: ['value', 'model'],
  /** { nodes, reason }: grid nodes per axis for this sample, kernel, bandwidth and tolerance (0: run exactly), and why. */
  gridNodes: ['value', 'x n dim options:fit'],
};

/** `binding`'s function of one object of named fields, calling `module`'s `_binding` with them in order. */
function bind(module, binding, [returns, argumentList], converters, named) {
  const key = `_${binding}`; // looked up at every call, as the module's own functions are (a test may wrap one)
  const args = (argumentList ? argumentList.split(' ') : []).map((text) => {
    const [name, converter] = text.split(':');
    const optional = name.endsWith('?');
    return { name: optional ? name.slice(0, -1) : name, optional, convert: converter && converters[converter] };
  });
  const finish = returns === 'result' ? named : returns === 'status' ? (s) => named({ status: s }) : (r) => r;
  return (fields) => {
    const values = args.map(({ name, optional, convert }) => {
      const value = fields[name];
      if (value === undefined) {
        if (optional) return 0;
        throw new Error(`engine.${binding}: the field \`${name}\` is missing`); // a bug in web/src, not bad input
      }
      return convert ? convert(value) : value;
    });
    return finish(module[key](...values));
  };
}

function createEngine(module) {
  const { Status, KernelKind, EmptyPolicy, Estimator, Rule, Score, LandmarkSampling, Method, Task } = module;
  const { PlanCriterion, PlanField, DiscreteKernel, PluginIssue } = module;
  const statusNames = new Map(namesOf(Status).map((name) => [Status[name], name]));
  const issueNames = new Map(namesOf(PluginIssue).map((name) => [PluginIssue[name], name]));
  const named = (result) => ({
    ...result,
    status: statusNames.get(result.status),
    ...(result.issue === undefined ? {} : { issue: issueNames.get(result.issue) }),
  });
  const converters = {
    call: (o) => ({ ...o, kernel: KernelKind[o.kernel], empty: EmptyPolicy[o.empty] }),
    fit: (o) => ({
      queryScale: 0,
      ...NO_DISCRETE,
      ...o,
      kernel: KernelKind[o.kernel],
      estimator: Estimator[o.estimator],
      empty: EmptyPolicy[o.empty],
    }),
    approximation: (a) => ({ ...a, sampling: LandmarkSampling[a.sampling] }),
    EmptyPolicy: (name) => EmptyPolicy[name],
    KernelKind: (name) => KernelKind[name],
    Rule: (name) => Rule[name],
    Score: (name) => Score[name],
    loess: (o) => ({
      ...o,
      dims: o.dim,
      family: module.LoessFamily[o.family],
      surface: module.LoessSurface[o.surface],
      statistics: module.LoessStatistics[o.statistics],
      traceHat: module.LoessTraceHat[o.traceHat],
    }),
  };
  const loessProblems = new Map(namesOf(module.LoessProblem).map((name) => [module.LoessProblem[name], name]));
  const bindings = Object.fromEntries(
    Object.entries(BINDINGS).map(([name, spec]) => [name, bind(module, name, spec, converters, named)]),
  );
  const methodNames = new Map(namesOf(Method).map((name) => [Method[name], name]));
  const fieldNames = new Map(namesOf(PlanField).map((name) => [PlanField[name], name]));

  // kernel_traits (cpp/core/kernel/traits.h), in KernelKind order.
  const kernels = namesOf(KernelKind).map((name) => Object.freeze(module._kernelTraits(KernelKind[name])));

  return Object.freeze({
    /** Per kernel: { name, distance, compact, heavyTail, gradient, grid, randomFeatures, nystrom, sparse }. */
    kernels: Object.freeze(kernels),
    kernel: (name) => kernels.find((k) => k.name === name),
    emptyPolicies: Object.freeze(namesOf(EmptyPolicy)),
    estimators: Object.freeze(namesOf(Estimator)),
    samplings: Object.freeze(namesOf(LandmarkSampling)),
    /** A discrete kernel's number in the core (categories.h): 'aitchison-aitken', 'wang-van-ryzin', 'li-racine'. */
    discreteKernel: (name) => DiscreteKernel[name].value,
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

    ...bindings,
    /** A new, empty loess model (0: out of memory) for loessFit; freed by loessFree. */
    loessCreate: () => module._loessCreate(),
    /** loessFit's result with the problem (LoessProblem) as its name: 'none', 'spanTooSmall', 'zeroWidth'. */
    loessFit: (fields) => {
      const result = bindings.loessFit(fields);
      return { ...result, problem: loessProblems.get(result.problem) };
    },
    /** Loess models alive in the module (the tests' check that dispose() frees them). */
    loessLiveModels: () => module._loessLiveModels(),

    /**
     * { method, reason, tolerance, refused } (plan.h): the method that runs call `c` ({ task: 'attention' |
     * 'regression', kernel, queries, keys, dims, heads, masked, generalMask, groups, estimator, criterion ('fit', 'cv',
     * 'aicc', 'cv-gradient', 'plugin'), exclude, weights, span, discrete, keyData, bandwidth }, keyData and bandwidth
     * heap offsets or 0) when `method` is asked for at `tolerance` (0: the method's default, returned). `refused`:
     * 'none', or the field of the call that keeps the method asked for from it (reason: why). Method 'auto' back means
     * the decision needs the keys: ask again with keyData and bandwidth.
     */
    plan: (c, method, tolerance) => {
      const defaults = { heads: 1, masked: false, generalMask: false, groups: false, keyData: 0, bandwidth: 0 };
      const regression = {
        estimator: 'local-linear',
        criterion: 'fit',
        exclude: false,
        weights: false,
        span: false,
        discrete: false,
      };
      const call = { ...defaults, ...regression, ...c };
      const p = module._plan(
        {
          ...call,
          task: Task[c.task],
          kernel: KernelKind[c.kernel],
          estimator: Estimator[call.estimator],
          criterion: PlanCriterion[call.criterion],
        },
        Method[method],
        tolerance,
      );
      return { ...p, method: methodNames.get(p.method), refused: fieldNames.get(p.refused) };
    },
  });
}
