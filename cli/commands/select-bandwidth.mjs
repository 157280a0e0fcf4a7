// `kernel-attention select-bandwidth`: the bandwidth a rule chooses for columns of a table, with the search's curve.
import { choice, parseCommand, UsageError } from '../args.mjs';
import { apiCall } from '../api-errors.mjs';
import { formatCsv } from '../csv.mjs';
import { OUTPUT_HELP, READING_NOTE, SAMPLE_HELP } from '../help.mjs';
import { emit, outputFormat, printWarnings, round } from '../output.mjs';
import { withProgress } from '../progress.mjs';
import { regressionOptions, RULES } from '../regression-options.mjs';
import { dataFile, loadSample, SAMPLE_OPTIONS } from '../sample.mjs';

export const summary = 'choose the bandwidth and print the CV (or AICc) curve';

const help = `Usage: kernel-attention select-bandwidth FILE --x COLS --y COLS [options]

Chooses the bandwidth for FILE's columns and prints it with the search's curve: every bandwidth tried and its score
(CSV: one row per evaluation, the chosen one marked; JSON: { rule, method, bandwidth, score, curve }, method being how
the scores were computed: exact or grid). The rules of thumb score their bandwidth and have no curve; plugin (R's
KernSmooth::dpill, one --x column, local-linear) computes no score (empty in CSV, null in JSON) and adds its
estimates to the JSON as plugin.
${SAMPLE_HELP.replace(/\n  --bandwidth.*/, '').replace(/\n  --span.*\n.*/, '')}
  --rule R            ${RULES.join(', ')} (default cv); --method R is its deprecated spelling (before 0.2.0)
  --per-dimension     search one bandwidth per x column (default: one shared bandwidth, scaled per column)
${OUTPUT_HELP}

${READING_NOTE}

Example: kernel-attention select-bandwidth data.csv --x time --y level --rule aicc`;

/** --rule, or --method, its spelling before 0.2.0 (the API's `method` is now how the scores are computed). */
function readRule(values) {
  if (values.method !== undefined) {
    if (values.rule !== undefined)
      throw new UsageError('--method is the deprecated spelling of --rule; pass only --rule');
    process.stderr.write('deprecated: --method is now --rule (--method is removed in the next minor version)\n');
  }
  return choice(values, values.method !== undefined ? 'method' : 'rule', RULES, 'cv');
}

export async function run(argv, api) {
  const { values, positionals } = parseCommand(
    argv,
    {
      ...SAMPLE_OPTIONS,
      rule: { type: 'string' },
      method: { type: 'string' },
      'per-dimension': { type: 'boolean' },
    },
    { positionals: 1 },
  );
  if (values.help) return help;
  const file = dataFile(positionals);
  if (values.bandwidth !== undefined) throw new UsageError('select-bandwidth takes --rule, not --bandwidth');
  if (values.span !== undefined) throw new UsageError('select-bandwidth takes --rule, not --span');
  const format = outputFormat(values);
  const rule = readRule(values);
  const s = await loadSample(file, values, { categories: true });
  const { kernel, estimator, exclude, types, orderedKernel } = regressionOptions(values, s);
  const ka = await api();
  const r = await withProgress('select-bandwidth', values, (onProgress) =>
    apiCall(
      () =>
        ka.selectBandwidthAsync(s.x, s.y, {
          dim: s.dim,
          kernel,
          estimator,
          rule,
          perDimension: Boolean(values['per-dimension']),
          onProgress,
          ...(exclude === undefined ? {} : { exclude }),
          ...(types && { types, ...(orderedKernel && { orderedKernel }) }),
        }),
      s,
    ),
  );
  printWarnings(r);
  const bandwidth = Array.from(r.bandwidth, round);
  const curve = Array.from(r.curve.scores, (score, k) => ({
    bandwidth: Array.from(r.curve.bandwidths.subarray(k * s.dim, (k + 1) * s.dim), round),
    score: round(score),
  }));
  if (format === 'json') {
    return emit(
      values,
      JSON.stringify(
        {
          rule,
          method: r.method,
          x: s.xNames,
          bandwidth,
          score: r.score === null ? null : round(r.score),
          curve,
          ...(r.plugin && { plugin: Object.fromEntries(Object.entries(r.plugin).map(([k, v]) => [k, round(v)])) }),
        },
        null,
        2,
      ) + '\n',
    );
  }
  const same = (h) => h.every((v, d) => v === bandwidth[d]);
  const rows = curve.map((c) => [...c.bandwidth, c.score, same(c.bandwidth) ? 1 : 0]);
  if (!curve.some((c) => same(c.bandwidth))) rows.push([...bandwidth, r.score === null ? '' : round(r.score), 1]);
  return emit(values, formatCsv([...s.xNames.map((x) => `bandwidth.${x}`), 'score', 'chosen'], rows));
}
