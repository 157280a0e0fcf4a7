// `kernel-attention attention`: exact attention over raw float32 or .npy files.
import { choice, number, parseCommand, required, UsageError, writeOutput } from '../args.mjs';
import { apiCall } from '../api-errors.mjs';
import { formatCsv, InputError } from '../csv.mjs';
import { readFloat32 } from '../float32.mjs';
import { emit } from '../output.mjs';
import { withProgress } from '../progress.mjs';
import { KERNELS } from '../regression-options.mjs';

export const summary = 'attention over raw float32 or .npy files';

const help = `Usage: kernel-attention attention --queries Q --keys K --values V [--dim M] [options]

Exact scaled dot-product (or kernel) attention over raw little-endian float32 files (row-major; Q has I×M floats, K has
J×M, V has J×D) or .npy files of float32. Prints the I×D result.
  --queries Q, --keys K, --values V   the input files (one of them may be - for stdin); a 2-D .npy file's shape
                      gives its rows and width, a 1-D one is a flat list like a raw file
  --dim M             the width of a query/key row (needed unless Q or K is a 2-D .npy file; must match it)
  --heads H           split M and D into H heads (default 1)
  --kernel K          softmax (default), ${KERNELS.join(', ')}
  --scale S           softmax only (default 1/√(M/H))
  --bandwidth H       distance kernels only (default 1)
  --causal            query i sees keys 0 … i only
  --format F          csv (one row per query), json (array of rows) or f32 (raw float32; needs --output)
  --output FILE       write there instead of to stdout (- is stdout, also for f32)
  -q, --quiet         no progress bar (one is drawn on stderr when it is a terminal)
  -h, --help          this help

Example: kernel-attention attention --queries q.f32 --keys k.f32 --values v.f32 --dim 64 --heads 4 --format f32 --output out.f32`;

const OPTIONS = {
  queries: { type: 'string' },
  keys: { type: 'string' },
  values: { type: 'string' },
  dim: { type: 'string' },
  heads: { type: 'string' },
  kernel: { type: 'string' },
  scale: { type: 'string' },
  bandwidth: { type: 'string' },
  causal: { type: 'boolean' },
  format: { type: 'string' },
  output: { type: 'string' },
  quiet: { type: 'boolean', short: 'q' },
};

/** --format, or what --output's extension implies (.json, .f32), else csv; f32 needs --output. */
function readFormat(values) {
  const output = values.output?.toLowerCase();
  const implied = output?.endsWith('.json') ? 'json' : output?.endsWith('.f32') ? 'f32' : 'csv';
  const format = choice(values, 'format', ['csv', 'json', 'f32'], implied);
  if (format === 'f32' && !values.output)
    throw new UsageError('--format f32 needs --output FILE (or --output - for stdout)');
  return format;
}

/** --dim, or the width of a 2-D .npy query or key file (which --dim must then match). */
function readDim(dim, q, k) {
  const shown = (a) => `(${a.shape.join(', ')})`;
  for (const [name, a] of [
    ['queries', q],
    ['keys', k],
  ]) {
    if (a.shape?.length !== 2) continue;
    if (dim === undefined) dim = a.shape[1];
    else if (dim !== a.shape[1]) {
      throw new UsageError(
        `--dim ${dim} does not match --${name} ${a.file}, of shape ${shown(a)}: rows of ${a.shape[1]}`,
      );
    }
  }
  if (dim === undefined) throw new UsageError('--dim is required (unless --queries or --keys is a 2-D .npy file)');
  return dim;
}

export async function run(argv, api) {
  const { values } = parseCommand(argv, OPTIONS);
  if (values.help) return help;
  const files = ['queries', 'keys', 'values'].map((name) => required(values, name));
  if (files.filter((f) => f === '-').length > 1)
    throw new UsageError('only one of --queries, --keys and --values can be - (stdin)');
  const heads = number(values, 'heads', { positive: true, integer: true }) ?? 1;
  const format = readFormat(values);
  const kernel = choice(values, 'kernel', ['softmax', ...KERNELS], 'softmax');
  const scale = number(values, 'scale');
  const bandwidth = number(values, 'bandwidth', { positive: true });
  const given = number(values, 'dim', { positive: true, integer: true });
  const [q, k, v] = await Promise.all(files.map((f) => readFloat32(f)));
  const dim = readDim(given, q, k);
  if (v.shape?.length === 2 && k.data.length % dim === 0 && v.shape[0] !== k.data.length / dim) {
    throw new InputError(
      v.file,
      null,
      null,
      `--values has shape (${v.shape.join(', ')}): ${v.shape[0]} rows, for ${k.data.length / dim} keys`,
    );
  }
  // Exact, as the help says: the library's default 'auto' may skip keys within its tolerance on large low-dimensional calls.
  const options = { dim, heads, kernel, causal: Boolean(values.causal), method: 'exact' };
  if (scale !== undefined) options.scale = scale;
  if (bandwidth !== undefined) options.bandwidth = bandwidth;
  const ka = await api();
  const out = await withProgress('attention', values, (onProgress) =>
    apiCall(() => ka.attentionAsync(q.data, k.data, v.data, { ...options, onProgress })),
  );
  if (format === 'f32') return writeOutput(values.output, new Uint8Array(out.buffer, out.byteOffset, out.byteLength));
  const J = k.data.length / dim;
  const D = v.data.length / J;
  const rows = Array.from({ length: out.length / D }, (_, i) => Array.from(out.subarray(i * D, (i + 1) * D)));
  if (format === 'json') return emit(values, JSON.stringify(rows) + '\n');
  return emit(
    values,
    formatCsv(
      Array.from({ length: D }, (_, d) => `out${d + 1}`),
      rows,
    ),
  );
}
