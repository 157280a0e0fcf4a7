// The demo's static server (scripts/serve.mjs): a warm visit revalidates (ETag, 304 without a body) instead of
// downloading again, a changed file comes back new, the demo's files carry the CSP, and the checkout's dot-folders and
// paths outside it stay private.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, mkdirSync, utimesSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { DEMO_CSP, startServer } from '../../scripts/serve.mjs';

let server;
let root;
before(async () => {
  root = mkdtempSync(join(tmpdir(), 'ka-serve-'));
  mkdirSync(join(root, 'web'));
  mkdirSync(join(root, '.git'));
  writeFileSync(join(root, 'web', 'page.js'), 'export const a = 1;\n');
  writeFileSync(join(root, '.git', 'config'), 'secret\n');
  server = await startServer({ root });
});
after(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

test('a file comes with an ETag; asking again with it gives 304 and no body; a changed file comes back new', async () => {
  const first = await fetch(`${server.url}/web/page.js`);
  assert.equal(first.status, 200);
  assert.equal(await first.text(), 'export const a = 1;\n');
  assert.equal(first.headers.get('cache-control'), 'no-cache');
  assert.equal(first.headers.get('content-security-policy'), DEMO_CSP);
  const etag = first.headers.get('etag');
  assert.match(etag, /^"[0-9a-z]+-[0-9a-z]+"$/);
  const again = await fetch(`${server.url}/web/page.js`, { headers: { 'If-None-Match': etag } });
  assert.equal(again.status, 304);
  assert.equal(await again.text(), '');
  assert.equal(again.headers.get('content-security-policy'), DEMO_CSP);
  writeFileSync(join(root, 'web', 'page.js'), 'export const a = 22;\n');
  utimesSync(join(root, 'web', 'page.js'), new Date(), new Date(Date.now() + 5000));
  const changed = await fetch(`${server.url}/web/page.js`, { headers: { 'If-None-Match': etag } });
  assert.equal(changed.status, 200);
  assert.equal(await changed.text(), 'export const a = 22;\n');
  assert.notEqual(changed.headers.get('etag'), etag);
});

test('dot-folders and paths outside the root are not served', async () => {
  assert.equal((await fetch(`${server.url}/.git/config`)).status, 404);
  // An escaped slash survives URL parsing as one segment, and decoding it must not climb out of the root.
  const status = await new Promise((resolve, reject) => {
    http
      .get(`${server.url}/web/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd`, (res) => resolve(res.statusCode))
      .on('error', reject);
  });
  assert.equal(status, 403);
});
