// Mixed data on the command line: --types (c, u or o per --x column: continuous, unordered, ordered) and
// --ordered-kernel, as the library's `types` and `orderedKernel` (docs/regression.md, "Mixed data"). A discrete column
// holds numbers in the file (4, 6, 8 cylinders; ratings 1-5; 0/1 flags): its distinct values become the codes 0 … c − 1
// in increasing order, so an ordered column's levels keep their order; output prints the values back. A column of text
// (VC and OJ; north, south) is a category without --types saying so: unordered, its labels its levels.
import { UsageError } from './args.mjs';

const TYPE_NAMES = { c: 'continuous', u: 'unordered', o: 'ordered' };
const ORDERED_KERNELS = ['wang-van-ryzin', 'li-racine'];

export const TYPES_HELP = `  --types T           mixed data: one of c (continuous), u (unordered), o (ordered) per --x column, comma-separated
                      (default: c, and u for a column of text); a discrete column's distinct numbers become
                      levels in increasing order, a text column's labels levels as first seen (at most 50);
                      its bandwidth entry is λ (0 … (c−1)/c unordered, 0 … 1 ordered)
  --ordered-kernel K  wang-van-ryzin (default, statsmodels') or li-racine (R np's λ^|a−b|)`;
export const TYPES_OPTIONS = { types: { type: 'string' }, 'ordered-kernel': { type: 'string' } };

/** --types as a list of type names, one per --x column (null without --types). */
function typesGiven(values, dim) {
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
  return list.map((t) => TYPE_NAMES[t]);
}

/** The library options of a sample's types (codeSample's `s.types`; empty without discrete columns). */
export function typesFields(values, types) {
  if (!types) return {};
  const kernel = values['ordered-kernel'];
  return { types, ...(kernel !== undefined && { orderedKernel: kernel }) };
}

/**
 * The sample `s` (loadSample's) with its discrete columns coded in place: s.x's entries become codes 0 … c − 1,
 * s.levels[d] column d's levels (null for a continuous column), s.formats print a code as its level, and s.types is
 * the library's `types` (null when every column is continuous). A column of numbers is discrete where --types says:
 * its distinct values, in increasing order. A text column (`labels[d]`: its labels in the order first seen, s.x
 * holding their codes) is always a category, unordered: its labels that occur in the rows kept, in that order.
 */
export function codeSample(s, values, labels = []) {
  const given = typesGiven(values, s.dim);
  s.levels = Array.from({ length: s.dim }, () => null);
  const types = Array.from({ length: s.dim }, (_, d) => {
    if (!labels[d]) return given?.[d] ?? 'continuous';
    if (given && given[d] !== 'unordered') {
      throw new UsageError(
        `--types: column ${JSON.stringify(s.xNames[d])} holds text, which is read as a category: u (an ordered ` +
          `category needs its levels as numbers, whose order is theirs); got ${values.types.split(',')[d].trim()}`,
      );
    }
    return 'unordered';
  });
  types.forEach((type, d) => {
    if (type === 'continuous') return;
    const seen = new Set();
    for (let i = d; i < s.x.length; i += s.dim) seen.add(s.x[i] + s.centre[d]);
    const distinct = [...seen].sort((a, b) => a - b); // numbers, or a text column's codes in the order first seen
    const code = new Map(distinct.map((v, k) => [v, k]));
    for (let i = d; i < s.x.length; i += s.dim) s.x[i] = code.get(s.x[i] + s.centre[d]);
    if (labels[d]) {
      s.levels[d] = distinct.map((v) => labels[d][v]);
      s.formats[d] = (v) => s.levels[d][v];
    } else {
      s.levels[d] = distinct;
      const print = s.formats[d];
      s.formats[d] = (v) => print(distinct[v] - s.centre[d]);
    }
  });
  s.types = types.every((t) => t === 'continuous') ? null : types;
  return s;
}

/**
 * Queries xq (rows of s.dim values, as read) with the discrete columns coded as the sample's; `labels[d]` (the query
 * file's own labels of a text column, xq holding their codes) is matched to the sample's by text. An unknown level
 * is refused.
 */
export function codeQueries(s, xq, labels = []) {
  s.levels.forEach((levels, d) => {
    if (!levels) return;
    const text = typeof levels[0] === 'string';
    if (text !== Boolean(labels[d])) {
      throw new UsageError(
        `--at: column ${JSON.stringify(s.xNames[d])} holds ${text ? 'text' : 'numbers'} in the sample and ` +
          `${text ? 'numbers' : 'text'} here`,
      );
    }
    const code = new Map(levels.map((v, k) => [v, k]));
    for (let i = d; i < xq.length; i += s.dim) {
      const level = text ? labels[d][xq[i]] : xq[i] + s.centre[d];
      const k = code.get(level);
      if (k === undefined) {
        throw new UsageError(
          `--at: column ${JSON.stringify(s.xNames[d])} has the level ${text ? JSON.stringify(level) : level}, which ` +
            `the sample does not (its levels: ${levels.slice(0, 8).join(', ')}${levels.length > 8 ? ', …' : ''})`,
        );
      }
      xq[i] = k;
    }
  });
  return xq;
}
