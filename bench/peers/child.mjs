// Contenders that run in another process (bench/native_bench.cpp, bench/torch_bench.py) speak one line protocol:
// a command per line on stdin, one JSON object per line on stdout ({"error": …} on failure). Inputs travel as raw
// float32 files written once per case; the child reads the first `rows` queries, times one call per `run` (the
// timing happens inside the child) and writes its last output back on `save`. Paths must not contain whitespace.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const dataDir = fileURLToPath(new URL('../../build/bench/data/', import.meta.url));
const written = new Set();

/** Paths of the case's q, k, v as float32 files (written on first use). */
function inputFiles(c) {
  const paths = ['q', 'k', 'v'].map((name) => `${dataDir}${c.id}.${name}.f32`);
  if (!written.has(c.id)) {
    mkdirSync(dataDir, { recursive: true });
    paths.forEach((path, n) => writeFileSync(path, [c.q, c.k, c.v][n]));
    written.add(c.id);
  }
  return paths;
}

/** The `attention` or `nw` command loading the first `rows` queries of case c. */
export function loadCommand(c, rows) {
  const [q, k, v] = inputFiles(c);
  return c.kind === 'nw'
    ? `nw ${q} ${k} ${v} ${rows} ${c.J} ${c.h}`
    : `attention ${q} ${k} ${v} ${rows} ${c.J} ${c.M} ${c.D} ${c.scale}`;
}

/**
 * Starts `command args…` and resolves with {send, info, close} once it printed its first line (`info`, which must
 * not be an error). send(line) resolves with the reply object, or rejects with the child's error.
 */
export async function startChild(command, args) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-2000);
  });
  child.stdin.on('error', () => {}); // a child that died is reported by the exit handler below
  const waiting = [];
  const exited = new Promise((resolve) => {
    child.on('error', (e) => resolve(e.message));
    child.on('exit', (code) => resolve(`exited with code ${code}`));
  });
  exited.then((why) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`${command} ${why}: ${stderr.trim()}`));
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    const w = waiting.shift();
    if (!w) return;
    let reply;
    try {
      reply = JSON.parse(line);
    } catch {
      w.reject(new Error(`${command} printed ${line}`));
      return;
    }
    if (reply.error) w.reject(new Error(reply.error));
    else w.resolve(reply);
  });
  const next = () => new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  const send = (line) => {
    const reply = next();
    child.stdin.write(`${line}\n`);
    return reply;
  };
  const info = await next();
  return {
    info,
    send,
    /** Runs `save` and reads the rows × D float32 output back. */
    async output() {
      const path = `${dataDir}out.f32`;
      await send(`save ${path}`);
      const bytes = readFileSync(path);
      return new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
    },
    close() {
      child.stdin.end('quit\n');
      return exited;
    },
  };
}
