/// <reference lib="esnext.disposable" />
// Types for kernel-attention: Nadaraya–Watson kernel smoothing and attention, one exact streaming engine in WebAssembly.
// TypeScript ≥ 5.7: results are typed Float32Array<ArrayBuffer> / Float64Array<ArrayBuffer> (generic typed arrays came
// in 5.7), so that they fit where a non-shared buffer is required (`new Blob([fit])`, BufferSource); models and poolings
// are Disposable (`using`), whose types come from the esnext.disposable lib referenced below.
//
// Shapes: I queries (I×dim), J keys (J×dim), J values (J×D), all row-major and flattened.
// D is values.length / J. With `heads: H`, dim and D are split evenly into H heads,
// laid out [token][head][dim]; each head attends on its own slice.

/**
 * A flat numeric array: a plain array of numbers or any numeric typed array (BigInt arrays excluded), every entry
 * finite and within float32 range. It is copied (converted to float32), never mutated or kept.
 */
export type NumericArray =
  | Float32Array
  | Float64Array
  | Int8Array
  | Uint8Array
  | Uint8ClampedArray
  | Int16Array
  | Uint16Array
  | Int32Array
  | Uint32Array
  | readonly number[];

/**
 * What attention() returns for values of type `V`: a Float32Array for a Float32Array, else a Float64Array (values given
 * in double are shifted in double before the float32 pass and the shift added back in double, docs/design.md "The
 * frame"). A `V` known only as NumericArray gives the union.
 */
export type AttentionOutput<V extends NumericArray = NumericArray> = V extends Float32Array
  ? Float32Array<ArrayBuffer>
  : Float64Array<ArrayBuffer>;

/**
 * Kernel names. `softmax`: w = exp(scale · q·k). Distance kernels use u_d = (q_d − k_d) / h_d:
 * `gaussian` exp(−½ Σ u_d²), `laplacian` exp(−Σ |u_d|), `cauchy` 1 / (1 + Σ u_d²);
 * compact product kernels `epanechnikov` Π (1 − u_d²)₊, `tricube` Π (1 − |u_d|³)³₊, `uniform` Π 1[|u_d| ≤ 1].
 */
export type Kernel = 'softmax' | 'gaussian' | 'laplacian' | 'cauchy' | 'epanechnikov' | 'tricube' | 'uniform';

/**
 * What a query with no admissible key returns (every key masked, or a compact kernel with no key in reach):
 * `'nan'` a row of NaN (the default), `'zero'` a row of zeros, `'nearest'` the value of the highest-scoring key that the
 * masks allow (nearest in u for distance kernels; exact ties average; a row of zeros if the masks allow no key at all),
 * `'error'` throws a {@link KernelAttentionError} with code `'EmptyRow'`.
 */
export type EmptyPolicy = 'nan' | 'zero' | 'nearest' | 'error';

/**
 * Which keys a query ignores. Convention: nonzero = the key is ignored, 0 = it takes part.
 * `'loo'`: leave-one-out, query i ignores key i (needs I = J).
 * A Uint8Array of length J: key padding, nonzero = ignore that key for every query (as torch's `key_padding_mask`).
 * A Uint8Array of length I*J (row-major, query-major): nonzero = query i ignores key j (as `nn.MultiheadAttention`'s
 * boolean `attn_mask`). When I = J, a length-J array is read as key padding.
 *
 * PyTorch's `F.scaled_dot_product_attention` has the opposite convention: its boolean `attn_mask` is True where a key
 * takes part, so pass its negation (`Uint8Array.from(allowed, (a) => (a ? 0 : 1))`).
 */
export type Mask = 'loo' | Uint8Array;

/** A group id per query and per key: a query sees only the keys of its own group. */
export interface Groups {
  queries: Int32Array | readonly number[];
  keys: Int32Array | readonly number[];
}

export interface WeightsOptions {
  /** Columns per query and key row (M). Always required: it is never guessed from the inputs' lengths. */
  dim: number;
  /** Default `'softmax'`. */
  kernel?: Kernel;
  /** Softmax only: multiplies q·k. Default 1/√(dim/heads). Finite. */
  scale?: number;
  /** Distance kernels only: one bandwidth, or one per dimension (length dim). Positive and finite. Default 1. */
  bandwidth?: number | NumericArray;
  /**
   * Keys to ignore: nonzero (or key i for `'loo'`) = ignored, the opposite of `F.scaled_dot_product_attention`'s
   * boolean `attn_mask` (True = takes part; pass its negation). See {@link Mask}.
   */
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
 * How attention() computes: `'exact'` the streaming engine; `'random-features'` positive orthogonal
 * random features (Performer's FAVOR+), for `'softmax'` and `'gaussian'`, and random Fourier features for
 * `'laplacian'` and `'cauchy'`; `'nystrom'` the Nyström method with landmarks
 * taken from the keys, for `'softmax'`, `'gaussian'`, `'laplacian'` and `'cauchy'`. Both approximations cost
 * O((I + J)·m·(dim + D)) for m features or landmarks instead of O(I·J·(dim + D)), take the `causal` mask and heads but
 * no other mask nor groups, and run on one thread. `'sparse'` (certified sparsity, up to 3 dimensions per head, the
 * distance kernels) visits only the keys that can matter through a cell grid over the keys: exact for the compact
 * kernels, and for `'gaussian'`, `'laplacian'` and `'cauchy'` it skips keys whose weight is provably below
 * `tolerance` × the query's largest weight, with a per-query bound on the skipped mass (`droppedMass`); it takes the
 * causal, leave-one-out and key-padding masks. `'top-k'` keeps each query's `topK` largest weights, renormalised
 * (another model rather than an approximation: every kernel, mask, group and head count; one thread), and reports
 * how far that is from full attention as `'sparse'` does. The default, `'auto'`, picks between `'sparse'` and
 * `'exact'` ({@link AttentionOptions.method}); see docs/approximations.md.
 */
export type AttentionMethod = 'exact' | 'random-features' | 'nystrom' | 'sparse' | 'top-k';

/** How Nyström picks its landmarks among the keys: k-means++ seeding (default) or uniformly, both seeded. */
export type LandmarkSampling = 'kmeans++' | 'uniform';

export interface AttentionOptions extends WeightsOptions {
  /**
   * Default `'auto'`: it runs `'sparse'` (its `tolerance`, default 1e-3, applies) when the kernel is
   * `'gaussian'`, `'laplacian'` or compact, there are at most 3 dimensions per head, no general mask nor groups,
   * I·J ≥ 2²⁰, and at most 15 % of the keys' bounding box lies within the kernel's reach of a query; otherwise
   * `'exact'`. It never picks random features or Nyström, whose error is only estimated. attentionWithInfo's
   * `method` says which ran and `reason` why; `plan('attention', …)` says it without running. `'exact'` gives the exact
   * engine's bytes always.
   */
  method?: AttentionMethod | 'auto';
  /**
   * The approximations' target: the root-mean-square error over the outputs relative to the range of the values
   * (max − min over every value), strictly between 0 and 1. Sizes `features` / `landmarks` when they are not given.
   * Default 1e-2 (the regression grid's default is 1e-3; random features converge as 1/√m, so 1e-3 would take 100×
   * the features of 1e-2). Ignored by `'exact'`. For `'sparse'` and `'auto'` it is a weight ratio instead (default
   * 1e-3): keys whose weight is provably below tolerance × the query's largest weight are skipped.
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
  /**
   * `'top-k'` only, and required there: how many keys each query keeps (an integer ≥ 1; k ≥ J keeps every key with a
   * nonzero weight). Ties at the k-th weight go to the lower key index.
   */
  topK?: number;
}

/** plan()'s result: the method that would run and why (one sentence starting with the method's name). */
export interface Plan<M extends string> {
  method: M;
  reason: string;
}

export interface RegressionPlanOptions {
  /** Sample size: a positive integer. */
  n: number;
  /** Columns of x: a positive integer. */
  dim: number;
  /** Default `'gaussian'`. */
  kernel?: DistanceKernel;
  /**
   * Default `'auto'`. `'sparse'` (Nadaraya–Watson, at most 3 dimensions, no observation weights, one bandwidth for
   * every query) is kernelRegression's only, so it needs no `rule`.
   */
  method?: 'auto' | 'exact' | 'grid' | 'sparse';
  /** Strictly between 0 and 1; default 1e-3. */
  tolerance?: number;
  /** Default `'local-linear'` (`'nadaraya-watson'` with rule `'cv-gradient'`), as kernelRegression's and selectBandwidth's. */
  estimator?: Estimator;
  /**
   * Without it: what kernelRegression() fits a model on (its predictions and summary). With it: what
   * selectBandwidth() with this rule computes its criterion on (rules of thumb: the CV score they report; cvScore:
   * `'cv'`).
   */
  rule?: SelectBandwidthRule;
  /** Blocked CV's radius (rule `'cv'`), as selectBandwidth's: a number > 0 bins in 1-D only (2-D+ runs exactly). */
  exclude?: number;
  /** Whether observation weights are given (the sparse method serves none). Default false. */
  weights?: boolean;
  /** Whether the bandwidth is a span (`{ span }`: a bandwidth per query, which only the exact fit serves). Default false. */
  span?: boolean;
  /**
   * The columns' types, as kernelRegression's: with discrete columns, the grid serves one continuous column (its fits
   * and leave-one-out search); anything else runs exactly.
   */
  types?: readonly ColumnType[];
}

/** attentionWithInfo()'s result: the output and what computed it. */
export interface AttentionWithInfo<Output extends Float32Array | Float64Array = AttentionOutput> {
  /**
   * What attention() returns with the same arguments: a new array of length I·D, a Float32Array for Float32Array
   * values, else a Float64Array. Queries and keys are centred in double before the float32 pass (docs/design.md, "The
   * frame"), so their offset costs no precision; so are values given in double (a Float64Array, numbers), so an output
   * near 1.7e9 keeps float32's precision on the values' spread. A Float32Array of values is not shifted: it already
   * holds values near 1.7e9 only to steps of 128, and so does its output.
   */
  output: Output;
  method: AttentionMethod;
  /**
   * Why that method ran, one sentence starting with its name: `"sparse: 2-D gaussian, 4194304 pairs, 0.6 % of keys
   * within reach: …"`, `"exact: softmax attention keeps its bytes: …"`, `"nystrom: asked for"`. For people, not
   * for parsing: the wording may change.
   */
  reason: string;
  /**
   * Estimated root-mean-square error of `output` relative to the range of the values; 0 for `'exact'`.
   * `'random-features'`: the delta-method standard error from the spread of the per-feature terms (treating the
   * orthogonal features as independent, which tends to overestimate). `'nystrom'`: measured against the exact engine
   * on up to 64 queries drawn by the seed. `'sparse'`: a guaranteed bound (beyond float32 rounding), not an RMS:
   * every output is within errorEstimate × the range of the values of the exact result; it is the largest
   * droppedMass / (1 + droppedMass), and 0 for the compact kernels. The radius widens (at most four times) until each
   * row's droppedMass is within `tolerance`, so in practice errorEstimate ≤ tolerance. `'top-k'`: the same bound of
   * its distance from full attention, from the weight it dropped.
   */
  errorEstimate: number;
  /**
   * `'sparse'`: per query and head (I·H, query-major), an upper bound on the weight of the skipped keys divided by the
   * weight of the kept ones; 0 when nothing was skipped (always, for compact kernels); NaN for an empty row.
   * `'top-k'`: that ratio itself (the weight of the keys beyond the k-th over the weight of the k kept).
   */
  droppedMass?: Float64Array<ArrayBuffer>;
  /** `'sparse'` and `'top-k'`: (query, key) pairs kept and pairs left out, summed over heads. */
  keptKeys?: number;
  skippedKeys?: number;
  /** `'random-features'`: the number of features used. */
  features?: number;
  /** `'nystrom'`: the number of landmarks used (per head; fewer than asked when the keys have fewer distinct points). */
  landmarks?: number;
  /**
   * Query rows (summed over heads) the approximation could not serve and the exact engine computed instead: a
   * random-feature denominator that underflowed, or a Nyström denominator ≤ 0 or mostly cancellation.
   */
  exactRows: number;
  /**
   * `'precision'` when queries, keys or values given as a Float32Array spread over less than 1e-5 of their magnitude
   * in some column (float32 storage already dropped the digits of their spread; other arrays are centred in double
   * first and keep them); empty when nothing is wrong.
   */
  warnings: ResultWarning[];
}

/**
 * What attentionGradients() returns: the forward output and the gradients of a loss L with respect to every input,
 * given dL/dOut. The float32 arrays have the shapes of the inputs (row-major).
 */
export interface AttentionGradients {
  /** attention() with the same arguments (up to float32 rounding): I·D entries. */
  output: Float32Array<ArrayBuffer>;
  /** dL/dqueries: I·dim entries. */
  dq: Float32Array<ArrayBuffer>;
  /** dL/dkeys: J·dim entries. */
  dk: Float32Array<ArrayBuffer>;
  /** dL/dvalues: J·D entries. */
  dv: Float32Array<ArrayBuffer>;
  /** Softmax only: dL/d`scale` (one number: the heads share the scale). */
  dScale?: number;
  /**
   * Distance kernels only: dL/d(log h_d) per dimension (dim entries), the gradient with respect to the natural log of
   * each dimension's bandwidth (given as one number, it is still one entry per dimension: sum them for dL/d log h).
   * dL/dh_d = dLogBandwidth[d] / h_d.
   */
  dLogBandwidth?: Float32Array<ArrayBuffer>;
}

/** A trainable kernel: one of attentionGradients()' kernels ('uniform' is piecewise constant in its bandwidth). */
export type TrainableKernel = Exclude<Kernel, 'uniform'>;

/** attentionPooling()'s options: the layer's shape, its starting parameters and Adam's settings. */
export interface AttentionPoolingOptions {
  /** Columns of the queries and keys given to forward(). */
  dim: number;
  /** Default `'gaussian'`. */
  kernel?: TrainableKernel;
  /**
   * Distance kernels only: the starting bandwidth, read as float32. One number: one bandwidth shared by every
   * dimension is learned; an array: one per dimension of the space the kernel sees (`dim`, or `projections.rank`).
   * Positive and finite. Default 1 (shared). It is learned as its natural log (so it stays positive).
   */
  bandwidth?: number | NumericArray;
  /** Softmax only: the starting scale, read as float32. Default 1/√(dim), or 1/√(rank) with projections. */
  scale?: number;
  /**
   * Learn query and key projections Wq, Wk (dim × rank each, row-major): the kernel sees queries·Wq and keys·Wk; with
   * `shared: true` one W for both (for a distance kernel a learned metric: it sees |(q − k)·W|). They start uniform in
   * ±1/√dim, drawn from `seed` (an integer from 0 to 2³² − 1, default 0). dim·rank ≤ 2²⁴.
   */
  projections?: { rank: number; seed?: number; shared?: boolean };
  /** Adam's step size. Positive. Default 1e-3. */
  learningRate?: number;
  /** Adam's decay rates of the first and second moments, each in [0, 1). Default [0.9, 0.999]. */
  betas?: readonly [number, number] | Float64Array | Float32Array;
  /** Adam's ε, added to √v̂. Positive. Default 1e-8. */
  epsilon?: number;
}

/** The masks of one forward() call, as attention() takes them (I = J for `'loo'`). */
export interface PoolingForwardOptions {
  /**
   * Keys to ignore, as attention()'s: nonzero (or key i for `'loo'`) = ignored, the opposite of
   * `F.scaled_dot_product_attention`'s boolean `attn_mask` (True = takes part; pass its negation). See {@link Mask}.
   */
  mask?: Mask;
  causal?: boolean;
  groups?: Groups;
  /** Default `'nan'`. */
  empty?: EmptyPolicy;
}

/**
 * The parameters of an attention pooling (copies), or their accumulated gradients: `logBandwidth` (one entry when
 * shared, else one per dimension) for a distance kernel, `scale` for softmax; `Wq` and `Wk` (dim × rank, row-major)
 * with projections, or `W` with a shared one. `bandwidth` (= exp(logBandwidth)) is given with the parameters only.
 */
export interface AttentionPoolingParameters {
  logBandwidth?: Float64Array<ArrayBuffer>;
  bandwidth?: Float64Array<ArrayBuffer>;
  scale?: number;
  Wq?: Float64Array<ArrayBuffer>;
  Wk?: Float64Array<ArrayBuffer>;
  W?: Float64Array<ArrayBuffer>;
}

/**
 * A trainable attention pooling (as the parametric Nadaraya–Watson regression of Dive into Deep Learning):
 * parameters in float64 in JS, forward and backward by the exact engine, Adam. It holds no WebAssembly memory.
 * @example
 * const pooling = ka.attentionPooling({ dim: 1, kernel: 'gaussian', bandwidth: 5, learningRate: 0.1 });
 * for (let epoch = 0; epoch < 30; epoch++) {
 *   const fit = pooling.forward(x, x, y, { mask: 'loo' });
 *   pooling.backward(fit.map((f, i) => 2 * (f - y[i]) / n));  // dL/dfit of the mean squared error
 *   pooling.step();
 * }
 * const [h] = pooling.parameters.bandwidth;
 */
export interface AttentionPooling {
  readonly dim: number;
  readonly kernel: TrainableKernel;
  /** Copies of the current parameters. */
  readonly parameters: AttentionPoolingParameters;
  /** Copies of the gradients accumulated by backward() since the last step() or zeroGrad() (no `bandwidth`). */
  readonly gradients: AttentionPoolingParameters;
  /**
   * attention() of the queries (I × dim) over the keys (J × dim) and values (J × D) with the current parameters: a new
   * Float32Array of I·D. Copies of the inputs, the options and the parameters used are kept for backward() (until the
   * next forward() or dispose()).
   */
  forward(
    queries: NumericArray,
    keys: NumericArray,
    values: NumericArray,
    options?: PoolingForwardOptions,
  ): Float32Array<ArrayBuffer>;
  /**
   * Differentiates the latest forward() (its inputs and the parameters it ran with, even after a step()) given
   * dOut = dL/dOut (I·D entries): adds the parameters' gradients to `gradients`, and returns the gradients with respect
   * to the forward's inputs (new Float32Arrays of their shapes). Each call adds again.
   * @throws {KernelAttentionError} `'BadArgument'` naming `pooling` before any forward(); as attentionGradients() for dOut.
   */
  backward(dOut: NumericArray): {
    dq: Float32Array<ArrayBuffer>;
    dk: Float32Array<ArrayBuffer>;
    dv: Float32Array<ArrayBuffer>;
  };
  /** One Adam step (bias-corrected) on every parameter with the accumulated gradients; then zeroes them. */
  step(): void;
  /** Zeroes the accumulated gradients. */
  zeroGrad(): void;
  /** Drops what the pooling keeps; idempotent. Every later use (the getters too) throws `'Disposed'` naming `pooling`. */
  dispose(): void;
  /** dispose(), for `using pooling = ka.attentionPooling(…)` (where the runtime has Symbol.dispose: Node 20, current browsers). */
  [Symbol.dispose](): void;
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
  readonly max: Float32Array<ArrayBuffer>;
  readonly sum: Float32Array<ArrayBuffer>;
  readonly acc: Float32Array<ArrayBuffer>;
}

/** Options of attentionState(): those of weights() except `empty`, which finalizeState() takes (no `method`: states are exact). */
export type StateOptions = Omit<WeightsOptions, 'empty'>;

/** Distance kernels: every kernel but softmax. */
export type DistanceKernel = Exclude<Kernel, 'softmax'>;

/**
 * A regression column's type (mixed data, docs/regression.md "Mixed data"): `'continuous'` (a distance kernel with
 * bandwidth h), `'unordered'` (a category: Aitchison–Aitken kernel, λ in 0 … (c − 1)/c), `'ordered'` (ordered levels:
 * Wang–van Ryzin or Li–Racine kernel, λ in 0 … 1).
 */
export type ColumnType = 'continuous' | 'unordered' | 'ordered';
/** The ordered columns' kernel: `'wang-van-ryzin'` (statsmodels'), or `'li-racine'`, λ^|a − b| (R np's `'liracine'`). */
export type OrderedKernel = 'wang-van-ryzin' | 'li-racine';
/**
 * A regression sample or queries, n × dim row-major: numbers, or (mixed data, a plain array) labels (strings) in a
 * discrete column, coded in the sorted order of the sample's labels. A discrete column's numbers are integer codes
 * 0 … c − 1.
 */
export type SampleArray = NumericArray | ReadonlyArray<number | string>;

/** The options that describe mixed data (kernelRegression, selectBandwidth, cvScore and their async forms). */
export interface ColumnTypeOptions {
  /**
   * One type per column of x (default: all continuous). With a discrete column, the bandwidth array carries λ for it
   * (h for each continuous column), local-linear and local-quadratic fit in the continuous columns only (Li & Racine
   * 2004; statsmodels also puts the codes in the design), the search covers (h, λ) jointly with λ within its range,
   * and the rules of thumb, `'plugin'`, `'cv-gradient'`, `exclude`, span bandwidths and the sparse method are refused;
   * the grid serves one continuous column beside the discrete ones (its fits from 20,000 points and its leave-one-out
   * search from 5,000 under `'auto'`, each group of levels binned over every point), and is refused with more.
   */
  types?: readonly ColumnType[];
  /** Default `'wang-van-ryzin'`. */
  orderedKernel?: OrderedKernel;
}

export interface SelectBandwidthOptions extends ColumnTypeOptions {
  /** Columns of x. */
  dim: number;
  /** Default `'gaussian'`. */
  kernel?: DistanceKernel;
  /**
   * The estimator the bandwidth is for. Default `'local-linear'`, as kernelRegression's (before 0.2.0 it was
   * `'nadaraya-watson'`); with `rule: 'cv-gradient'` the default is `'nadaraya-watson'`, the only one it supports.
   */
  estimator?: Estimator;
  /**
   * How the bandwidth is chosen. `'cv'` (default): minimise the leave-one-out least-squares CV score over log h, starting from Scott's rule.
   * `'aicc'`: minimise AICc (Hurvich, Simonoff & Tsai 1998), ln σ̂² + (1 + ν/n) / (1 − (ν + 2)/n), ν = tr(L).
   * `'scott'`: h_d = s_d · n^(−1/(dim+4)); `'silverman'`: h_d = 0.9 · min(s_d, IQR_d/1.349) · n^(−1/(dim+4)), with s_d the
   * sample standard deviation (ddof 1) and IQR_d by linear interpolation; a zero spread falls back to the other
   * measure, then to 1e-3·|mean_d|, then to 1.
   * `'cv-gradient'`: minimise the same CV score by L-BFGS on its exact gradient (the attention backward pass), one
   * log-bandwidth per dimension from Scott's rule, each kept within 1e-3 … 1e3 times its start (an irrelevant input's
   * bandwidth grows to the top of that box); Nadaraya–Watson only (its default estimator), not with `'uniform'`,
   * `weights` or `method: 'grid'` (each a `'BadArgument'` naming that option). Always per dimension, always exact.
   * `'plugin'`: the direct plug-in bandwidth of Ruppert, Sheather & Wand (1995), computed as R's
   * `KernSmooth::dpill(x, y)` computes it (in float64, with its defaults; the Gaussian kernel's h is dpill's, other
   * kernels' the same AMISE-optimal bandwidth in their units, see {@link PluginDetail}). 1-D (`dim: 1`), one column
   * of y, local-linear only, no `weights`, not the `'cauchy'` kernel (each a `'BadArgument'` naming that option); on
   * data it cannot use (fewer than 5 distinct x, gaps wider than its pilot bandwidths, …) a `'BadArgument'` naming
   * `x` or `y` says why. No CV score (`score: null`).
   */
  rule?: SelectBandwidthRule;
  /** `'cv'` and `'aicc'`: a bandwidth per dimension by coordinate descent after the common scale. Default false. */
  perDimension?: boolean;
  /**
   * `'cv-gradient'` only: `'diagonal'` (default), one bandwidth per dimension, u_d = (q_d − k_d)/h_d; `'full'`, a
   * learned linear metric u = L(q − k) (L dim × dim, starting at diag(1/h_Scott), unbounded): the result's
   * `transform`.
   */
  metric?: 'diagonal' | 'full';
  /** `'cv-gradient'` only: the most L-BFGS iterations (accepted steps). Default 100. */
  maxIterations?: number;
  /** Observation weights ω_i ≥ 0 (n entries, not all zero): each point's kernel weight is multiplied by ω_i. */
  weights?: NumericArray;
  /**
   * How leave-one-out CV or AICc is computed: `'exact'`, `'grid'` (1-D and 2-D, binned; not for `'cauchy'`), or
   * `'auto'` (default: the grid from 20,000 points on in 1-D and 2-D, and a CV or AICc search, 1-D or 2-D, from 5,000).
   * The same word as kernelRegression's and
   * attention's `method`.
   *
   * A rule name here (`method: 'cv'`) is the spelling before 0.2.0: still read as `rule`, with a one-time deprecation
   * message, until the next minor version (deprecated; passing it together with `rule` is a `'BadArgument'`).
   */
  method?: Approximation | SelectBandwidthRule;
  /**
   * @deprecated since 0.2.0: use `method` (same values). Still read, with a one-time deprecation message; passing
   * both is a `'BadArgument'`.
   */
  approximation?: Approximation;
  /** The grid's relative tolerance (it sizes the grid), strictly between 0 and 1. Default 1e-3. */
  tolerance?: number;
  /**
   * Blocked CV for serial data (Chu & Marron 1991), rule `'cv'` only: each held-out point is fitted without every
   * point within this distance of it along x's first column (in x's units), r ≥ 0, finite. Default 0 (leave-one-out).
   * In 1-D it runs on the grid where `method` gives leave-one-out CV one (each band left out of the grid's moments
   * exactly); in 2-D and more it runs exactly, whatever `method` says. Any other rule with r > 0 is a `'BadArgument'`
   * naming `options.exclude`.
   */
  exclude?: number;
}

/** cvScore()'s options. */
export interface CvScoreOptions extends ColumnTypeOptions {
  /** Columns of x. */
  dim: number;
  /** Default `'gaussian'`. */
  kernel?: DistanceKernel;
  /** One bandwidth, or one per dimension (length dim). Positive and finite; λ for a discrete column (`types`). */
  bandwidth: number | NumericArray;
  /** Default `'local-linear'` (before 0.2.0 `'nadaraya-watson'`). */
  estimator?: Estimator;
  /** Observation weights ω_i ≥ 0 (n entries, not all zero). */
  weights?: NumericArray;
  /** How the score is computed, as {@link SelectBandwidthOptions.method}: `'auto'` (default), `'exact'` or `'grid'`. */
  method?: Approximation;
  /**
   * @deprecated since 0.2.0: use `method` (same values). Still read, with a one-time deprecation message; passing
   * both is a `'BadArgument'`.
   */
  approximation?: Approximation;
  /** The grid's relative tolerance, strictly between 0 and 1. Default 1e-3. */
  tolerance?: number;
  /** Blocked CV's radius, as {@link SelectBandwidthOptions.exclude}. Default 0 (leave-one-out). */
  exclude?: number;
}

/** `'grid'`: linear binning and convolution, O(n + G·L) instead of O(n²); see docs/regression.md. */
export type Approximation = 'auto' | 'exact' | 'grid';

/**
 * The local polynomial's degree, as R's `loess(degree = )` and KernSmooth's `locpoly(degree = )` count it:
 * `'nadaraya-watson'` 0, `'local-linear'` 1, `'local-quadratic'` 2 (runs exactly: no grid).
 */
export type Estimator = 'nadaraya-watson' | 'local-linear' | 'local-quadratic';
/** The bandwidth rules kernelRegression's `bandwidth` takes by name. */
export type BandwidthRule = 'cv' | 'aicc' | 'scott' | 'silverman' | 'plugin';
/** selectBandwidth's rules: kernelRegression's, and the gradient search `'cv-gradient'`. */
export type SelectBandwidthRule = BandwidthRule | 'cv-gradient';
/** @deprecated since 0.2.0: renamed {@link BandwidthRule}. */
export type SelectionMethod = BandwidthRule;
/** @deprecated since 0.2.0: renamed {@link SelectBandwidthRule}. */
export type SelectBandwidthMethod = SelectBandwidthRule;

/** What a warning on a result is about (docs/regression.md, "Warnings"). */
export type WarningCode = 'interpolating' | 'precision' | 'guard' | 'sparse-points';
export interface ResultWarning {
  code: WarningCode;
  /** A sentence saying what was seen (with the numbers) and what to do. */
  message: string;
}

export interface BandwidthSelection {
  /** The rule used (before 0.2.0 this field was `method`). */
  rule: SelectBandwidthRule;
  /**
   * `'interpolating'` (a chosen h below the median spacing), `'precision'` and `'sparse-points'` (a CV or AICc choice
   * where the criterion turns finite, set by a few isolated points); empty when nothing is wrong.
   */
  warnings: ResultWarning[];
  /** How the CV scores were computed (before 0.2.0 this field was `approximation`). */
  method: 'exact' | 'grid';
  /** Why, one sentence starting with `method` (see AttentionWithInfo's `reason`). */
  reason: string;
  /** One bandwidth per dimension, always positive and finite (with `metric: 'full'`, see `transform`). */
  bandwidth: Float64Array<ArrayBuffer>;
  /**
   * For `'aicc'` the AICc; otherwise the CV score Σ_i ω_i Σ_c (y_ic − f_{−i}(x_i)_c)² / Σ_i ω_i at the chosen
   * bandwidth (ω = 1 without weights; also reported for the rules of thumb). `null` for `'plugin'`, which computes
   * none (at 10⁶ points a CV score costs several times the rule; cvScore() gives it).
   */
  score: number | null;
  /**
   * Every CV evaluation of the search in order (empty for the rules): bandwidths [eval][dim] and their scores (a
   * bandwidth first scored on a coarser grid and then at the search's own tolerance appears twice). For
   * `'cv-gradient'` one entry per evaluation, line-search trials included; with `metric: 'full'` the bandwidths are
   * each L's 1/‖L e_d‖ and `transforms` [eval][dim·dim] holds the L themselves.
   */
  curve: {
    bandwidths: Float64Array<ArrayBuffer>;
    scores: Float64Array<ArrayBuffer>;
    transforms?: Float64Array<ArrayBuffer>;
  };
  /** `'cv-gradient'` only: the metric searched. */
  metric?: 'diagonal' | 'full';
  /** `'cv-gradient'` only: the L-BFGS iterations (accepted steps) made. */
  iterations?: number;
  /**
   * `'cv-gradient'` with `metric: 'full'`: the learned L (dim × dim, row-major), u = L(q − k) with unit bandwidths;
   * `bandwidth` is then 1/‖L e_d‖, the metric's length scale along axis d (Infinity for an axis it ignores).
   */
  transform?: Float64Array<ArrayBuffer>;
  /** `'plugin'` only: what the rule estimated on the way (docs/regression.md, "Bandwidth selection"). */
  plugin?: PluginDetail;
}

/**
 * The plug-in rule's estimates (KernSmooth's dpill; docs/regression.md): after sorting x and trimming 1 % at each
 * end, blocked quartic fits over `blocks` blocks (chosen by Mallows' Cp among 1 … `maxBlocks`) give the pilots, and
 * binned local fits give θ22 and σ², so that h = [σ² (b − a) / (2√π θ22 n)]^(1/5) on [a, b], the trimmed range.
 */
export interface PluginDetail {
  /**
   * dpill's h: the Gaussian kernel's standard deviation, which is the `'gaussian'` kernel's bandwidth. Another
   * kernel's `bandwidth` is h·[2√π R(K)/μ₂(K)²]^(1/5): Epanechnikov 2.2138·h, tricube 2.6098·h, uniform 1.7401·h,
   * Laplacian 0.7398·h.
   */
  gaussianBandwidth: number;
  /** The points after trimming. */
  n: number;
  /** The number of blocks Cp chose. */
  blocks: number;
  /** The block counts compared: dpill's max(min(⌊n/20⌋, 5), 1), or fewer where a block would hold under 5 distinct x. */
  maxBlocks: number;
  /** σ̂², the kernel estimate of the residual variance. */
  sigma2: number;
  /** θ̂22 = (1/n) Σ m̂″(x_i)², the binned kernel estimate. */
  theta22: number;
  /** σ̂² of the blocked quartics (the pilots'). */
  sigma2Quartic: number;
  /** θ̂24 = (1/n) Σ m̂″(x_i) m̂⁽⁴⁾(x_i) of the blocked quartics. */
  theta24Quartic: number;
  /** The pilot bandwidth of θ̂22's local cubic fits. */
  pilotCurvature: number;
  /** The pilot bandwidth of σ̂²'s local-linear fits. */
  pilotVariance: number;
}

export interface KernelRegressionOptions extends ColumnTypeOptions {
  /** Columns of x (1 for ordinary 1-D regression). */
  dim: number;
  /** Default `'gaussian'`. */
  kernel?: DistanceKernel;
  /**
   * A number (all dimensions), one per dimension, or how to choose it: `'cv'` (default), `'aicc'`, `'scott'`,
   * `'silverman'` or `'plugin'` (see {@link SelectBandwidthOptions.rule}). Or a nearest-neighbour span `{ span: f }`,
   * f > 0 (R's `loess` span): each query's bandwidth is the distance to its k-th nearest sample point, k = ⌊f·n⌋ as R's
   * loess counts it (at least the local design's columns + 1: 2 for Nadaraya–Watson, dim + 2 for local-linear; at most
   * n), and above f = 1 the distance to the farthest point times √f (R's loess); in 2-D and above with each column of x first divided by its 10 %-trimmed standard deviation (R's
   * loess `normalize = TRUE`), times that column's scale. Spans run exactly (`method` `'auto'` or `'exact'`). With
   * discrete columns (`types`): one entry per column, λ for a discrete one; `'cv'` or `'aicc'` to choose them.
   */
  bandwidth?: number | NumericArray | BandwidthRule | { span: number };
  /**
   * `'local-linear'` (default): the intercept of the weighted least-squares line (plane) around each query, free of
   * Nadaraya–Watson's bias at the edges of the data and where x is unevenly spread. `'nadaraya-watson'`: the
   * weighted mean. `'local-quadratic'` (R's loess default, degree 2): the intercept of the weighted least-squares
   * parabola (in 2-D the quadric 1, x, y, x², xy, y²), which keeps peaks and troughs from being flattened, at the
   * cost of more variance; it runs exactly (`method` `'auto'` never bins it, `'grid'` is a `'BadArgument'`).
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
   * not for `'cauchy'` nor `'local-quadratic'`), or `'auto'` (default: the grid from 20,000 points on in 1-D and 2-D; a 1-D CV search from 5,000). Used for the bandwidth search,
   * the fit statistics and every prediction. `'sparse'` (Nadaraya–Watson only, up to 3 dimensions, no `weights`): the
   * predictions visit only the points that can matter (certified sparsity, as attention()'s `'sparse'`); the bandwidth
   * search and the fit statistics run exactly.
   */
  method?: Approximation | 'sparse';
  /**
   * The grid's relative tolerance (it sizes the grid), strictly between 0 and 1. Default 1e-3. With `'sparse'`, the
   * weight ratio below which points are skipped.
   */
  tolerance?: number;
  /** With `bandwidth: 'cv'`: blocked CV's radius (see {@link SelectBandwidthOptions.exclude}). Default 0. */
  exclude?: number;
  /**
   * Cleveland's bisquare robustness, as LOWESS's: after the fit at the chosen bandwidth (a search runs once, without
   * robustness weights), `iterations` times: residuals r_j at the sample, s = 6·median|r| (over the points with ω_j >
   * 0), robustness weight (1 − (r_j/s)²)² for |r_j| < s else 0, refit with ω_j × that weight. Stops early when s ≤
   * 1e-5·range(y) (the fit is exact). `true` is `{ iterations: 3 }`; default false. One column of y only.
   */
  robust?: boolean | { iterations?: number };
}

/** predictInterval()'s options. */
export interface IntervalOptions {
  /** The band's level, strictly between 0 and 1. Default 0.95. */
  level?: number;
  /**
   * `'global'` (default): one residual variance σ̂²_c per column, stderr = σ̂_c·√Σ_j ℓ_j(q)². `'local'`: σ²(q) from a
   * local-linear smooth of ln(r_j² + σ̂²_c/n) with its own CV bandwidth, exponentiated, rescaled so that its
   * weighted mean over the sample is σ̂²_c, and floored at 0.01·σ̂²_c; stderr = √(σ²(q)·Σ_j ℓ_j(q)²). For noise whose
   * spread changes with x (see `localVariance`).
   */
  variance?: 'global' | 'local';
}

/** What predictInterval()'s `variance: 'local'` estimated (KernelRegressionModel.localVariance). */
export interface LocalVariance {
  /** The variance smoother's bandwidth, one per dimension (leave-one-out CV on the log squared residuals). */
  bandwidth: Float64Array<ArrayBuffer>;
  /** Its search, as KernelRegressionModel.selection. */
  selection: KernelRegressionModel['selection'];
  /** Its effective degrees of freedom. */
  effectiveDegreesOfFreedom: number;
  /** Its warnings (`'interpolating'`: the variance estimate follows single residuals). */
  warnings: ResultWarning[];
  /** Per column: the factor c_c that makes the weighted mean of c_c·exp(smooth(x_j)) over the sample σ̂²_c. */
  scale: Float64Array<ArrayBuffer>;
  /** Per column: σ²(x) is never below this (0.01·σ̂²_c). */
  floor: Float64Array<ArrayBuffer>;
}

export interface PredictionInterval {
  /** f(x_q), I·D values in y's units, in double (the engine's float32 pass ran on centred y). */
  mean: Float64Array<ArrayBuffer>;
  /** mean ∓ z·stderr with z the standard normal quantile of (1 + level)/2: a pointwise band for E[f̂(x_q)]. */
  lower: Float64Array<ArrayBuffer>;
  upper: Float64Array<ArrayBuffer>;
  /**
   * σ̂_c · sqrt(Σ_j ℓ_j(x_q)²), the linear smoother's standard error (it ignores smoothing bias); with `variance:
   * 'local'`, sqrt(σ²(x_q) · Σ_j ℓ_j(x_q)²).
   */
  stderr: Float64Array<ArrayBuffer>;
  /** Per query: (Σ_j w_j)² / Σ_j w_j², the number of points the estimate effectively rests on. */
  effectiveKeys: Float64Array<ArrayBuffer>;
  /** Per query: ln Σ_j w_j; very negative where the query is far from the data (extrapolation). */
  logDenominator: Float64Array<ArrayBuffer>;
  /**
   * On a grid: max |grid − exact| over up to 64 of these queries (fitted exactly for the check), relative to the
   * range of y. 0 when the model runs exactly. With `'sparse'`: a guaranteed bound on |sparse − exact| over these
   * queries relative to the range of y (beyond float32 rounding; 0 for compact kernels).
   */
  errorEstimate: number;
  /** Span models only: each query's bandwidth per dimension (I × dim). */
  bandwidths?: Float64Array<ArrayBuffer>;
}

/** What gradient() returns: I × dim × D values, entry [(i·dim + d)·D + c] for query i, dimension d, column c of y. */
export interface RegressionGradient {
  /**
   * ∂f̂/∂x_d at each query. Local-linear: the fitted slope of the local weighted least-squares fit; Nadaraya–Watson:
   * the derivative of the weighted mean, Σ_j ∂w_j/∂x_d (y_j − f̂) / Σ_j w_j. At the query's own bandwidth (held fixed
   * for span models). Computed exactly, also for grid and sparse models. NaN where no point is in reach, and along a
   * discrete column (mixed data): its levels have no derivative.
   */
  gradient: Float64Array<ArrayBuffer>;
  /** σ̂_c · sqrt(Σ_j ℓ'_j²), ℓ' the derivative's own linear-smoother weights (it ignores smoothing bias). */
  stderr: Float64Array<ArrayBuffer>;
  /** Span models only: each query's bandwidth per dimension (I × dim). */
  bandwidths?: Float64Array<ArrayBuffer>;
}

/** How far an async call has got: `done` of `total` steps (query rows, or criterion evaluations of a search). */
export interface Progress {
  /** Steps finished: an integer from 1 that never decreases (a search's last report repeats it with `total` = `done`). */
  done: number;
  /**
   * All the steps: fixed for query rows; for a bandwidth search an estimate that can grow while the search extends,
   * equal to `done` in the last report.
   */
  total: number;
}

/**
 * Progress and cancellation, for the async functions. The work runs in steps (about 2²⁵ multiply-adds of query rows,
 * or one criterion evaluation of a bandwidth search); between steps the call reports progress and yields a macrotask
 * to the event loop, so that timers, messages and the page's own `abort()` get to run.
 */
export interface AsyncOptions {
  /**
   * Stops the call at the next step: it rejects with `signal.reason` (a `DOMException` named `'AbortError'` unless
   * `abort(reason)` gave another) and frees all its WebAssembly memory. An aborted signal rejects before any work; an
   * abort after the call settled changes nothing.
   */
  signal?: AbortSignal;
  /** Called after each step; an exception it throws rejects the call (with memory freed). */
  onProgress?: (progress: Progress) => void;
}

/**
 * A fitted kernel regression; holds its own copy of the sample in WebAssembly memory (copied once: predictions copy
 * only their queries) until dispose(), which is the way to give it back (a model collected undisposed is freed too,
 * but collection may come late or never).
 */
/** A span model's bandwidth (KernelRegressionModel.bandwidth for `bandwidth: { span }`). */
export interface SpanBandwidth {
  readonly span: number;
  /** The per-dimension factors (the trimmed standard deviations; 1 in 1-D) each neighbour distance multiplies. */
  readonly scale: Float64Array<ArrayBuffer>;
  /** k, the neighbour whose distance each query's bandwidth is: min(n, max(⌊f·n⌋, the design's columns + 1)). */
  readonly neighbours: number;
}

/**
 * kernelRegression's model. Its type arguments follow the options it was fitted with (kernelRegression's overloads):
 * `Bandwidth` is a Float64Array for a fixed bandwidth or a rule, {@link SpanBandwidth} for a span; `Score` is a number
 * for a rule (`'cv'`, the default, `'aicc'`, `'scott'`, `'silverman'`: the CV or AICc score at the bandwidth chosen)
 * and null for a fixed bandwidth or a span. Without them it is the union of both, for models of options not known
 * until run time.
 */
export interface KernelRegressionModel<
  Bandwidth extends Float64Array<ArrayBuffer> | SpanBandwidth = Float64Array<ArrayBuffer> | SpanBandwidth,
  Score extends number | null = number | null,
> {
  readonly dim: number;
  readonly kernel: DistanceKernel;
  readonly estimator: Estimator;
  /** Mixed data: the columns' types and the ordered kernel; null when every column is continuous. */
  readonly types: readonly ColumnType[] | null;
  readonly orderedKernel: OrderedKernel | null;
  /** What the model computes with: `'grid'` only where the grid reaches the tolerance at this bandwidth. */
  readonly method: 'exact' | 'grid' | 'sparse';
  /**
   * Why, one sentence starting with `method`: `"grid: 1-D gaussian, 20000 points on 914 nodes per axis, within
   * 0.001"`, or why the fit runs exactly (a sample below 20,000 points, a bandwidth no grid serves, …).
   */
  readonly reason: string;
  /**
   * One bandwidth per dimension (λ for a discrete column); for a span model `{ span, scale }`, scale the per-dimension factors (the trimmed
   * standard deviations; 1 in 1-D) that each query's neighbour distance multiplies.
   */
  readonly bandwidth: Bandwidth;
  /**
   * How the bandwidth was chosen: its `rule` (`'fixed'`, with `score: null`, when given; `'span'` for a span; before
   * 0.2.0 this field was `method`).
   */
  readonly selection: {
    rule: BandwidthRule | 'fixed' | 'span';
    score: Score;
    curve: { bandwidths: Float64Array<ArrayBuffer>; scores: Float64Array<ArrayBuffer> };
    /** `'plugin'` only: the rule's estimates. */
    plugin?: PluginDetail;
  };
  /** ν = tr(L), the trace of the smoother matrix at the sample (withBandwidth's models compute it on first read). */
  readonly effectiveDegreesOfFreedom: number;
  /** σ̂²_c = RSS_c / (n − 2ν + ν̃) per column of y, ν̃ = tr(LᵀL) (Wasserman 2006, eq. 5.86). */
  readonly residualVariance: Float64Array<ArrayBuffer>;
  /**
   * `'interpolating'` (ν ≥ 0.9·n or h below the median spacing), `'precision'` (x or y given as a Float32Array that
   * spreads over less than 1e-5 of its magnitude in some column), `'guard'` and, where its bandwidth was chosen by
   * CV or AICc at the criterion's edge, `'sparse-points'`; empty when nothing is wrong.
   */
  readonly warnings: ResultWarning[];
  /**
   * With `robust`: the bisquare robustness weight of each point in the final fit (n, the input's order, in [0, 1];
   * all 1 when the first fit was already exact); null without.
   */
  readonly robustnessWeights: Float64Array<ArrayBuffer> | null;
  /**
   * The local variance estimate that predictInterval's `variance: 'local'` uses: made once, by the first such call
   * (sync or async), and kept; null before that and after dispose().
   */
  readonly localVariance: LocalVariance | null;
  /**
   * Predictions at xq (I × dim): a new Float64Array of length I·D. x, the queries and y are centred per column in
   * double before the engine's float32 pass and the fit is shifted back in double (docs/design.md, "The frame"), so
   * x as Unix seconds or milliseconds and y with a large offset keep their precision.
   */
  predict(xq: SampleArray): Float64Array<ArrayBuffer>;
  /** Predictions with pointwise standard errors and a confidence band (level default 0.95, variance default 'global'). */
  predictInterval(xq: SampleArray, intervalOptions?: IntervalOptions): PredictionInterval;
  /**
   * ∂f̂/∂x at xq (I × dim) with standard errors; not for the `'uniform'` kernel (flat: no derivative). A grid model
   * reads its grid's moments where they serve the row (within its tolerance), other rows are exact.
   */
  gradient(xq: SampleArray): RegressionGradient;
  /**
   * predict() in steps of query rows (an exact fit; a grid fit is one step), with progress in rows and
   * cancellation; resolves to predict()'s bytes.
   */
  predictAsync(xq: SampleArray, options?: AsyncOptions): Promise<Float64Array<ArrayBuffer>>;
  /**
   * predictInterval() in steps, as predictAsync(); resolves to predictInterval()'s bytes. With `variance: 'local'`,
   * the first call also runs the variance smoother's bandwidth search (stopped by `signal`, not counted in progress).
   */
  predictIntervalAsync(xq: SampleArray, intervalOptions?: IntervalOptions & AsyncOptions): Promise<PredictionInterval>;
  /**
   * The model at another fixed bandwidth `h` (one number, or one per dimension), as kernelRegression with `bandwidth:
   * h` and this model's other options fits it (`selection.rule` `'fixed'`), sharing this model's copy of the sample
   * and, on a grid, its bins (a bandwidth that needs finer bins, or far coarser ones, bins again): a bandwidth slider
   * re-convolves instead of refitting. The new model needs its own dispose(); disposing either keeps the other
   * working. Its effective degrees of freedom, residual variance and warnings are computed on first read. A robust
   * model refits its robustness weights at h; a span model gives a fixed-bandwidth model that runs exactly.
   * Errors: `'BadBandwidth'`/`'BadShape'`/`'BadArgument'` naming `h`, `'Disposed'`.
   */
  withBandwidth(h: number | ArrayLike<number>): KernelRegressionModel<Float64Array<ArrayBuffer>, null>;
  /** Releases the model's data (its WebAssembly memory once no other model shares it); idempotent. Later calls throw `'Disposed'`. */
  dispose(): void;
  /** dispose(), for `using model = ka.kernelRegression(…)` (where the runtime has Symbol.dispose: Node 20, current browsers). */
  [Symbol.dispose](): void;
}

/** Options of lowess(); the defaults are R's lowess() defaults. */
export interface LowessOptions {
  /** The span f in (0, 1]: each fit uses the max(2, ⌊f·n + 1e-7⌋) points nearest in x (R's `f`, statsmodels' `frac`). Default 2/3. */
  frac?: number;
  /** Robustness iterations after the first fit, an integer ≥ 0 (R's `iter`, statsmodels' `it`). Default 3. */
  iterations?: number;
  /**
   * Distance in x within which fits are not computed but interpolated linearly (≥ 0, finite); 0 fits at every
   * point. Default 0.01 · (max x − min x), as R's (statsmodels' default is 0).
   */
  delta?: number;
}

/** What lowess() returns, in the input's order. */
export interface LowessResult {
  /** The smoothed value at each x (computed in float64 throughout: no float32 pass, no shift needed). */
  fitted: Float64Array<ArrayBuffer>;
  /**
   * The bisquare robustness weight of each point in the final fit, in [0, 1]: 1 for every point when
   * `iterations` is 0 or the first fit was already exact (R stops iterating there).
   */
  weights: Float64Array<ArrayBuffer>;
}

/** Options of loess(); the defaults are R's loess() and loess.control() defaults. */
export interface LoessOptions {
  /** Predictors per point, 1 to 4 (x is n × dim, row-major). Default 1. */
  dim?: number;
  /**
   * Each local fit uses q = min(n, ⌊n·span⌋) points: those nearer than the q-th nearest (which weighs 0). Above 1
   * every point, with the radius grown by √span. > 0; default 0.75.
   */
  span?: number;
  /** The local polynomial's degree: 0, 1 or 2. Default 2. */
  degree?: 0 | 1 | 2;
  /** `'symmetric'`: `iterations` fits with bisquare robustness weights. Default `'gaussian'`. */
  family?: 'gaussian' | 'symmetric';
  /**
   * `'interpolate'` (default): exact fits at the vertices of a k-d tree, blended between (NaN outside the data's
   * range); `'direct'`: an exact fit at every point asked for.
   */
  surface?: 'interpolate' | 'direct';
  /** With dim > 1, divide each predictor by its 10 %-trimmed standard deviation first (R's normalize). Default true. */
  normalize?: boolean;
  /** Fits in all with `family: 'symmetric'` (R's loess.control iterations), 1 to 1000. Default 4. */
  iterations?: number;
  /** Interpolation: the k-d tree's leaves hold at most ⌊n·span·cell⌋ points. > 0; default 0.2. */
  cell?: number;
  /**
   * Prior weights, one per point, ≥ 0 and not all 0 (a point of weight 0 still counts in the span, as in R). Default
   * all 1.
   */
  weights?: NumericArray;
  /**
   * `'approximate'` (default): R's approximations of δ1 and δ2 from the trace; `'exact'`: from the whole n × n
   * operator (O(n³), small samples); `'none'`: no statistics (and no predictInterval).
   */
  statistics?: 'approximate' | 'exact' | 'none';
  /**
   * With the interpolated surface and approximate statistics: the operator's trace `'exact'` (default, as R) or
   * by R's `'approximate'` formula (R advises it above about 1,000 points).
   */
  traceHat?: 'exact' | 'approximate';
}

/** loess()'s confidence band (R's predict(se = TRUE) and pointwise()). */
export interface LoessInterval {
  /** The fit at each query (NaN outside the data's range with the interpolated surface, R's NA). */
  mean: Float64Array<ArrayBuffer>;
  /** R's se.fit: residualScale · √(Σ_j L_qj² / w_j), L_q the prediction's operator row, w the prior weights. */
  stderr: Float64Array<ArrayBuffer>;
  /** mean ∓ quantile·stderr. */
  lower: Float64Array<ArrayBuffer>;
  upper: Float64Array<ArrayBuffer>;
  /** R's df: oneDelta² / twoDelta. */
  degreesOfFreedom: number;
  /** Student's t quantile of (1 + level)/2 with degreesOfFreedom (NaN where they are not positive, as in R). */
  quantile: number;
}

/** A loess fit: R's loess object with its statistics, predict() and predict(se = TRUE). */
export interface LoessModel {
  /** The options the fit used, defaults filled in. */
  readonly options: Readonly<Required<Omit<LoessOptions, 'weights'>>>;
  /** Number of points. */
  readonly size: number;
  /** Fitted values, residuals y − fitted and the last fit's robustness weights (1 for gaussian), in the input's order. */
  readonly fitted: Float64Array<ArrayBuffer>;
  readonly residuals: Float64Array<ArrayBuffer>;
  readonly robustnessWeights: Float64Array<ArrayBuffer>;
  /** R's enp = oneDelta + 2·traceHat − n (NaN with statistics 'none'). */
  readonly enp: number;
  /** R's s: √(Σ w r² / oneDelta), r the residuals (symmetric family: those of R's pseudovalues). */
  readonly residualScale: number;
  /** δ1 = tr (I − L)ᵀ(I − L) and δ2 = tr ((I − L)ᵀ(I − L))², exact or by R's approximation. */
  readonly oneDelta: number;
  readonly twoDelta: number;
  /** tr L, the operator's trace (R's trace.hat). */
  readonly traceHat: number;
  /** oneDelta² / twoDelta: the t degrees of freedom of the intervals (R's df). */
  readonly degreesOfFreedom: number;
  /** Whether some local fit dropped a singular value (R warns "pseudoinverse used"). */
  readonly pseudoInverse: boolean;
  /** The fit at the queries xq (m × dim, row-major): R's predict(fit, xq). */
  predict(xq: NumericArray): Float64Array<ArrayBuffer>;
  /** The fit with R's standard errors and a t band (level default 0.95); not with statistics 'none'. */
  predictInterval(xq: NumericArray, intervalOptions?: { level?: number }): LoessInterval;
  /** Frees the model's WebAssembly memory; idempotent. Later predictions throw `'Disposed'`. */
  dispose(): void;
  /** dispose(), for `using fit = ka.loess(…)` (where the runtime has Symbol.dispose). */
  [Symbol.dispose](): void;
}

export interface KernelAttention {
  /**
   * f(q_i) = Σ_j w(q_i, k_j) v_j / Σ_j w(q_i, k_j), computed in float32 by a streaming engine that never forms the
   * I×J matrix. Scores are shifted by their running maximum, so tiny bandwidths give the nearest key's value and huge
   * softmax scores give the arg-max key's value instead of 0/0.
   * @returns a new array of length I*D in the values' precision (AttentionOutput): a Float32Array for Float32Array
   * values, else a Float64Array (values given in double are centred in double first, so an offset such as 1.7e9 costs
   * nothing).
   * @throws {KernelAttentionError} on any invalid argument (before any allocation), or `'EmptyRow'` with `empty: 'error'`.
   */
  attention<V extends NumericArray>(
    queries: NumericArray,
    keys: NumericArray,
    values: V,
    options: AttentionOptions,
  ): AttentionOutput<V>;
  /**
   * attention() with what computed it and, for the approximations, the error estimate.
   * @example
   * const { output, errorEstimate, features } = ka.attentionWithInfo(q, k, v, { dim, method: 'random-features', tolerance: 1e-2 });
   * @throws {KernelAttentionError} as attention(); an option of the other method (`features` with `'nystrom'`), a mask
   * other than `causal`, groups, or a kernel the method cannot approximate is `'BadArgument'` naming that option
   * (`options.method` for the kernel).
   */
  attentionWithInfo<V extends NumericArray>(
    queries: NumericArray,
    keys: NumericArray,
    values: V,
    options: AttentionOptions,
  ): AttentionWithInfo<AttentionOutput<V>>;
  /**
   * The backward pass of the exact engine (FlashAttention-style: the weights are recomputed from each row's saved
   * log-sum-exp, never forming the I×J matrix): given `dOut` = dL/dOut (I·D entries, the output's shape), the
   * gradients of L with respect to the queries, keys, values and the kernel's parameter, with attention()'s options
   * (every kernel but `'uniform'`, masks, groups, heads, `empty`; `method` is not accepted). Rows with no admissible key
   * contribute nothing under `'nan'` and `'zero'`; under `'nearest'` only the nearest keys' values receive dOut / n.
   * The laplacian's gradient at q_d = k_d is taken as 0; compact kernels' at the edge of the support as its inside.
   * Sums run in double: the gradients agree with a float64 backward to about 1e-7 of their scale. The forward runs
   * on the API's threads, the backward on one.
   * @example
   * // One gradient step on the log-bandwidth of a leave-one-out Nadaraya–Watson fit.
   * const options = { dim: 1, kernel: 'gaussian', bandwidth: h, mask: 'loo' };
   * const fit = ka.attention(x, x, y, options);
   * const { dLogBandwidth } = ka.attentionGradients(x, x, y, fit.map((f, i) => 2 * (f - y[i]) / n), options);
   * h *= Math.exp(-0.1 * dLogBandwidth[0]);
   * @throws {KernelAttentionError} as attention(); `'BadArgument'` naming `dOut` when it is missing or not numeric,
   * `'BadShape'` when its length is not I·D, `'NonFinite'` for NaN or ±Infinity in it; `'BadArgument'` naming
   * `options.kernel` for `'uniform'` (piecewise constant: no gradient).
   */
  attentionGradients(
    queries: NumericArray,
    keys: NumericArray,
    values: NumericArray,
    dOut: NumericArray,
    options: WeightsOptions,
  ): AttentionGradients;
  /**
   * A trainable attention pooling: the kernel's bandwidth (or softmax's scale), optionally query and key projections,
   * learned by Adam from the gradients of attentionGradients(); see {@link AttentionPooling}.
   * @throws {KernelAttentionError} `'BadArgument'` for an unknown option or a bad value (naming it), `'BadShape'` for a
   * bandwidth array or `betas` of the wrong length, `'BadBandwidth'` for a bandwidth that is not positive and finite.
   */
  attentionPooling(options: AttentionPoolingOptions): AttentionPooling;
  /**
   * attention() in steps of query rows, reporting `{ done, total }` rows and stoppable by `options.signal`; resolves
   * to attention()'s bytes (an approximation runs in one step).
   * @example
   * const controller = new AbortController();
   * const out = await ka.attentionAsync(q, k, v, { dim, signal: controller.signal, onProgress: ({ done, total }) => bar(done / total) });
   * @throws {KernelAttentionError} (as a rejection) as attention(); `'BadArgument'` for a `signal` that is not an
   * AbortSignal or an `onProgress` that is not a function. Rejects with `signal.reason` when aborted.
   */
  attentionAsync<V extends NumericArray>(
    queries: NumericArray,
    keys: NumericArray,
    values: V,
    options: AttentionOptions & AsyncOptions,
  ): Promise<AttentionOutput<V>>;
  /**
   * The normalised weight matrix, each row summing to 1 (empty rows follow `empty`).
   * @returns a new Float32Array of length I*J, or H*I*J laid out [head][query][key] with `heads: H`.
   */
  weights(queries: NumericArray, keys: NumericArray, options: WeightsOptions): Float32Array<ArrayBuffer>;
  /**
   * The partial state of every query over this shard of keys. Masks index keys within the shard (0 … J−1).
   * Merging the states of disjoint shards and finalising gives attention() over all the keys, up to float32 rounding.
   * Every shard must work in the same frame: a distance kernel's queries and keys are shifted by the queries' midrange
   * (which the shards share, so they agree), softmax keys and the values are not shifted, so `max` and `acc` are in
   * the caller's units (docs/design.md, "Partial states").
   * @example
   * const a = ka.attentionState(q, keys1, values1, { dim });
   * const b = ka.attentionState(q, keys2, values2, { dim }); // e.g. in another worker
   * const out = ka.finalizeState(ka.mergeStates(a, b));
   */
  attentionState(
    queries: NumericArray,
    keys: NumericArray,
    values: NumericArray,
    options: StateOptions,
  ): AttentionState;
  /** Merges states of the same queries over disjoint key shards, in any order; returns a new state. */
  mergeStates(...states: AttentionState[]): AttentionState;
  /**
   * out = acc / sum per query (Float32Array of length I·width). Queries no shard reached follow `empty`
   * (`'nearest'` is not available here: the keys are not at hand).
   */
  finalizeState(
    state: AttentionState,
    options?: { empty?: Exclude<EmptyPolicy, 'nearest'> },
  ): Float32Array<ArrayBuffer>;
  /**
   * Fits a Nadaraya–Watson or local-linear regression of y (n × D) on x (n × dim), choosing the bandwidth by
   * leave-one-out cross-validation unless told otherwise.
   * @example
   * const model = ka.kernelRegression(x, y, { dim: 1 });
   * const { mean, lower, upper } = model.predictInterval(grid);
   * model.dispose();
   * @throws {KernelAttentionError} on invalid arguments (n must be at least 2).
   */
  kernelRegression(
    x: SampleArray,
    y: NumericArray,
    options: KernelRegressionOptions & { bandwidth?: BandwidthRule },
  ): KernelRegressionModel<Float64Array<ArrayBuffer>, number>;
  /** A fixed bandwidth: `selection.score` is null. */
  kernelRegression(
    x: SampleArray,
    y: NumericArray,
    options: KernelRegressionOptions & { bandwidth: number | NumericArray },
  ): KernelRegressionModel<Float64Array<ArrayBuffer>, null>;
  /** A nearest-neighbour span: `bandwidth` is `{ span, scale }`, `selection.score` null. */
  kernelRegression(
    x: SampleArray,
    y: NumericArray,
    options: KernelRegressionOptions & { bandwidth: { span: number } },
  ): KernelRegressionModel<SpanBandwidth, null>;
  kernelRegression(x: SampleArray, y: NumericArray, options: KernelRegressionOptions): KernelRegressionModel;
  /**
   * kernelRegression() with the bandwidth search run one evaluation per step (as selectBandwidthAsync()) and the fit
   * summary as the last step; resolves to the model kernelRegression() returns (its type follows `bandwidth` as there).
   */
  kernelRegressionAsync(
    x: SampleArray,
    y: NumericArray,
    options: KernelRegressionOptions & AsyncOptions & { bandwidth?: BandwidthRule },
  ): Promise<KernelRegressionModel<Float64Array<ArrayBuffer>, number>>;
  kernelRegressionAsync(
    x: SampleArray,
    y: NumericArray,
    options: KernelRegressionOptions & AsyncOptions & { bandwidth: number | NumericArray },
  ): Promise<KernelRegressionModel<Float64Array<ArrayBuffer>, null>>;
  kernelRegressionAsync(
    x: SampleArray,
    y: NumericArray,
    options: KernelRegressionOptions & AsyncOptions & { bandwidth: { span: number } },
  ): Promise<KernelRegressionModel<SpanBandwidth, null>>;
  kernelRegressionAsync(
    x: SampleArray,
    y: NumericArray,
    options: KernelRegressionOptions & AsyncOptions,
  ): Promise<KernelRegressionModel>;
  /**
   * Cleveland's (1979) LOWESS, computed as R's `lowess()` computes it: at each x_i a weighted local-linear fit over
   * its ⌊frac·n⌋ nearest points (tricube weights on the distance over the farthest one's), then `iterations` refits
   * with bisquare robustness weights from 6·median|residual|; with `delta`, fits closer than delta to the previous
   * one are interpolated, and tied x share one fit. Formulas, sources and where statsmodels differs from R:
   * docs/regression.md, "LOWESS". The fit runs in float64 (as R's does), so the results are Float64Arrays. x and y
   * (n ≥ 1 each) take the API's usual arrays of finite numbers within float32 range, used at their full float64
   * precision, and are not modified.
   * @example
   * const { fitted, weights } = ka.lowess(x, y, { frac: 0.3 });
   * @throws {KernelAttentionError} before any allocation: `'BadArgument'` naming `x`, `y` or the option for a value
   * of the wrong kind or out of range (frac in (0, 1], iterations an integer ≥ 0, delta finite ≥ 0), `'NonFinite'`
   * for NaN or ±Infinity in x or y, `'BadShape'` for an empty x or a y of another length.
   */
  lowess(x: NumericArray, y: NumericArray, options?: LowessOptions): LowessResult;
  /**
   * R's `loess()`, computed as R 4.2 computes it (docs/regression.md, "loess (R's loess)"): local fits of degree 0–2
   * over the nearest ⌊n·span⌋ points with tricube weights, on R's k-d tree surface blended between exact vertex fits
   * (or exact everywhere with `surface: 'direct'`), R's robustness iterations, statistics and standard errors, in
   * float64. x (n × dim, row-major), y and weights are not modified.
   * @example
   * const fit = ka.loess(speed, dist, { span: 0.5 });
   * const { mean, lower, upper } = fit.predictInterval([10, 15, 20]);
   * fit.dispose();
   * @throws {KernelAttentionError} `'BadArgument'` naming the option out of range (a span giving fewer points per
   * fit than the degree needs, or one whose neighbourhoods have zero width, names `options.span`), `'NonFinite'`
   * for NaN or ±Infinity in x or y, `'BadShape'` for sizes that do not fit together.
   */
  loess(x: NumericArray, y: NumericArray, options?: LoessOptions): LoessModel;
  /**
   * Chooses a bandwidth for the sample x (n × dim) with values y (n × D).
   * @throws {KernelAttentionError} on invalid arguments (n must be at least 2).
   */
  selectBandwidth(x: SampleArray, y: NumericArray, options: SelectBandwidthOptions): BandwidthSelection;
  /**
   * Which method attention() would run with these arguments, and why (the core's method table decides method
   * `'auto'`, docs/approximations.md "How 'auto' chooses"), without running it. Throws what attention() throws for bad
   * arguments, and for a `method` that cannot serve the call (naming `options.method`, or the mask, groups or `dim`
   * that forbids it).
   */
  plan(task: 'attention', queries: NumericArray, keys: NumericArray, options: AttentionOptions): Plan<AttentionMethod>;
  /**
   * What kernelRegression() (without `rule`) or selectBandwidth() with `rule` (cvScore: rule `'cv'`) runs on for a
   * sample of `n` points, and why, as the core's method table decides it. A grid model still fits exactly at a
   * bandwidth no grid serves; its own `reason` says so.
   * @throws {KernelAttentionError} `'BadArgument'` for a bad option, and for a `method` that cannot serve the call,
   * naming `options.method` (or `options.weights`) with the field that forbids it in the message, as the call itself
   * would throw.
   */
  plan(task: 'regression', options: RegressionPlanOptions): Plan<'exact' | 'grid' | 'sparse'>;
  /**
   * selectBandwidth() one criterion evaluation per step (the core's search is paused by its progress hook and
   * resumed, docs/design.md); `total` is an estimate until the search ends. Resolves to selectBandwidth()'s result,
   * byte for byte (the curve holds the first 256 evaluations).
   */
  selectBandwidthAsync(
    x: SampleArray,
    y: NumericArray,
    options: SelectBandwidthOptions & AsyncOptions,
  ): Promise<BandwidthSelection>;
  /**
   * The leave-one-out least-squares CV score at a bandwidth: Σ_i ω_i Σ_c (y_ic − f_{−i}(x_i)_c)² / Σ_i ω_i, where f_{−i}
   * is the estimate from every other point (ω = 1 without weights; with `exclude: r > 0`, from every point farther
   * than r from x_i along x's first column, computed exactly); Infinity when some point has no admissible point
   * within reach.
   */
  cvScore(x: SampleArray, y: NumericArray, options: CvScoreOptions): number;
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
   * `'auto'` (the default, unless setThreads() or, in Node, the environment variable KERNEL_ATTENTION_THREADS says
   * otherwise): the pthreads build with one thread per core (at most 16) where it can run and may block — Node's main
   * thread, or a Web Worker in a cross-origin-isolated page — and the single-thread build everywhere else (a page's main
   * thread, pages without COOP/COEP, a Node worker_threads worker, a pthreads load that fails, such as a bundle
   * without the pthreads worker file).
   * `1`: the single-thread build. An integer from 2 to 64: the pthreads build with that many threads; rejects with
   * `'Unsupported'` (argument `'options.threads'`) where SharedArrayBuffer or cross-origin isolation is missing. On a
   * page's main thread it works but joining threads busy-waits there; prefer a Worker.
   * Results are bit-identical for every thread count. Idle pthreads workers do not keep Node running.
   */
  threads?: 'auto' | number;
  /**
   * Where the package's files are: called with `'kernel_attention.wasm'`, `'kernel_attention_threads.wasm'` or
   * `'kernel_attention_threads.worker.js'` (and Emscripten's default prefix), returns their URL (or, in Node, path).
   * Default: next to the modules, as a bundler placed them. Used by the first init() that loads each build.
   */
  locateFile?: (name: string, prefix: string) => string | URL;
  /** The folder (URL or path prefix) holding those files: `locateFile: (name) => wasmPaths + name`. Not with locateFile. */
  wasmPaths?: string | URL;
}

/**
 * Sets the thread count ('auto' or 1–64) that later init() calls use when they do not pass `threads`; returns the
 * previous one. It applies to this JavaScript realm; in Node, KERNEL_ATTENTION_THREADS sets it for every worker.
 * @throws {KernelAttentionError} `'BadArgument'` naming `options.threads` for a bad count.
 */
export function setThreads(threads: 'auto' | number): 'auto' | number;

/**
 * Loads and compiles a WebAssembly build once per build, and returns the API for the thread count; later calls with
 * the same (resolved) thread count return the same frozen object.
 * @throws {KernelAttentionError} `'BadArgument'` for an unknown option, a bad `threads`, `locateFile` or `wasmPaths`;
 * `'Unsupported'` when WebAssembly SIMD, or the threads asked for, are not available, or a build's files do not load.
 */
export function init(options?: InitOptions): Promise<KernelAttention>;

export type ErrorCode =
  'BadArgument' | 'BadShape' | 'NonFinite' | 'BadBandwidth' | 'EmptyRow' | 'OutOfMemory' | 'Unsupported' | 'Disposed';

/** Thrown for any invalid input or failed computation; nothing is left allocated and the module keeps working. */
export class KernelAttentionError extends Error {
  /** Machine-readable reason. */
  readonly code: ErrorCode;
  /** The parameter at fault, e.g. `'keys'` or `'options.bandwidth'`, when there is one. */
  readonly argument?: string;
}
