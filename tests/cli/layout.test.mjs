// The command line's layout (issue 29): one job per file, no file over 400 lines, no function over 150, and every
// command in commands/ listed by commands.mjs with its summary and run().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS } from '../../cli/commands.mjs';

const cli = fileURLToPath(new URL('../../cli/', import.meta.url));
const files = readdirSync(cli, { recursive: true }).filter((f) => f.endsWith('.mjs'));

/** Lengths of the top-level functions (declarations and arrow functions at the start of a line), by name. */
function functionLengths(text) {
  const lines = text.split('\n');
  const out = [];
  lines.forEach((line, start) => {
    const m = /^(?:export )?(?:async )?function\*? (\w+)|^(?:export )?const (\w+) = (?:async )?\(/.exec(line);
    if (!m || line.trimEnd().endsWith(';')) return;
    let depth = 0;
    for (let i = start; i < lines.length; i++) {
      for (const c of lines[i]) depth += c === '{' ? 1 : c === '}' ? -1 : 0;
      if (depth === 0 && /[}]/.test(lines[i])) {
        out.push({ name: m[1] ?? m[2], length: i - start + 1 });
        return;
      }
    }
  });
  return out;
}

test('no CLI file over 400 lines and no function over 150', () => {
  assert.ok(files.length >= 10, files.join(' '));
  for (const f of files) {
    const text = readFileSync(join(cli, f), 'utf8');
    assert.ok(text.split('\n').length <= 400, `${f}: ${text.split('\n').length} lines`);
    for (const { name, length } of functionLengths(text)) assert.ok(length <= 150, `${f}: ${name} is ${length} lines`);
  }
});

test('the function-length count sees a long function', () => {
  const long = `function big() {\n${'  x();\n'.repeat(160)}}\n`;
  assert.deepEqual(functionLengths(long), [{ name: 'big', length: 162 }]);
});

test('every file in cli/commands/ is a command listed by commands.mjs, with a summary and run()', () => {
  const listed = Object.values(COMMANDS);
  const inFolder = files.filter((f) => f.startsWith('commands/'));
  assert.equal(listed.length, inFolder.length, inFolder.join(' '));
  for (const command of listed) {
    assert.equal(typeof command.summary, 'string');
    assert.equal(typeof command.run, 'function');
  }
});
