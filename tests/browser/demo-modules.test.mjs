// The demo's modules keep the project's shape (issue 29): one job per file, so no source file over 400 lines (the
// generated data tables excepted) and no function over 150; and no import circle, so that a module never depends on
// the modules that show what it changes (state.js's subscribers carry that the other way). No browser needed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const DEMO = fileURLToPath(new URL('../../web/demo/', import.meta.url));
const DATA_TABLES = ['data/datasets.js']; // written by data/make_data.py
const sources = Object.fromEntries(
  readdirSync(DEMO, { recursive: true })
    .filter((f) => f.endsWith('.js') && !DATA_TABLES.includes(f))
    .map((f) => [f, readFileSync(DEMO + f, 'utf8')]),
);

test('demo modules: no file over 400 lines, no function over 150', () => {
  const long = [];
  for (const [name, text] of Object.entries(sources)) {
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > 400) long.push(`${name}: ${lines} lines`);
    const file = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
    const visit = (node) => {
      if (ts.isFunctionLike(node) && node.body) {
        const first = file.getLineAndCharacterOfPosition(node.getStart()).line;
        const last = file.getLineAndCharacterOfPosition(node.getEnd()).line;
        if (last - first + 1 > 150) long.push(`${name}:${first + 1}: a function of ${last - first + 1} lines`);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  assert.deepEqual(long, []);
});

test('demo modules: no import circle', () => {
  const imports = {};
  for (const [name, text] of Object.entries(sources)) {
    imports[name] = [...text.matchAll(/^import[^;]*?from '\.\/([\w./-]+)'/gm)].map((m) => m[1]);
  }
  const circles = [];
  const walk = (name, path) => {
    if (path.includes(name)) {
      circles.push([...path.slice(path.indexOf(name)), name].join(' → '));
      return;
    }
    for (const next of imports[name] ?? []) walk(next, [...path, name]);
  };
  for (const name of Object.keys(imports)) walk(name, []);
  assert.deepEqual([...new Set(circles)], []);
});
