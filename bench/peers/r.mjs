// Contender: R (Rscript) with its loess(), lowess() and KernSmooth's locpoly() and dpill(), run by bench/r_peer.R in
// one child process. Timing happens inside R (proc.time: elapsed seconds and the process's CPU seconds). Without
// Rscript, start() throws and callers print that as a note and leave R's rows out (as bench/peers/torch.mjs).
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dataDir, startChild } from './child.mjs';

const script = fileURLToPath(new URL('../r_peer.R', import.meta.url));

/** Whether Rscript runs here (a note for the table when it does not). */
export function rAvailable() {
  const r = spawnSync('Rscript', ['--version'], { encoding: 'utf8' });
  return r.status === 0
    ? null
    : 'Rscript not found: R rows skipped (Debian: apt-get install r-base-core r-cran-kernsmooth)';
}

function writeInput(name, array) {
  mkdirSync(dataDir, { recursive: true });
  const path = `${dataDir}r-${name}.f64`;
  writeFileSync(path, Float64Array.from(array));
  return path;
}

/**
 * The R peer: start() resolves with its version line; load(command, x, y, args) writes x and y, loads the task and
 * resolves with its first timing { seconds, cpu }; run() times it again; output() reads its last output back.
 */
export function rPeer() {
  let child;
  return {
    label: 'R',
    async start() {
      child = await startChild('Rscript', [script]);
      return `${child.info.r}${child.info.kernsmooth ? `, KernSmooth ${child.info.kernsmooth}` : ''}`;
    },
    async load(command, x, y, n, args) {
      const [xp, yp] = [writeInput('x', x), writeInput('y', y)];
      return child.send(`${command} ${xp} ${yp} ${n} ${args.join(' ')}`);
    },
    run: () => child.send('run'),
    async output() {
      const path = `${dataDir}r-out.f64`;
      await child.send(`save ${path}`);
      const bytes = readFileSync(path);
      return new Float64Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    },
    close: () => child?.close(),
  };
}
