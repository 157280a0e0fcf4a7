// Lists what the bytes of a .wasm are: each function body's size, grouped by where its code comes from.
//   node bench/wasm-sizes.mjs <module.wasm> [--top N] [--group]
// The module needs function names: link it with --profiling-funcs (scripts/build.sh sizes makes one in build/sizes).
// "gzip" per group is the gzip -9 size of that group's bodies concatenated: gzip of the whole module is not the sum
// of the parts, but the share of each part is what decides where to cut.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { execFileSync } from 'node:child_process';

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith('--'));
const topIndex = args.indexOf('--top');
const top = topIndex >= 0 ? Number(args[topIndex + 1]) : 40;
if (!file) {
  console.error('usage: node bench/wasm-sizes.mjs <module.wasm> [--top N]');
  process.exit(2);
}
const bytes = readFileSync(file);
let pos = 8;
const leb = () => {
  let result = 0;
  let shift = 0;
  for (;;) {
    const b = bytes[pos++];
    result += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (!(b & 0x80)) return result;
  }
};
const name = () => {
  const n = leb();
  const s = bytes.toString('utf8', pos, pos + n);
  pos += n;
  return s;
};
let importedFunctions = 0;
const bodies = [];
const names = new Map();
const sections = [];
while (pos < bytes.length) {
  const id = bytes[pos++];
  const size = leb();
  const start = pos;
  const end = pos + size;
  let label = String(id);
  if (id === 0) {
    label = `custom:${name()}`;
    if (label === 'custom:name') {
      while (pos < end) {
        const sub = bytes[pos++];
        const subSize = leb();
        const subEnd = pos + subSize;
        if (sub === 1) {
          const count = leb();
          for (let i = 0; i < count; i++) names.set(leb(), name());
        }
        pos = subEnd;
      }
    }
  } else if (id === 2) {
    const count = leb();
    for (let i = 0; i < count; i++) {
      name();
      name();
      const kind = bytes[pos++];
      if (kind === 0) {
        leb();
        importedFunctions++;
      } else if (kind === 1) {
        pos++;
        const flags = leb();
        leb();
        if (flags & 1) leb();
      } else if (kind === 2) {
        const flags = leb();
        leb();
        if (flags & 1) leb();
      } else if (kind === 3) {
        pos += 2;
      } else throw new Error(`import kind ${kind}`);
    }
  } else if (id === 10) {
    const count = leb();
    for (let i = 0; i < count; i++) {
      const n = leb();
      bodies.push({ index: importedFunctions + i, start: pos, size: n });
      pos += n;
    }
  }
  sections.push({ label, size: end - start });
  pos = end;
}
const mangled = bodies.map((b) => names.get(b.index) ?? `func${b.index}`);
const demangled = execFileSync('llvm-cxxfilt', { input: mangled.join('\n'), maxBuffer: 1 << 28 })
  .toString()
  .split('\n');
bodies.forEach((b, i) => (b.name = demangled[i] || mangled[i]));

// Where each function comes from, by the first rule that matches its demangled name. Binaryen inlines functions
// with one caller, so a function's bytes include what it inlined: the sparse binding holds the whole sparse engine.
const groups = [
  ['sparse engine (sparse.cpp, sparse_*.h)', /sparse_attention|add_run<|nearest_norm|run_row<|ka::CellGrid|build_grid/],
  ['exact engine, narrow path (exact_narrow.h: kernel × dims × width)', /ka::narrow::/],
  [
    'exact engine, the rest (exact.cpp, exact_wide.cpp, tiles)',
    /run_query_blocks|run_exact|run_wide|ka::\{anon\}::block_tile\(ka::Head const&, float,|exponentiate|ka::tiles::|ka::attention\(/,
  ],
  [
    'gradients (gradients/*)',
    /backward|attention_gradients|attention_forward|row_statistics|pair_score|row_lse|several_keys|row_theta|wide_rows|store_head|wide_theta|key_offset|all_finite|namespace\)::flush\(/,
  ],
  [
    'grid methods (methods/grid/*)',
    /ka::grid|grid_|sort_bucket|place_in_buckets|cell_residuals|binning|convolution|fft|GridCv/i,
  ],
  [
    'approximations (random features, Nyström, top-k)',
    /random_features|nystrom|approx|top_k|KeySums|Features|HeadData|head_data/i,
  ],
  [
    'weights, states (weights.cpp, states.cpp)',
    /weights|states|run_rows\(ka::Head const&, int,|score_tile<|double_row|empty_row/,
  ],
  [
    'local fits, selection, lowess (local_fit, local_rows, stats/*)',
    /local_fit|local_row|select_cv|cv_score|summarize_fit|lowess|bandwidth|lbfgs|local_gradient|Criterion|aicc|accumulate_|evaluate\(|write_fit|pass\(|cv_scan|kth_neighbour|rule_of_thumb|SortedSample/i,
  ],
  ['other ka:: (plan, bindings, helpers)', /\bka::|_js\(|embind|emscripten::|EMSCRIPTEN_BINDINGS/],
  ['libc++ (sort, merge, vector, string)', /^(void |bool |unsigned int )?std::/],
  [
    'printf (plan.cpp reasons)',
    /printf|fmt_|pop_arg|^out$|^pad$|__towrite|__fwritex|getint|frexp|wctomb|__overflow|__stdio/,
  ],
  ['malloc', /malloc|free|sbrk|emmalloc/],
  ['libm', /exp|log|pow|sin|cos|rem_pio2|scalbn|sqrt|fmod|tan/],
];
const byGroup = new Map();
for (const b of bodies) {
  const g = groups.find(([, re]) => re.test(b.name))?.[0] ?? 'unnamed / other';
  b.group = g;
  if (!byGroup.has(g)) byGroup.set(g, []);
  byGroup.get(g).push(b);
}
const gz = (list) =>
  gzipSync(Buffer.concat(list.map((b) => bytes.subarray(b.start, b.start + b.size))), { level: 9 }).length;
const total = bodies.reduce((s, b) => s + b.size, 0);
console.log(
  `${file}: ${bytes.length} bytes, gzip -9 ${gzipSync(bytes, { level: 9 }).length}; ${bodies.length} functions, code ${total} bytes (gzip ${gz(bodies)})`,
);
console.log('sections: ' + sections.map((s) => `${s.label} ${s.size}`).join(', '));
console.log('\n| source | functions | bytes | gzip alone |\n|---|---|---|---|');
for (const [g, list] of [...byGroup].sort(
  (a, b) => b[1].reduce((s, x) => s + x.size, 0) - a[1].reduce((s, x) => s + x.size, 0),
))
  console.log(`| ${g} | ${list.length} | ${list.reduce((s, b) => s + b.size, 0)} | ${gz(list)} |`);
// Template families: a function's name without its template arguments and parameters, so that every instance of
// one template (per kernel, per dimension count) adds up in one row.
const family = (n) => {
  let out = '';
  let depth = 0;
  for (const ch of n.replace(/\(anonymous namespace\)/g, '{anon}')) {
    if (ch === '<') depth++;
    if (depth === 0) out += ch;
    if (ch === '>') depth--;
  }
  return out.replace(/\(.*$/, '').replace(/^(void|float|double|bool|long long|ka::Result|ka::LbfgsStop) /, '');
};
const byFamily = new Map();
for (const b of bodies) {
  const f = family(b.name);
  if (!byFamily.has(f)) byFamily.set(f, []);
  byFamily.get(f).push(b);
}
console.log(`\n| template family (largest ${top}) | instances | bytes | gzip alone |\n|---|---|---|---|`);
for (const [f, list] of [...byFamily]
  .sort((a, b) => b[1].reduce((s, x) => s + x.size, 0) - a[1].reduce((s, x) => s + x.size, 0))
  .slice(0, top))
  console.log(`| ${f.slice(0, 100)} | ${list.length} | ${list.reduce((s, b) => s + b.size, 0)} | ${gz(list)} |`);
console.log(`\nlargest ${top} functions:`);
for (const b of [...bodies].sort((a, b) => b.size - a.size).slice(0, top))
  console.log(`${String(b.size).padStart(7)}  ${b.name.slice(0, 220)}`);
