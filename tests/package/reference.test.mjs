// The API reference is checked against the types: every member that web/types/index.d.ts declares on the API object
// and on a kernelRegression model exists at run time (and nothing undeclared does), and the README's API section
// names each of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { init } from '../../web/src/index.js';

const root = new URL('../../', import.meta.url);
const types = readFileSync(new URL('web/types/index.d.ts', root), 'utf8');
const readme = readFileSync(new URL('README.md', root), 'utf8');

/**
 * The member names of `export interface <name> { … }` or `export interface <name><…> { … }` (two-space indented
 * lines, methods and properties).
 */
function members(name) {
  const start = types.search(new RegExp(`export interface ${name}[ <]`));
  assert.ok(start >= 0, `interface ${name} not found in index.d.ts`);
  const body = types.slice(types.indexOf('{\n', start), types.indexOf('\n}', start));
  // A set: overloads declare a method once per signature.
  return [...new Set([...body.matchAll(/^ {2}(?:readonly )?(\w+)\??[(:<]/gm)].map((m) => m[1]))].sort();
}

const apiSection = readme.slice(readme.indexOf('## API'), readme.indexOf('\n## ', readme.indexOf('## API') + 1));

test('the API object has exactly the members the types declare, and the README names each', async () => {
  const ka = await init({ threads: 1 });
  const declared = members('KernelAttention');
  assert.deepEqual(Object.keys(ka).sort(), declared);
  for (const name of declared)
    assert.ok(new RegExp(`\\b${name}\\b`).test(apiSection), `README's API section does not mention ${name}`);
});

test('a kernelRegression model has exactly the members the types declare, and the README names each method', async () => {
  const ka = await init({ threads: 1 });
  const model = ka.kernelRegression([0, 1, 2, 3], [0, 1, 0, 1], { dim: 1, bandwidth: 1 });
  const declared = members('KernelRegressionModel');
  assert.deepEqual(Object.keys(model).sort(), declared);
  for (const name of declared)
    assert.ok(new RegExp(`\\.${name}\\b`).test(apiSection), `README's API section does not mention .${name}`);
  model.dispose();
});

test('an attentionPooling has exactly the members the types declare, and the README names each', async () => {
  const ka = await init({ threads: 1 });
  const pooling = ka.attentionPooling({ dim: 1 });
  const declared = members('AttentionPooling');
  assert.deepEqual(Object.keys(pooling).sort(), declared);
  for (const name of declared)
    assert.ok(new RegExp(`\\.${name}\\b`).test(apiSection), `README's API section does not mention .${name}`);
  pooling.dispose();
});
