// The CLI's usage and refusals against the exact text expected: --help for every command; malformed input as
// file:line:column with exit code 1, command-line mistakes with exit code 2, unreadable paths, strict numbers, API
// errors in the flags' words, and the --bandwidth messages; never a stack trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, at, cli, ok, parseCsv, useTempDir } from './run.mjs';
import { X, Y, writeAttentionFiles, writeSampleFiles } from './sample.mjs';

useTempDir('ka-cli-errors-', () => {
  writeSampleFiles();
  writeAttentionFiles();
});

test('--help for every command', () => {
  assert.match(ok('--help'), /Commands:/);
  for (const command of ['fit', 'predict', 'select-bandwidth', 'lowess', 'loess', 'attention']) {
    assert.match(ok(command, '--help'), new RegExp(`^Usage: kernel-attention ${command} `));
  }
});

test('malformed input: file:line:column and exit code 1; command-line mistakes: exit code 2; never a stack trace', () => {
  const cases = [
    [
      ['fit', 'bad-number.csv', '--x', 'x', '--y', 'y'],
      1,
      /^bad-number\.csv:4:3: column "y": expected a finite number; got "2\.x"\n$/,
    ],
    [
      ['predict', 'ragged.csv', '--x', 'x', '--y', 'y', '--grid', '3'],
      1,
      /^ragged\.csv:3: expected 2 fields \(as in the first row\); got 1\n$/,
    ],
    [['select-bandwidth', 'quote.csv', '--x', 'x', '--y', 'y'], 1, /^quote\.csv: line 3: a quoted field is not closed/],
    [['fit', 'sample.csv', '--x', 'nope', '--y', 'the y'], 2, /no column "nope" in sample\.csv/],
    [['fit', 'sample.csv', '--x', 'x'], 2, /--y is required/],
    [['fit', '--x', 'x', '--y', 'the y'], 2, /the data file \(FILE\) is missing/],
    [['fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--kernel', 'gauss'], 2, /--kernel must be one of/],
    [['predict', 'sample.csv', '--x', 'x', '--y', 'the y'], 2, /give one of --at FILE2 or --grid N/],
    [['fit', 'missing.csv', '--x', 'x', '--y', 'y'], 2, /cannot read missing\.csv: no such file/],
    [['fit', 'sample.csv', '--bogus'], 2, /Unknown option '--bogus'/],
    [['frobnicate'], 2, /unknown command "frobnicate"/],
    [
      ['attention', '--queries', 'q.f32', '--keys', 'k.f32', '--values', 'v.npy', '--dim', '3'],
      1,
      /kernel-attention: .*3/,
    ],
  ];
  for (const [args, code, pattern] of cases) {
    const r = cli(...args);
    assert.equal(r.code, code, `${args.join(' ')}: exit ${r.code} (${r.stderr})`);
    assert.match(r.stderr, pattern, args.join(' '));
    assert.doesNotMatch(r.stderr, /\n\s+at /, `${args.join(' ')} printed a stack trace`);
    assert.equal(r.stdout, '');
  }
});

test('a path that is a directory or unreadable: one line on stderr, exit code 2 (as a missing file), nothing on stdout', () => {
  mkdirSync(at('folder'));
  const oneLine = (args, pattern, options) => {
    const r = options
      ? spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, ...options })
      : cli(...args);
    const what = `kernel-attention ${args.join(' ')}`;
    assert.equal(r.status ?? r.code, 2, `${what}: exit ${r.status ?? r.code} (${r.stderr})`);
    assert.match(r.stderr, pattern, what);
    assert.equal(r.stderr.split('\n').length, 2, `${what}: more than one line: ${JSON.stringify(r.stderr)}`);
    assert.equal(r.stdout, '', what);
  };
  oneLine(['fit', 'folder', '--x', 'x', '--y', 'y'], /^kernel-attention: cannot read folder: it is a directory\n$/);
  oneLine(
    ['fit', 'missing.csv', '--x', 'x', '--y', 'y'],
    /^kernel-attention: cannot read missing\.csv: no such file\n$/,
  );
  oneLine(
    ['predict', 'sample.csv', '--x', 'x', '--y', 'the y', '--at', 'folder'],
    /^kernel-attention: cannot read folder: it is a directory\n$/,
  );
  oneLine(
    ['attention', '--queries', 'folder', '--keys', 'folder', '--values', 'folder', '--dim', '1'],
    /^kernel-attention: cannot read folder: it is a directory\n$/,
  );
  oneLine(
    ['fit', 'sample.csv/x.csv', '--x', 'x', '--y', 'y'],
    /^kernel-attention: cannot read sample\.csv\/x\.csv: a part of the path is not a directory\n$/,
  );
  oneLine(
    ['fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--bandwidth', '0.2', '--output', 'folder'],
    /^kernel-attention: cannot write folder: it is a directory\n$/,
  );

  // Unreadable: mode 000. root reads any file, so as root the CLI runs as nobody (uid 65534) on a folder it may enter.
  const open = mkdtempSync(join(tmpdir(), 'ka-cli-perm-'));
  try {
    chmodSync(open, 0o755);
    writeFileSync(join(open, 'secret.csv'), 'x,y\n0,1\n1,2\n');
    chmodSync(join(open, 'secret.csv'), 0o000);
    const asNobody = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    oneLine(
      ['fit', 'secret.csv', '--x', 'x', '--y', 'y'],
      /^kernel-attention: cannot read secret\.csv: permission denied\n$/,
      { cwd: open, ...asNobody },
    );
  } finally {
    rmSync(open, { recursive: true, force: true });
  }
});

test('strict numbers in cells and flags: 0x10, 1e and 12abc are refused where they are', () => {
  writeFileSync(at('hex.csv'), 'x,y\n0,1\n0x10,2\n1,3\n2,4\n');
  const cases = [
    [
      ['fit', 'hex.csv', '--x', 'x', '--y', 'y'],
      1,
      /^hex\.csv:3:1: column "x": expected a finite number; got "0x10"\n$/,
    ],
    [['fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--bandwidth', '0x10'], 2, /--bandwidth must be/],
    [['predict', 'sample.csv', '--x', 'x', '--y', 'the y', '--grid', '1e'], 2, /--grid must be an integer; got "1e"/],
    [
      ['predict', 'sample.csv', '--x', 'x', '--y', 'the y', '--grid', '12abc'],
      2,
      /--grid must be an integer; got "12abc"/,
    ],
    [['fit', 'hex.csv', '--x', 'x', '--y', 'y', '--missing', 'skip'], 1, /expected a finite number; got "0x10"/],
  ];
  for (const [args, code, pattern] of cases) {
    const r = cli(...args);
    assert.equal(r.code, code, `${args.join(' ')}: exit ${r.code} (${r.stderr})`);
    assert.match(r.stderr, pattern, args.join(' '));
  }
});

test('API errors name the flags (--dim, --keys), not the API (options.dim); a value beyond float32 names its line', () => {
  const r = cli('attention', '--queries', 'q.f32', '--keys', 'k.f32', '--values', 'v.npy', '--dim', '3');
  assert.equal(r.code, 1);
  assert.match(r.stderr, /--keys/);
  assert.match(r.stderr, /--dim/);
  assert.doesNotMatch(r.stderr, /options\.|`keys`/);
  const h = cli(
    'attention',
    '--queries',
    'q.f32',
    '--keys',
    'k.f32',
    '--values',
    'v.npy',
    '--dim',
    '4',
    '--heads',
    '3',
  );
  assert.match(h.stderr, /^kernel-attention: --heads = 3 must divide --dim = 4\n$/);
  writeFileSync(at('huge.csv'), 'x,y\n0,1\n1,1e300\n2,3\n');
  const big = cli('fit', 'huge.csv', '--x', 'x', '--y', 'y', '--bandwidth', '1');
  assert.equal(big.code, 1);
  assert.match(big.stderr, /^huge\.csv:3: column "y": .*float32/);
});

test('--bandwidth: the message fits the number of x columns; a negative number is a value, refused as such (not "ambiguous")', () => {
  writeFileSync(at('two-x.csv'), 'a,b,y\n' + X.map((x, i) => `${x},${(i * 7) % 11},${Y[i]}`).join('\n') + '\n');
  const cases = [
    [
      ['fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--bandwidth', 'abc'],
      /^kernel-attention: --bandwidth must be cv, aicc, scott, silverman, plugin or a positive number; got "abc"\n/,
    ],
    [
      ['fit', 'two-x.csv', '--x', 'a,b', '--y', 'y', '--bandwidth', 'abc'],
      /--bandwidth must be cv, aicc, scott, silverman, plugin, a positive number or 2 of them \(one per --x column\); got "abc"/,
    ],
    [
      ['fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--bandwidth', '-1'],
      /--bandwidth must be .*a positive number; got "-1"/,
    ],
    [
      ['predict', 'sample.csv', '--x', 'x', '--y', 'the y', '--grid', '3', '--level', '-0.5'],
      /--level must be between 0 and 1; got -0\.5/,
    ],
    [
      ['select-bandwidth', 'sample.csv', '--x', 'x', '--y', 'the y', '--exclude', '-1'],
      /--exclude must be a number >= 0; got "-1"/,
    ],
  ];
  for (const [args, pattern] of cases) {
    const r = cli(...args);
    assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code} (${r.stderr})`);
    assert.match(r.stderr, pattern, args.join(' '));
    assert.doesNotMatch(r.stderr, /ambiguous|or 1 of them/, args.join(' '));
  }
  // A negative value where one is allowed: the grid's ends.
  const rows = parseCsv(
    ok(
      'predict',
      'sample.csv',
      '--x',
      'x',
      '--y',
      'the y',
      '--bandwidth',
      '0.2',
      '--grid',
      '3',
      '--from',
      '-0.5',
      '--to',
      '1',
    ),
  );
  assert.deepEqual(
    rows.slice(1).map((r) => Number(r[0])),
    [-0.5, 0.25, 1],
  );
});
