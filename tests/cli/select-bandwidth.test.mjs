// `kernel-attention select-bandwidth` and fit's bandwidth rules (cv, aicc, plugin, blocked CV with --exclude) against
// the API's selectBandwidth / kernelRegression on the same data, and the result's warnings on stderr (yearly sunspots,
// the API's own warnings).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { init } from '../../web/src/index.js';
import { at, cli, ok, okWarned, parseCsv, useTempDir } from './run.mjs';
import { X, Y, writeSampleFiles } from './sample.mjs';

useTempDir('ka-cli-bandwidth-', writeSampleFiles);

test('select-bandwidth prints the chosen bandwidth and the CV curve', async () => {
  const ka = await init({ threads: 1 });
  const want = ka.selectBandwidth(X, Y, { dim: 1, estimator: 'local-linear' }); // the CLI's default, as kernelRegression's
  const json = JSON.parse(ok('select-bandwidth', 'sample.csv', '--x', 'x', '--y', 'the y', '--format', 'json'));
  assert.ok(Math.abs(json.bandwidth[0] - want.bandwidth[0]) <= 1e-6 * want.bandwidth[0]);
  assert.equal(json.curve.length, want.curve.scores.length);
  assert.ok(json.curve.length > 3);
  assert.deepEqual([json.rule, json.method], ['cv', 'exact']);
  const csv = parseCsv(ok('select-bandwidth', 'sample.csv', '--x', 'x', '--y', 'the y'));
  assert.deepEqual(csv[0], ['bandwidth.x', 'score', 'chosen']);
  const chosen = csv.slice(1).filter((r) => r[2] === '1');
  assert.equal(chosen.length, 1);
  assert.ok(Math.abs(Number(chosen[0][0]) - want.bandwidth[0]) <= 1e-6 * want.bandwidth[0]);
  // The chosen score is the smallest on the curve.
  assert.equal(Math.min(...csv.slice(1).map((r) => Number(r[1]))), Number(chosen[0][1]));
});

test("--rule plugin and --bandwidth plugin are the API's plug-in rule (R's dpill): no score, its estimates in JSON", async () => {
  const ka = await init({ threads: 1 });
  const want = ka.selectBandwidth(X, Y, { dim: 1, rule: 'plugin' });
  const args = ['sample.csv', '--x', 'x', '--y', 'the y'];
  const json = JSON.parse(ok('select-bandwidth', ...args, '--rule', 'plugin', '--format', 'json'));
  assert.deepEqual([json.rule, json.method, json.score, json.curve], ['plugin', 'exact', null, []]);
  assert.ok(Math.abs(json.bandwidth[0] - want.bandwidth[0]) <= 1e-8 * want.bandwidth[0]);
  assert.equal(json.plugin.blocks, want.plugin.blocks);
  assert.ok(Math.abs(json.plugin.sigma2 - want.plugin.sigma2) <= 1e-8 * want.plugin.sigma2);
  const csv = parseCsv(ok('select-bandwidth', ...args, '--rule', 'plugin'));
  assert.deepEqual(csv, [
    ['bandwidth.x', 'score', 'chosen'],
    [String(json.bandwidth[0]), '', '1'],
  ]);
  const fit = JSON.parse(okWarned('fit', ...args, '--bandwidth', 'plugin', '--format', 'json'));
  assert.deepEqual([fit.rule, fit.score, fit.bandwidth], ['plugin', null, json.bandwidth]);
  const two = cli('select-bandwidth', 'sample.csv', '--x', 'x,x', '--y', 'the y', '--rule', 'plugin');
  assert.notEqual(two.code, 0);
  assert.match(two.stderr, /^kernel-attention: the number of --x columns must be 1 for rule 'plugin'/);
});

test('--exclude R runs blocked CV in select-bandwidth and fit, as the API does; a negative R or a rule other than cv is refused', async () => {
  const ka = await init({ threads: 1 });
  const want = ka.selectBandwidth(X, Y, { dim: 1, estimator: 'local-linear', exclude: 0.1 });
  const json = JSON.parse(
    ok('select-bandwidth', 'sample.csv', '--x', 'x', '--y', 'the y', '--exclude', '0.1', '--format', 'json'),
  );
  assert.ok(Math.abs(json.bandwidth[0] - want.bandwidth[0]) <= 1e-6 * want.bandwidth[0]);
  assert.notEqual(want.bandwidth[0], ka.selectBandwidth(X, Y, { dim: 1, estimator: 'local-linear' }).bandwidth[0]);
  const fit = JSON.parse(
    okWarned('fit', 'sample.csv', '--x', 'x', '--y', 'the y', '--exclude', '0.1', '--format', 'json'),
  );
  assert.ok(Math.abs(fit.bandwidth[0] - want.bandwidth[0]) <= 1e-6 * want.bandwidth[0]);
  for (const args of [['--exclude=-1'], ['--exclude', 'x'], ['--bandwidth', 'aicc', '--exclude', '1']]) {
    const r = cli('fit', 'sample.csv', '--x', 'x', '--y', 'the y', ...args);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /--exclude/);
  }
});

test('select-bandwidth --rule chooses the rule; --method, its spelling before 0.2.0, still works with a note on stderr', async () => {
  const ka = await init({ threads: 1 });
  const want = ka.selectBandwidth(X, Y, { dim: 1, rule: 'aicc', estimator: 'local-linear' });
  const args = ['select-bandwidth', 'sample.csv', '--x', 'x', '--y', 'the y', '--format', 'json'];
  const json = JSON.parse(ok(...args, '--rule', 'aicc'));
  assert.equal(json.rule, 'aicc');
  assert.ok(Math.abs(json.bandwidth[0] - want.bandwidth[0]) <= 1e-6 * want.bandwidth[0]);
  const old = cli(...args, '--method', 'aicc');
  assert.equal(old.code, 0, old.stderr);
  assert.deepEqual(JSON.parse(old.stdout), json);
  assert.match(old.stderr, /^deprecated: --method is now --rule\b.*\n$/);
  const both = cli(...args, '--method', 'aicc', '--rule', 'cv');
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--method.*--rule/);
  const bad = cli(...args, '--rule', 'grid');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--rule must be one of/);
});

test("fit, predict and select-bandwidth print the result's warnings on stderr (one line each), never on stdout", async () => {
  // Yearly sunspots (309 years, public domain; the demo's copy of statsmodels' data): leave-one-out CV chooses an h
  // below the one-year spacing, and the fit interpolates.
  const { DATASETS } = await import('../../web/demo/data/datasets.js');
  const set = DATASETS.sunspots;
  writeFileSync(at('sunspots.csv'), 'year,spots\n' + set.rows.map((r) => r.join(',')).join('\n') + '\n');
  const ka = await init({ threads: 1 });
  const model = ka.kernelRegression(
    set.rows.map((r) => r[0]),
    set.rows.map((r) => r[1]),
    { dim: 1 },
  );
  const want = model.warnings;
  model.dispose();
  assert.ok(
    want.some((w) => w.code === 'interpolating'),
    'the API warns',
  );
  const runs = [
    ['fit', 'sunspots.csv', '--x', 'year', '--y', 'spots', '--format', 'json'],
    ['predict', 'sunspots.csv', '--x', 'year', '--y', 'spots', '--grid', '3'],
    ['select-bandwidth', 'sunspots.csv', '--x', 'year', '--y', 'spots', '--format', 'json'],
  ];
  for (const args of runs) {
    const r = cli(...args);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stderr.split('\n').filter(Boolean);
    assert.ok(lines.length >= 1, `${args[0]}: no warning`);
    for (const line of lines)
      assert.match(line, /^warning \[(interpolating|precision|guard)\]: \S/, `${args[0]}: ${line}`);
    assert.ok(
      lines.some((l) => /^warning \[interpolating\]: .*below the median spacing 1\b/.test(l)),
      `${args[0]}: ${r.stderr}`,
    );
    assert.doesNotMatch(r.stdout, /warning/);
    if (args[0] === 'fit')
      assert.deepEqual(
        lines,
        want.map((w) => `warning [${w.code}]: ${w.message}`),
      );
    if (args.includes('json')) JSON.parse(r.stdout); // stdout is the result alone
  }
});
