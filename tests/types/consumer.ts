// A consumer of the published types (`kernel-attention` resolves to this package through its "exports").
// `tsc -p tests/types` must pass, and each @ts-expect-error line must really be an error.
import { init, KernelAttentionError, setThreads } from 'kernel-attention';
import type {
  AttentionPooling,
  AttentionState,
  BandwidthSelection,
  Kernel,
  KernelRegressionModel,
  KernelRegressionOptions,
  ColumnType,
  PredictionInterval,
  RegressionGradient,
  NumericArray,
  WarningCode,
} from 'kernel-attention';

async function main(): Promise<void> {
  const ka = await init();
  const threaded = await init({ threads: 2 });
  const build: 'single' | 'threads' = threaded.build;
  const threads: number = ka.threads;
  await init({ threads: 'auto' });
  await init({ locateFile: (name) => new URL(name, 'https://cdn.example/ka/'), threads: 1 });
  await init({ wasmPaths: '/assets/' });
  // @ts-expect-error: locateFile is a function
  await init({ locateFile: '/assets/' });
  const previous: 'auto' | number = setThreads(2);
  setThreads(previous);
  // @ts-expect-error: a thread count, not a string of one
  setThreads('2');
  const q = new Float32Array(8),
    k = new Float32Array(12),
    v = [1, 2, 3];
  // The output's type follows the values': numbers (or a Float64Array) give a Float64Array, a Float32Array its own.
  const out: Float64Array = ka.attention(q, k, v, { dim: 4, heads: 2, causal: true, empty: 'zero' });
  const out32: Float32Array = ka.attention(q, k, new Float32Array(3), { dim: 4 });
  // @ts-expect-error: Float32Array values give a Float32Array
  const notOut64: Float64Array = ka.attention(q, k, new Float32Array(3), { dim: 4 });
  const either: Float32Array | Float64Array = ka.attention(q, k, v as NumericArray, { dim: 4 });
  const info64: Float64Array = ka.attentionWithInfo(q, k, Float64Array.from(v), { dim: 4 }).output;
  const async32: Promise<Float32Array> = ka.attentionAsync(q, k, new Float32Array(3), { dim: 4 });
  void [out32, notOut64, either, info64, async32];
  const w: Float32Array = ka.weights(q, k, { dim: 4, kernel: 'gaussian', bandwidth: [1, 2, 3, 4] });
  const kernel: Kernel = 'epanechnikov';
  ka.attention(q, k, v, {
    dim: 4,
    kernel,
    bandwidth: 0.5,
    mask: 'loo',
    groups: { queries: [0, 1], keys: new Int32Array(3) },
  });
  const chosen = ka.attentionWithInfo(q, k, v, {
    dim: 2,
    kernel: 'gaussian',
    bandwidth: 0.1,
    method: 'auto',
    tolerance: 1e-4,
  });
  // @ts-expect-error: attentionWithInfo reports the method that ran, never 'auto'
  const notAuto: 'auto' = chosen.method;
  void notAuto;
  const kept: Float64Array | undefined = ka.attentionWithInfo(q, k, v, {
    dim: 4,
    method: 'top-k',
    topK: 8,
    causal: true,
  }).droppedMass;
  void kept;

  const a: AttentionState = ka.attentionState(q, k, v, { dim: 4 });
  const merged = ka.mergeStates(a, a);
  const fin: Float32Array = ka.finalizeState(merged, { empty: 'error' });

  const sel: BandwidthSelection = ka.selectBandwidth(k, v, { dim: 4, rule: 'cv', perDimension: true });
  const ruleUsed: 'cv' | 'aicc' | 'scott' | 'silverman' | 'plugin' | 'cv-gradient' = sel.rule;
  const computed: 'exact' | 'grid' = sel.method;
  void ruleUsed;
  void computed;
  const h: Float64Array = sel.bandwidth;
  const selectionCodes: WarningCode[] = sel.warnings.map((w) => w.code);
  const cv: number = ka.cvScore(k, v, { dim: 4, bandwidth: h, estimator: 'local-linear', weights: [1, 1, 2] });
  ka.selectBandwidth(k, v, { dim: 4, rule: 'aicc', estimator: 'local-linear', method: 'exact' });
  ka.cvScore(k, v, { dim: 4, bandwidth: 0.5, method: 'grid' });
  ka.cvScore(k, v, { dim: 4, bandwidth: 0.5, estimator: 'local-quadratic' });
  // @ts-expect-error: the degrees are 0, 1 and 2
  ka.cvScore(k, v, { dim: 4, bandwidth: 0.5, estimator: 'local-cubic' });
  // Deprecated spellings still compile (tsc reports a deprecation hint, not an error): a rule as `method`, and
  // `approximation`.
  ka.selectBandwidth(k, v, { dim: 4, method: 'aicc', approximation: 'exact' });
  ka.cvScore(k, v, { dim: 4, bandwidth: 0.5, approximation: 'exact' });
  // @ts-expect-error: `rule` takes rules, not computations
  ka.selectBandwidth(k, v, { dim: 4, rule: 'grid' });
  const learnedMetric = ka.selectBandwidth(k, v, { dim: 4, rule: 'cv-gradient', metric: 'full', maxIterations: 50 });
  const metricL: Float64Array | undefined = learnedMetric.transform;
  void metricL;
  // @ts-expect-error: the metric is 'diagonal' or 'full'
  ka.selectBandwidth(k, v, { dim: 4, rule: 'cv-gradient', metric: 'ard' });
  // @ts-expect-error: kernelRegression's bandwidth rules do not include the gradient search
  ka.kernelRegression(k, v, { dim: 4, bandwidth: 'cv-gradient' });
  const plugged = ka.selectBandwidth(v, v, { dim: 1, rule: 'plugin', kernel: 'epanechnikov' });
  const noScore: number | null = plugged.score;
  const dpillH: number | undefined = plugged.plugin?.gaussianBandwidth;
  void noScore;
  void dpillH;
  // @ts-expect-error: the plug-in rule computes no CV score, so a selection's score may be null
  const alwaysScored: number = plugged.score;
  void alwaysScored;
  ka.kernelRegression(v, v, { dim: 1, bandwidth: 'plugin' }).dispose();

  // Mixed data: labels in a discrete column, λ in the bandwidth array, the model's types.
  const mixed = ka.kernelRegression([1.5, 'a', 2.5, 'b'], [1, 2], {
    dim: 2,
    types: ['continuous', 'unordered'],
    bandwidth: [1, 0.2],
  });
  const mixedTypes: readonly ColumnType[] | null = mixed.types;
  void mixedTypes;
  mixed.predict([2, 'a']);
  ka.selectBandwidth(k, v, {
    dim: 4,
    types: ['continuous', 'ordered', 'ordered', 'unordered'],
    orderedKernel: 'li-racine',
  });
  // @ts-expect-error: the column types are a closed set
  ka.cvScore(k, v, { dim: 4, bandwidth: 1, types: ['nominal'] });

  const model: KernelRegressionModel = ka.kernelRegression(k, v, { dim: 4, bandwidth: 'cv', weights: [1, 2, 1] });
  const modelMessages: string[] = model.warnings.map((w) => w.message);
  // @ts-expect-error: the codes are a closed set
  const unknownCode: WarningCode = 'noisy';
  const binned = ka.kernelRegression(v, v, { dim: 1, method: 'grid', tolerance: 1e-4 });
  const ran: 'exact' | 'grid' | 'sparse' = binned.method;
  const err: number = binned.predictInterval(v).errorEstimate;
  ka.selectBandwidth(v, v, { dim: 1, method: 'auto' });
  const planned: 'exact' | 'grid' | 'sparse' = ka.plan('regression', { n: 100, dim: 1, method: 'sparse' }).method;
  ka.plan('regression', { n: 100, dim: 2, rule: 'cv', exclude: 0.1, weights: true, estimator: 'nadaraya-watson' });
  ka.plan('regression', { n: 100, dim: 1, span: true });
  // @ts-expect-error: a rule is a selectBandwidth rule, not a fixed bandwidth
  ka.plan('regression', { n: 100, dim: 1, rule: 'fixed' });
  void planned;
  const fixedOrRule: 'cv' | 'aicc' | 'scott' | 'silverman' | 'plugin' | 'fixed' | 'span' = model.selection.rule;
  void fixedOrRule;
  const band: PredictionInterval = model.predictInterval(q, { level: 0.9 });
  const edf: number = model.effectiveDegreesOfFreedom;
  const wider: KernelRegressionModel = model.withBandwidth([0.5, 0.5, 0.5, 0.5]);
  wider.dispose();
  // @ts-expect-error: a span is not a fixed bandwidth
  model.withBandwidth({ span: 0.5 });
  const fit: Float64Array = model.predict(q);
  // @ts-expect-error: regression results are float64 (y's units, shifted back in double)
  const fit32: Float32Array = model.predict(q);
  const infoWarnings: WarningCode[] = ka.attentionWithInfo(q, k, v, { dim: 4 }).warnings.map((w) => w.code);
  const slopes: RegressionGradient = model.gradient(q);
  const slopeErrors: Float64Array = slopes.stderr;
  const spanModel = ka.kernelRegression(v, v, { dim: 1, kernel: 'tricube', bandwidth: { span: 0.3 } });
  const spanOf: number = spanModel.bandwidth.span;
  const neighboursOf: number = spanModel.bandwidth.neighbours;
  // The model's type follows `bandwidth` (strict mode, as in the README): a rule (the default 'cv') has a Float64Array
  // bandwidth and a numeric score; a fixed bandwidth a null score; a model of options known at run time, the union.
  const byRule = ka.kernelRegression(v, v, { dim: 1 });
  const chosenH: number = byRule.bandwidth[0];
  const chosenScore: number = byRule.selection.score;
  const fixed = ka.kernelRegression(v, v, { dim: 1, bandwidth: [0.5] });
  const fixedScore: null = fixed.selection.score;
  const fixedH: number = fixed.bandwidth[0];
  const later = await ka.kernelRegressionAsync(v, v, { dim: 1, bandwidth: 'aicc' });
  const laterScore: number = later.selection.score;
  const unknownOptions: KernelRegressionOptions = { dim: 1 };
  const unknownModel: KernelRegressionModel = ka.kernelRegression(v, v, unknownOptions);
  // @ts-expect-error: a model of options known only at run time may have a span's bandwidth
  unknownModel.bandwidth[0];
  // @ts-expect-error: ... and no score
  unknownModel.selection.score.toFixed();
  // @ts-expect-error: a span model has no per-dimension bandwidth array
  spanModel.bandwidth[0];
  // @ts-expect-error: a fixed bandwidth has no score
  fixed.selection.score.toFixed();
  const narrowed: KernelRegressionModel = byRule;
  void [chosenH, chosenScore, fixedScore, fixedH, laterScore, narrowed];
  const perQuery: Float64Array | undefined = spanModel.predictInterval(q).bandwidths;
  // Results own a plain ArrayBuffer (TypeScript ≥ 5.7): they fit where a SharedArrayBuffer-backed array would not.
  const blob = new Blob([model.predict(q), ka.attention(q, k, v, { dim: 4 })]);
  void blob;
  model.dispose();
  {
    using scoped = ka.kernelRegression(v, v, { dim: 1, bandwidth: 0.5 });
    void scoped.predict([1]);
    using scopedPooling = ka.attentionPooling({ dim: 1 });
    void scopedPooling;
  }

  const pooling: AttentionPooling = ka.attentionPooling({
    dim: 4,
    bandwidth: [1, 2],
    projections: { rank: 2, seed: 3 },
    learningRate: 0.1,
    betas: [0.8, 0.99],
  });
  const pooled: Float32Array = pooling.forward(q, k, v, { mask: 'loo', empty: 'zero' });
  const { dq, dk, dv } = pooling.backward(pooled);
  pooling.step();
  pooling.zeroGrad();
  const learned: Float64Array | undefined = pooling.parameters.bandwidth;
  const scaled: number | undefined = ka.attentionPooling({ dim: 4, kernel: 'softmax', scale: 0.5 }).gradients.scale;
  const metric: Float64Array | undefined = ka.attentionPooling({ dim: 4, projections: { rank: 2, shared: true } })
    .parameters.W;
  pooling.dispose();

  // @ts-expect-error: dim is required
  ka.attention(q, k, v, {});
  // @ts-expect-error: unknown kernel
  ka.attention(q, k, v, { dim: 4, kernel: 'gausian' });
  // @ts-expect-error: unknown empty policy
  ka.attention(q, k, v, { dim: 4, empty: 'skip' });
  // @ts-expect-error: nested arrays are not accepted
  ka.attention([[1, 2]], k, v, { dim: 2 });
  // @ts-expect-error: weights takes no values
  ka.weights(q, k, v, { dim: 4 });
  // @ts-expect-error: 'nearest' needs the keys; finalizeState does not offer it
  ka.finalizeState(merged, { empty: 'nearest' });
  // @ts-expect-error: bandwidth selection is for distance kernels
  ka.selectBandwidth(k, v, { dim: 4, kernel: 'softmax' });
  // @ts-expect-error: unknown estimator
  ka.kernelRegression(k, v, { dim: 4, estimator: 'loess' });
  // @ts-expect-error: no such approximation
  ka.kernelRegression(v, v, { dim: 1, method: 'fft' });
  // @ts-expect-error: the level is a number
  model.predictInterval(q, { level: '95%' });
  // @ts-expect-error: uniform cannot be trained
  ka.attentionPooling({ dim: 1, kernel: 'uniform' });
  // @ts-expect-error: betas are two numbers
  ka.attentionPooling({ dim: 1, betas: 0.9 });
  // @ts-expect-error: the masks belong to forward(), not to the pooling
  ka.attentionPooling({ dim: 1, mask: 'loo' });
  // @ts-expect-error: the parameters are read-only
  pooling.parameters = {};
  // @ts-expect-error: threads is 'auto' or a number
  await init({ threads: 'max' });
  const lo = ka.loess(k, v, { span: 0.5, degree: 1, family: 'symmetric', surface: 'direct', traceHat: 'approximate' });
  const loBand: Float64Array = lo.predictInterval([1, 2], { level: 0.9 }).stderr;
  const loEnp: number = lo.enp + lo.residualScale + lo.degreesOfFreedom;
  lo.dispose();
  // @ts-expect-error: R's degrees are 0, 1 and 2
  ka.loess(k, v, { degree: 3 });
  // @ts-expect-error: the family is 'gaussian' or 'symmetric'
  ka.loess(k, v, { family: 'robust' });
  (void loBand, loEnp);
  // @ts-expect-error: the thread count is read-only
  ka.threads = 4;
  // @ts-expect-error: results are read-only typed arrays, not numbers
  const wrong: number = ka.attention(q, k, v, { dim: 4 });

  try {
    ka.attention(q, k, v, { dim: 3 });
  } catch (e) {
    if (e instanceof KernelAttentionError) {
      const code: string = e.code;
      const argument: string | undefined = e.argument;
      (void code, argument);
    }
  }
  (void out, w, fin, cv, wrong, band, edf, fit, build, threads, ran, err, dq, dk, dv, learned, scaled, metric);
}
void main;
