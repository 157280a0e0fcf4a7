// The README's examples are the files in examples/, verbatim, and the Node one runs and prints what it promises.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path) => readFileSync(root + path, 'utf8');

test('the README shows every file of examples/ verbatim', () => {
  const readme = read('README.md');
  assert.ok(
    readme.includes('```js\n' + read('examples/node.mjs').trimEnd() + '\n```'),
    'README copy of examples/node.mjs is stale',
  );
  assert.ok(
    readme.includes('```html\n' + read('examples/browser.html').trimEnd() + '\n```'),
    'README copy of examples/browser.html is stale',
  );
  assert.ok(
    readme.includes('```js\n' + read('examples/shards.mjs').trimEnd() + '\n```'),
    'README copy of examples/shards.mjs is stale',
  );
  assert.ok(
    readme.includes('```js\n' + read('examples/regression.mjs').trimEnd() + '\n```'),
    'README copy of examples/regression.mjs is stale',
  );
  assert.ok(
    readme.includes('```js\n' + read('examples/mixed.mjs').trimEnd() + '\n```'),
    'README copy of examples/mixed.mjs is stale',
  );
});

test('the mixed-data example pools little across diets and finds each diet its own curve', () => {
  const output = execFileSync(process.execPath, [root + 'examples/mixed.mjs'], { encoding: 'utf8' });
  const [, h, lambda] = output.match(/^bandwidth: day (\S+), diet λ (\S+)/m).map(Number);
  assert.ok(h > 0 && lambda >= 0 && lambda <= 2 / 3, `h ${h}, λ ${lambda}`);
  const day21 = [...output.matchAll(/day 21 (\S+) g/g)].map((m) => Number(m[1]));
  // The truth at day 21: 40 + gain / (1 + e^(−9/4)), gains 150, 200, 250 g.
  [150, 200, 250].forEach((gain, k) =>
    assert.ok(Math.abs(day21[k] - (40 + gain / (1 + Math.exp(-9 / 4)))) < 8, `diet ${k}: ${day21[k]}`),
  );
});

test('the regression example chooses a positive bandwidth and its bands follow the truth', () => {
  const output = execFileSync(process.execPath, [root + 'examples/regression.mjs'], { encoding: 'utf8' });
  assert.ok(Number(output.match(/^bandwidth (\S+)/m)[1]) > 0);
  const rows = [...output.matchAll(/fit (\S+)\s+95% band \[(\S+), (\S+)\]\s+truth (\S+)/g)].map((m) =>
    m.slice(1).map(Number),
  );
  assert.equal(rows.length, 5);
  for (const [fit, lower, upper, truth] of rows) {
    assert.ok(lower < fit && fit < upper, `fit ${fit} inside [${lower}, ${upper}]`);
    assert.ok(Math.abs(fit - truth) < 0.2, `fit ${fit} near truth ${truth}`);
  }
});

test('the sharding example merges to the direct result', () => {
  const output = execFileSync(process.execPath, [root + 'examples/shards.mjs'], { encoding: 'utf8' });
  const merged = output.match(/^merged: (.*)$/m)[1];
  const direct = output.match(/^direct: (.*)$/m)[1];
  assert.equal(merged, direct);
  assert.equal(merged.split(' ').length, 3);
});

test('the Node example runs and its fit follows sin(x)', () => {
  const output = execFileSync(process.execPath, [root + 'examples/node.mjs'], { encoding: 'utf8' });
  const fit = output
    .match(/^fit: (.*)$/m)[1]
    .split(' ')
    .map(Number);
  assert.equal(fit.length, 3);
  fit.forEach((f, i) => assert.ok(Math.abs(f - Math.sin(i + 1)) < 0.15, `fit at ${i + 1} = ${f}`));
  assert.match(output, /attention row 0 equals value row 0: true/);
});
