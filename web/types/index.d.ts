// Types for kernel-attention: Nadaraya–Watson kernel smoothing and attention, one exact streaming engine in WebAssembly.
//
// Shapes: I queries (I×dim), J keys (J×dim), J values (J×D), all row-major and flattened.
// D is values.length / J. With `heads: H`, dim and D are split evenly into H heads,
// laid out [token][head][dim]; each head attends on its own slice.

/**
 * A flat numeric array: a plain array of numbers or any numeric typed array (BigInt arrays excluded), every entry
 * finite and within float32 range. It is copied (converted to float32), never mutated or kept.
 */
export type NumericArray =
  | Float32Array | Float64Array | Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array
  | Int32Array | Uint32Array | readonly number[];

/**
 * Kernel names. `softmax`: w = exp(scale · q·k). Distance kernels use u_d = (q_d − k_d) / h_d:
 * `gaussian` exp(−½ Σ u_d²), `laplacian` exp(−Σ |u_d|), `cauchy` 1 / (1 + Σ u_d²);
 * compact product kernels `epanechnikov` Π (1 − u_d²)₊, `tricube` Π (1 − |u_d|³)³₊, `uniform` Π 1[|u_d| ≤ 1].
 */
export type Kernel =
  | 'softmax' | 'gaussian' | 'laplacian' | 'cauchy'
  | 'epanechnikov' | 'tricube' | 'uniform';

/**
 * What a query with no admissible key returns (every key masked, or a compact kernel with no key in reach):
 * `'nan'` a row of NaN (the default), `'zero'` a row of zeros, `'nearest'` the value of the highest-scoring key that the
 * masks allow (nearest in u for distance kernels; exact ties average; a row of zeros if the masks allow no key at all),
 * `'error'` throws a {@link KernelAttentionError} with code `'EmptyRow'`.
 */
export type EmptyPolicy = 'nan' | 'zero' | 'nearest' | 'error';

/**
 * `'loo'`: leave-one-out, query i ignores key i (needs I = J).
 * A Uint8Array of length J: key padding, 1 = ignore that key for every query (torch's key_padding_mask convention).
 * A Uint8Array of length I*J (row-major, query-major): 1 = query i ignores key j (torch's boolean attn_mask convention).
 * When I = J, a length-J array is read as key padding.
 */
export type Mask = 'loo' | Uint8Array;

/** A group id per query and per key: a query sees only the keys of its own group. */
export interface Groups {
  queries: Int32Array | readonly number[];
  keys: Int32Array | readonly number[];
}

export interface WeightsOptions {
  /** Columns per query and key row (M). Required unless the inputs make it obvious (it is never guessed). */
  dim: number;
  /** Default `'softmax'`. */
  kernel?: Kernel;
  /** Softmax only: multiplies q·k. Default 1/√(dim/heads). Finite. */
  scale?: number;
  /** Distance kernels only: one bandwidth, or one per dimension (length dim). Positive and finite. Default 1. */
  bandwidth?: number | NumericArray;
  mask?: Mask;
  /** Key j is admissible for query i only if j ≤ i. Default false. */
  causal?: boolean;
  groups?: Groups;
  /** Number of heads H; must divide dim (and D for `attention`). Default 1. */
  heads?: number;
  /** Default `'nan'`. */
  empty?: EmptyPolicy;
}

/**
 * How attention() computes: `'exact'` (the default) the streaming engine; `'random-features'` positive orthogonal
 * random features (Performer's FAVOR+), for `'softmax'` and `'gaussian'`; `'nystrom'` the Nyström method with landmarks
 * taken from the keys, for `'softmax'`, `'gaussian'`, `'laplacian'` and `'cauchy'`. Both approximations cost
 * O((I + J)·m·(dim + D)) for m features or landmarks instead of O(I·J·(dim + D)), take the `causal` mask and heads but
 * no other mask nor groups, and run on one thread. The default stays `'exact'` so that existing calls keep their
 * results; see docs/approximations.md.
 */
export type AttentionMethod = 'exact' | 'random-features' | 'nystrom';

/** How Nyström picks its landmarks among the keys: k-means++ seeding (default) or uniformly, both seeded. */
export type LandmarkSampling = 'kmeans++' | 'uniform';

export interface AttentionOptions extends WeightsOptions {
  /** Default `'exact'`. */
  method?: AttentionMethod;
  /**
   * The approximations' target: the root-mean-square error over the outputs relative to the range of the values
   * (max − min over every value), strictly between 0 and 1. Sizes `features` / `landmarks` when they are not given.
   * Default 1e-2 (the regression grid's default is 1e-3; random features converge as 1/√m, so 1e-3 would take 100×
   * the features of 1e-2). Ignored by `'exact'`.
   */
  tolerance?: number;
  /** Seed of the features, landmarks and held-out queries: an integer from 0 to 2³² − 1; the same seed gives the same bytes. Default 0. */
  seed?: number;
  /** `'random-features'` only: the number of features (1 … 8192), instead of choosing it from `tolerance`. */
  features?: number;
  /** `'nystrom'` only: the number of landmarks (1 … 1024; at most J are used), instead of choosing it from `tolerance`. */
  landmarks?: number;
  /** `'nystrom'` only. Default `'kmeans++'`. */
  sampling?: LandmarkSampling;
}

/** attentionWithInfo()'s result: the output and what computed it. */
export interface AttentionWithInfo {
  /** What attention() returns with the same arguments: a new Float32Array of length I·D. */
  output: Float32Array;
  method: AttentionMethod;
  /**
   * Estimated root-mean-square error of `output` relative to the range of the values; 0 for `'exact'`.
   * `'random-features'`: the delta-method standard error from the spread of the per-feature terms (treating the
   * orthogonal features as independent, which tends to overestimate). `'nystrom'`: measured against the exact engine
   * on up to 64 queries drawn by the seed.
   */
  errorEstimate: number;
  /** `'random-features'`: the number of features used. */
  features?: number;
  /** `'nystrom'`: the number of landmarks used (per head; fewer than asked when the keys have fewer distinct points). */
  landmarks?: number;
  /**
   * Query rows (summed over heads) the approximation could not serve and the exact engine computed instead: a
   * random-feature denominator that underflowed, or a Nyström denominator ≤ 0 or mostly cancellation.
   */
  exactRows: number;
}

/**
 * The unnormalised online-softmax state of every query over one shard of keys, for merging shards computed in other
 * workers, processes or machines. Plain typed arrays: it survives `postMessage` and structured cloning.
 * Per query i and head h (index i·heads + h): `max` the reference log-weight (natural log, -Infinity when no key of
 * the shard was admissible), `sum` = Σ_j exp(s_ij − max), and in `acc` (I × width, each head's width/heads columns)
 * Σ_j exp(s_ij − max) v_j.
 */
export interface AttentionState {
  readonly queries: number;
  readonly heads: number;
  /** D, the number of value columns. */
  readonly width: number;
  readonly max: Float32Array;
  readonly sum: Float32Array;
  readonly acc: Float32Array;
}

/** Options of attentionState(): those of weights() except `empty`, which finalizeState() takes (no `method`: states are exact). */
export type StateOptions = Omit<WeightsOptions, 'empty'>;

/** Distance kernels: every kernel but softmax. */
export type DistanceKernel = Exclude<Kernel, 'softmax'>;

export interface SelectBandwidthOptions {
  /** Columns of x. */
  dim: number;
  /** Default `'gaussian'`. */
  kernel?: DistanceKernel;
  /** The estimator the bandwidth is for. Default `'nadaraya-watson'` (kernelRegression's default is local-linear). */
  estimator?: Estimator;
  /**
   * `'cv'` (default): minimise the leave-one-out least-squares CV score over log h, starting from Scott's rule.
   * `'aicc'`: minimise AICc (Hurvich, Simonoff & Tsai 1998), ln σ̂² + (1 + ν/n) / (1 − (ν + 2)/n), ν = tr(L).
   * `'scott'`: h_d = s_d · n^(−1/(dim+4)); `'silverman'`: h_d = 0.9 · min(s_d, IQR_d/1.349) · n^(−1/(dim+4)), with s_d the
   * sample standard deviation (ddof 1) and IQR_d by linear interpolation; a zero spread falls back to the other
   * measure, then to 1e-3·|mean_d|, then to 1.
   */
  method?: SelectionMethod;
  /** `'cv'` and `'aicc'`: a bandwidth per dimension by coordinate descent after the common scale. Default false. */
  perDimension?: boolean;
  /** Observation weights ω_i ≥ 0 (n entries, not all zero): each point's kernel weight is multiplied by ω_i. */
  weights?: NumericArray;
  /**
   * How leave-one-out CV is computed: `'exact'`, `'grid'` (1-D and 2-D, binned; not for `'cauchy'`), or `'auto'` (default:
   * the grid from 20,000 points on in 1-D and 2-D). AICc always runs exactly.
   */
  approximation?: Approximation;
  /** The grid's relative tolerance (it sizes the grid), strictly between 0 and 1. Default 1e-3. */
  tolerance?: number;
}

/** `'grid'`: linear binning and convolution, O(n + G·L) instead of O(n²); see docs/regression.md. */
export type Approximation = 'auto' | 'exact' | 'grid';

export type Estimator = 'nadaraya-watson' | 'local-linear';
export type SelectionMethod = 'cv' | 'aicc' | 'scott' | 'silverman';

export interface BandwidthSelection {
  method: SelectionMethod;
  /** How the CV scores were computed. */
  approximation: 'exact' | 'grid';
  /** One bandwidth per dimension, always positive and finite. */
  bandwidth: Float64Array;
  /**
   * For `'aicc'` the AICc; otherwise the CV score Σ_i ω_i Σ_c (y_ic − f_{−i}(x_i)_c)² / Σ_i ω_i at the chosen
   * bandwidth (ω = 1 without weights; also reported for the rules).
   */
  score: number;
  /** Every CV evaluation of the search in order (empty for the rules): bandwidths [eval][dim] and their scores. */
  curve: { bandwidths: Float64Array; scores: Float64Array };
}

export interface KernelRegressionOptions {
  /** Columns of x (1 for ordinary 1-D regression). */
  dim: number;
  /** Default `'gaussian'`. */
  kernel?: DistanceKernel;
  /**
   * A number (all dimensions), one per dimension, or how to choose it: `'cv'` (default), `'aicc'`, `'scott'` or
   * `'silverman'` (see {@link SelectBandwidthOptions.method}).
   */
  bandwidth?: number | NumericArray | SelectionMethod;
  /**
   * `'local-linear'` (default): the intercept of the weighted least-squares line (plane) around each query, free of
   * Nadaraya–Watson's bias at the edges of the data and where x is unevenly spread. `'nadaraya-watson'`: the
   * weighted mean.
   */
  estimator?: Estimator;
  /** Observation weights ω_i ≥ 0 (n entries, not all zero). */
  weights?: NumericArray;
  /** What a query with no point within a compact kernel's reach gets. Default `'nan'`. */
  empty?: EmptyPolicy;
  /** With `bandwidth: 'cv' | 'aicc'`: one bandwidth per dimension. Default false. */
  perDimension?: boolean;
  /**
   * `'exact'`, `'grid'` (1-D and 2-D, binned: the sample is binned onto a grid once per call and the fit is a convolution;
   * not for `'cauchy'`), or `'auto'` (default: the grid from 20,000 points on in 1-D and 2-D). Used for the bandwidth search,
   * the fit statistics and every prediction.
   */
  method?: Approximation;
  /** The grid's relative tolerance (it sizes the grid), strictly between 0 and 1. Default 1e-3. */
  tolerance?: number;
}

export interface PredictionInterval {
  /** f(x_q), I·D values. */
  mean: Float32Array;
  /** mean ∓ z·stderr with z the standard normal quantile of (1 + level)/2: a pointwise band for E[f̂(x_q)]. */
  lower: Float32Array;
  upper: Float32Array;
  /** σ̂_c · sqrt(Σ_j ℓ_j(x_q)²), the linear smoother's standard error (it ignores smoothing bias). */
  stderr: Float32Array;
  /** Per query: (Σ_j w_j)² / Σ_j w_j², the number of points the estimate effectively rests on. */
  effectiveKeys: Float64Array;
  /** Per query: ln Σ_j w_j; very negative where the query is far from the data (extrapolation). */
  logDenominator: Float64Array;
  /**
   * On a grid: max |grid − exact| over up to 64 of these queries (fitted exactly for the check), relative to the
   * range of y. 0 when the model runs exactly.
   */
  errorEstimate: number;
}

/** A fitted kernel regression; holds its own copy of the sample. */
export interface KernelRegressionModel {
  readonly dim: number;
  readonly kernel: DistanceKernel;
  readonly estimator: Estimator;
  /** What the model computes with: `'grid'` only where the grid reaches the tolerance at this bandwidth. */
  readonly method: 'exact' | 'grid';
  /** One bandwidth per dimension. */
  readonly bandwidth: Float64Array;
  /** How the bandwidth was chosen (`method: 'fixed'` and `score: null` when given). */
  readonly selection: { method: SelectionMethod | 'fixed'; score: number | null; curve: { bandwidths: Float64Array; scores: Float64Array } };
  /** ν = tr(L), the trace of the smoother matrix at the sample. */
  readonly effectiveDegreesOfFreedom: number;
  /** σ̂²_c = RSS_c / (n − 2ν + ν̃) per column of y, ν̃ = tr(LᵀL) (Wasserman 2006, eq. 5.86). */
  readonly residualVariance: Float64Array;
  /** Predictions at xq (I × dim): a new Float32Array of length I·D. */
  predict(xq: NumericArray): Float32Array;
  /** Predictions with pointwise standard errors and a confidence band (level default 0.95). */
  predictInterval(xq: NumericArray, intervalOptions?: { level?: number }): PredictionInterval;
  /** Releases the model's data; idempotent. Later calls throw `'Disposed'`. */
  dispose(): void;
}

export interface KernelAttention {
  /**
   * f(q_i) = Σ_j w(q_i, k_j) v_j / Σ_j w(q_i, k_j), computed in float32 by a streaming engine that never forms the
   * I×J matrix. Scores are shifted by their running maximum, so tiny bandwidths give the nearest key's value and huge
   * softmax scores give the arg-max key's value instead of 0/0.
   * @returns a new Float32Array of length I*D.
   * @throws {KernelAttentionError} on any invalid argument (before any allocation), or `'EmptyRow'` with `empty: 'error'`.
   */
  attention(queries: NumericArray, keys: NumericArray, values: NumericArray, options: AttentionOptions): Float32Array;
  /**
   * attention() with what computed it and, for the approximations, the error estimate.
   * @example
   * const { output, errorEstimate, features } = ka.attentionWithInfo(q, k, v, { dim, method: 'random-features', tolerance: 1e-2 });
   * @throws {KernelAttentionError} as attention(); an option of the other method (`features` with `'nystrom'`), a mask
   * other than `causal`, groups, or a kernel the method cannot approximate is `'BadArgument'` naming that option
   * (`options.method` for the kernel).
   */
  attentionWithInfo(queries: NumericArray, keys: NumericArray, values: NumericArray, options: AttentionOptions): AttentionWithInfo;
  /**
   * The normalised weight matrix, each row summing to 1 (empty rows follow `empty`).
   * @returns a new Float32Array of length I*J, or H*I*J laid out [head][query][key] with `heads: H`.
   */
  weights(queries: NumericArray, keys: NumericArray, options: WeightsOptions): Float32Array;
  /**
   * The partial state of every query over this shard of keys. Masks index keys within the shard (0 … J−1).
   * Merging the states of disjoint shards and finalising gives attention() over all the keys, up to float32 rounding.
   * @example
   * const a = ka.attentionState(q, keys1, values1, { dim });
   * const b = ka.attentionState(q, keys2, values2, { dim }); // e.g. in another worker
   * const out = ka.finalizeState(ka.mergeStates(a, b));
   */
  attentionState(queries: NumericArray, keys: NumericArray, values: NumericArray, options: StateOptions): AttentionState;
  /** Merges states of the same queries over disjoint key shards, in any order; returns a new state. */
  mergeStates(...states: AttentionState[]): AttentionState;
  /**
   * out = acc / sum per query (Float32Array of length I·width). Queries no shard reached follow `empty`
   * (`'nearest'` is not available here: the keys are not at hand).
   */
  finalizeState(state: AttentionState, options?: { empty?: Exclude<EmptyPolicy, 'nearest'> }): Float32Array;
  /**
   * Fits a Nadaraya–Watson or local-linear regression of y (n × D) on x (n × dim), choosing the bandwidth by
   * leave-one-out cross-validation unless told otherwise.
   * @example
   * const model = ka.kernelRegression(x, y, { dim: 1 });
   * const { mean, lower, upper } = model.predictInterval(grid);
   * model.dispose();
   * @throws {KernelAttentionError} on invalid arguments (n must be at least 2).
   */
  kernelRegression(x: NumericArray, y: NumericArray, options: KernelRegressionOptions): KernelRegressionModel;
  /**
   * Chooses a bandwidth for the sample x (n × dim) with values y (n × D).
   * @throws {KernelAttentionError} on invalid arguments (n must be at least 2).
   */
  selectBandwidth(x: NumericArray, y: NumericArray, options: SelectBandwidthOptions): BandwidthSelection;
  /**
   * The leave-one-out least-squares CV score at a bandwidth: Σ_i ω_i Σ_c (y_ic − f_{−i}(x_i)_c)² / Σ_i ω_i, where f_{−i}
   * is the estimate from every other point (ω = 1 without weights); Infinity when some point has no other point
   * within reach.
   */
  cvScore(x: NumericArray, y: NumericArray, options: {
    dim: number; kernel?: DistanceKernel; bandwidth: number | NumericArray; estimator?: Estimator; weights?: NumericArray;
    approximation?: Approximation; tolerance?: number;
  }): number;
  /** The SIMD instruction set the core was compiled for, e.g. `'sse4.1'` (WebAssembly SIMD128). */
  readonly simd: string;
  /**
   * The WebAssembly build in use: `'single'` (one thread, runs everywhere) or `'threads'` (pthreads on
   * SharedArrayBuffer: Node, or cross-origin-isolated pages and workers).
   */
  readonly build: 'single' | 'threads';
  /**
   * The most threads attention(), attentionState(), kernelRegression(), selectBandwidth() and cvScore() run on; a call
   * starts one per 2²⁰ multiply-adds (I·J·(dim + D)) at most, so small calls stay on one.
   */
  readonly threads: number;
}

export interface InitOptions {
  /**
   * `'auto'` (default): the pthreads build with one thread per core (at most 16) where it can run and may block —
   * Node, or a Web Worker in a cross-origin-isolated page — and the single-thread build everywhere else (a page's main
   * thread, pages without COOP/COEP, a pthreads load that fails).
   * `1`: the single-thread build. An integer from 2 to 64: the pthreads build with that many threads; rejects with
   * `'Unsupported'` (argument `'options.threads'`) where SharedArrayBuffer or cross-origin isolation is missing. On a
   * page's main thread it works but joining threads busy-waits there; prefer a Worker.
   * Results are bit-identical for every thread count. Idle pthreads workers do not keep Node running.
   */
  threads?: 'auto' | number;
}

/**
 * Loads and compiles a WebAssembly build once per build, and returns the API for the thread count; later calls with
 * the same (resolved) thread count return the same frozen object.
 * @throws {KernelAttentionError} `'BadArgument'` for an unknown option or a bad `threads`; `'Unsupported'` when
 * WebAssembly SIMD, or the threads asked for, are not available.
 */
export function init(options?: InitOptions): Promise<KernelAttention>;

export type ErrorCode =
  | 'BadArgument' | 'BadShape' | 'NonFinite' | 'BadBandwidth' | 'EmptyRow' | 'OutOfMemory' | 'Unsupported' | 'Disposed';

/** Thrown for any invalid input or failed computation; nothing is left allocated and the module keeps working. */
export class KernelAttentionError extends Error {
  /** Machine-readable reason. */
  readonly code: ErrorCode;
  /** The parameter at fault, e.g. `'keys'` or `'options.bandwidth'`, when there is one. */
  readonly argument?: string;
}
