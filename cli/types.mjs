// Mixed data on the command line: --types (c, u or o per --x column: continuous, unordered, ordered) and
// --ordered-kernel, as the library's `types` and `orderedKernel` (docs/regression.md, "Mixed data"). A discrete column
// holds numbers in the file (4, 6, 8 cylinders; ratings 1-5; 0/1 flags): its distinct values become the codes 0 … c − 1
// in increasing order, so an ordered column's levels keep their order; output prints the values back.
import { UsageError } from './args.mjs';

const TYPE_NAMES = { c: 'continuous', u: 'unordered', o: 'ordered' };
const ORDERED_KERNELS = ['wang-van-ryzin', 'li-racine'];

export const TYPES_HELP = `  --types T           mixed data: one of c (continuous), u (unordered), o (ordered) per --x column, comma-separated
                      (default: all c); a discrete column's distinct numbers become levels in increasing order,
                      and its bandwidth entry is λ (0 … (c−1)/c unordered, 0 … 1 ordered)
  --ordered-kernel K  wang-van-ryzin (default, statsmodels') or li-racine (R np's λ^|a−b|)`;
export const TYPES_OPTIONS = { types: { type: 'string' }, 'ordered-kernel': { type: 'string' } };

/** --types as the library's `types` (null when absent or every column is continuous). */
export function typesOption(values, dim) {
  if (values.types === undefined) {
    if (values['ordered-kernel'] !== undefined) throw new UsageError('--ordered-kernel needs --types with an o column');
    return null;
  }
  const list = values.types.split(',').map((t) => t.trim());
  if (list.length !== dim || list.some((t) => !TYPE_NAMES[t])) {
    throw new UsageError(
      `--types must be ${dim} of c, u, o (one per --x column, comma-separated); got ${JSON.stringify(values.types)}`,
    );
  }
  const kernel = values['ordered-kernel'];
  if (kernel !== undefined && !ORDERED_KERNELS.includes(kernel))
    throw new UsageError(
      `--ordered-kernel must be one of ${ORDERED_KERNELS.join(', ')}; got ${JSON.stringify(kernel)}`,
    );
  return list.every((t) => t === 'c') ? null : list.map((t) => TYPE_NAMES[t]);
}

/** The library options of --types (empty without discrete columns). */
export function typesFields(values, dim) {
  const types = typesOption(values, dim);
  if (!types) return {};
  const kernel = values['ordered-kernel'];
  return { types, ...(kernel !== undefined && { orderedKernel: kernel }) };
}

/**
 * The sample `s` (loadSample's) with its discrete columns coded in place: s.x's entries become codes, s.levels[d]
 * the sorted distinct values of column d (null for a continuous column), and s.formats print a code as its value.
 */
export function codeSample(s, values) {
  const types = typesOption(values, s.dim);
  s.levels = Array.from({ length: s.dim }, () => null);
  if (!types) return s;
  types.forEach((type, d) => {
    if (type === 'continuous') return;
    const seen = new Set();
    for (let i = d; i < s.x.length; i += s.dim) seen.add(s.x[i] + s.centre[d]);
    const levels = [...seen].sort((a, b) => a - b);
    const code = new Map(levels.map((v, k) => [v, k]));
    for (let i = d; i < s.x.length; i += s.dim) s.x[i] = code.get(s.x[i] + s.centre[d]);
    s.levels[d] = levels;
    const print = s.formats[d];
    s.formats[d] = (v) => print(levels[v] - s.centre[d]);
  });
  return s;
}

/** Queries xq (rows of s.dim values, as read) with the discrete columns coded as the sample's; an unknown level is refused. */
export function codeQueries(s, xq) {
  s.levels.forEach((levels, d) => {
    if (!levels) return;
    const code = new Map(levels.map((v, k) => [v, k]));
    for (let i = d; i < xq.length; i += s.dim) {
      const k = code.get(xq[i] + s.centre[d]);
      if (k === undefined) {
        throw new UsageError(
          `--at: column ${JSON.stringify(s.xNames[d])} has the level ${xq[i] + s.centre[d]}, which the sample does not ` +
            `(its levels: ${levels.slice(0, 8).join(', ')}${levels.length > 8 ? ', …' : ''})`,
        );
      }
      xq[i] = k;
    }
  });
  return xq;
}
