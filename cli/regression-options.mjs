// The regression flags shared by fit, predict and select-bandwidth (--kernel, --estimator, --bandwidth or --span,
// --exclude, --robust), read into kernelRegression's options; and a model's bandwidth as the commands print it.
import { parseNumber } from '../web/src/table-values.js';
import { choice, number, UsageError } from './args.mjs';
import { round } from './output.mjs';
import { typesFields } from './types.mjs';

export const KERNELS = ['gaussian', 'laplacian', 'cauchy', 'epanechnikov', 'tricube', 'uniform'];
export const ESTIMATORS = ['local-linear', 'nadaraya-watson', 'local-quadratic'];
// The bandwidth rules --bandwidth (fit, predict) and --rule (select-bandwidth) take.
export const RULES = ['cv', 'aicc', 'scott', 'silverman', 'plugin'];

/** --bandwidth: a rule, one positive number, or one per x column (`dim` of them; `types`: the sample's). */
export function bandwidthOption(values, dim, types = null) {
  const text = values.bandwidth ?? 'cv';
  if (RULES.includes(text)) return text;
  const list = text.split(',').map((h) => parseNumber(h));
  // A discrete column's entry is λ, which may be 0 (the library checks its range).
  const discrete = types ?? [];
  const bad = (h, d) => !(discrete[d] && discrete[d] !== 'continuous' ? h >= 0 : h > 0) || !Number.isFinite(h);
  if (list.some(bad) || (list.length !== 1 && list.length !== dim)) {
    const expected =
      dim === 1
        ? `${RULES.join(', ')} or a positive number`
        : `${RULES.join(', ')}, a positive number or ${dim} of them (one per --x column)`;
    throw new UsageError(`--bandwidth must be ${expected}; got ${JSON.stringify(text)}`);
  }
  return list.length === 1 ? list[0] : list;
}

/** --span as kernelRegression's `{ span }` (null without it); it replaces --bandwidth. */
function spanOption(values) {
  if (values.span === undefined) return null;
  if (values.bandwidth !== undefined) throw new UsageError('give --bandwidth or --span, not both');
  const span = parseNumber(values.span);
  if (!(span > 0 && span < Infinity))
    throw new UsageError(`--span must be a finite number > 0; got ${JSON.stringify(values.span)}`);
  return { span };
}

/** --exclude R (blocked CV's radius, >= 0), as the library's `exclude`; nothing when absent. */
function excludeOption(values) {
  const exclude = number(values, 'exclude');
  if (exclude === undefined) return {};
  if (!(exclude >= 0)) throw new UsageError(`--exclude must be a number >= 0; got ${JSON.stringify(values.exclude)}`);
  return { exclude };
}

/** kernelRegression's options from the flags, for the sample `s` (loadSample's: its dim and types). */
export function regressionOptions(values, s) {
  const { dim, types } = s;
  const iterations = number(values, 'robust', { positive: true, integer: true });
  return {
    dim,
    kernel: choice(values, 'kernel', KERNELS, 'gaussian'),
    estimator: choice(values, 'estimator', ESTIMATORS, 'local-linear'),
    bandwidth: spanOption(values) ?? bandwidthOption(values, dim, types),
    ...(iterations !== undefined && { robust: { iterations } }),
    ...excludeOption(values),
    ...typesFields(values, types),
  };
}

/**
 * --robust takes an optional count, which parseArgs cannot express: `--robust N` (N digits) becomes `--robust=N`,
 * a bare `--robust` becomes `--robust=3`.
 */
export function robustArgv(argv) {
  const out = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] !== '--robust') out.push(argv[i]);
    else if (/^\d+$/.test(argv[i + 1] ?? '')) out.push(`--robust=${argv[++i]}`);
    else out.push('--robust=3');
  }
  return out;
}

/**
 * A model's bandwidth for the printed summary: { bandwidth } per x column, or { span, neighbours, scale } for a span
 * model (neighbours: the library's count of points per fit).
 */
export function bandwidthSummary(model) {
  const h = model.bandwidth;
  return h instanceof Float64Array
    ? { bandwidth: Array.from(h, round) }
    : { span: h.span, neighbours: h.neighbours, scale: Array.from(h.scale, round) };
}
