// The README's examples are the files in examples/, verbatim, and the Node one runs and prints what it promises.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path) => readFileSync(root + path, 'utf8');

test('the README shows examples/node.mjs and examples/browser.html verbatim', () => {
  const readme = read('README.md');
  assert.ok(readme.includes('```js\n' + read('examples/node.mjs').trimEnd() + '\n```'), 'README copy of examples/node.mjs is stale');
  assert.ok(readme.includes('```html\n' + read('examples/browser.html').trimEnd() + '\n```'), 'README copy of examples/browser.html is stale');
});

test('the Node example runs and its fit follows sin(x)', () => {
  const output = execFileSync(process.execPath, [root + 'examples/node.mjs'], { encoding: 'utf8' });
  const fit = output.match(/^fit: (.*)$/m)[1].split(' ').map(Number);
  assert.equal(fit.length, 3);
  fit.forEach((f, i) => assert.ok(Math.abs(f - Math.sin(i + 1)) < 0.15, `fit at ${i + 1} = ${f}`));
  assert.match(output, /attention row 0 equals value row 0: true/);
});
