// `kernel-attention fit`: a kernel regression fitted to columns of a table, printed as the model's summary.
import { parseCommand } from '../args.mjs';
import { apiCall } from '../api-errors.mjs';
import { OUTPUT_HELP, READING_NOTE, ROBUST_HELP, SAMPLE_HELP } from '../help.mjs';
import { emit, outputFormat, printWarnings, round } from '../output.mjs';
import { withProgress } from '../progress.mjs';
import { bandwidthSummary, regressionOptions, robustArgv } from '../regression-options.mjs';
import { dataFile, loadSample, SAMPLE_OPTIONS } from '../sample.mjs';
import { formatCsv } from '../csv.mjs';

export const summary = 'fit a kernel regression to columns of a CSV/TSV file and print the model';

const help = `Usage: kernel-attention fit FILE --x COLS --y COLS [options]

Fits a kernel regression to the columns of a CSV or TSV file and prints the model: the bandwidth and its rule (how it
was chosen: cv, aicc, scott, silverman, plugin, or fixed), the method the fit runs on (exact or grid), its CV score (none for plugin), the effective degrees of freedom and the residual variance of each y column; with --robust,
also the data rows the robust fit rejects (robustness weight 0; 1-based, in the order read).
${SAMPLE_HELP}
${ROBUST_HELP}
${OUTPUT_HELP}

${READING_NOTE}

Example: kernel-attention fit data.csv --x time --y level --bandwidth cv --format json`;

export async function run(argv, api) {
  const { values, positionals } = parseCommand(
    robustArgv(argv),
    { ...SAMPLE_OPTIONS, robust: { type: 'string' } },
    { positionals: 1 },
  );
  if (values.help) return help;
  const file = dataFile(positionals);
  const format = outputFormat(values);
  const s = await loadSample(file, values, { categories: true });
  const ka = await api();
  const model = await withProgress('fit', values, (onProgress) =>
    apiCall(() => ka.kernelRegressionAsync(s.x, s.y, { ...regressionOptions(values, s), onProgress }), s),
  );
  const result = {
    file,
    n: s.n,
    x: s.xNames,
    y: s.yNames,
    kernel: model.kernel,
    estimator: model.estimator,
    ...bandwidthSummary(model),
    rule: model.selection.rule,
    method: model.method,
    score: model.selection.score === null ? null : round(model.selection.score),
    effectiveDegreesOfFreedom: round(model.effectiveDegreesOfFreedom),
    residualVariance: Array.from(model.residualVariance, round),
    // With --robust: the points the final fit leaves out (robustness weight 0), 1-based data rows.
    ...(model.robustnessWeights && {
      rejected: Array.from(model.robustnessWeights).flatMap((w, j) => (w === 0 ? [j + 1] : [])),
    }),
  };
  printWarnings(model);
  model.dispose();
  if (format === 'json') return emit(values, JSON.stringify(result, null, 2) + '\n');
  const rows = [
    ['n', s.n],
    ['kernel', result.kernel],
    ['estimator', result.estimator],
    ['rule', result.rule],
    ['method', result.method],
    ...(result.span === undefined
      ? s.xNames.map((name, d) => [`bandwidth.${name}`, result.bandwidth[d]])
      : [
          ['span', result.span],
          ['neighbours', result.neighbours],
          ...s.xNames.map((name, d) => [`scale.${name}`, result.scale[d]]),
        ]),
    ['score', result.score ?? ''],
    ['effectiveDegreesOfFreedom', result.effectiveDegreesOfFreedom],
    ...s.yNames.map((name, c) => [`residualVariance.${name}`, result.residualVariance[c]]),
    ...(result.rejected ? [['rejected', result.rejected.join(' ')]] : []),
  ];
  return emit(values, formatCsv(['name', 'value'], rows));
}
