// Which vCPUs the benchmark's threads may run on. A VM's vCPUs need not be equal: on the 2-vCPU machine of
// docs/benchmarks.md (2026-12-04), pinned with taskset, vCPU 0 ran attention 4,096² at 24.5 GFLOP/s and vCPU 1 at
// 36, the wasm dot probe at 19 and 25, while the scheduler put the one-thread calls on either (twenty minutes later
// both ran attention at 35-37). So every one-thread cell runs with the whole process tree (this process and its
// children, every thread of each) pinned to one vCPU, the one where a short probe runs fastest, and cells with more
// threads get all of them back. Linux only (taskset, from util-linux); elsewhere pinning is skipped and the report
// says so.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const taskset = (args) => spawnSync('taskset', args, { encoding: 'utf8' });

/** The vCPUs this process may use, as a list ("0-3,6" expanded), or undefined where taskset is missing. */
function allowedCpus() {
  const r = taskset(['-p', '-c', String(process.pid)]);
  if (r.status !== 0) return undefined;
  return r.stdout
    .split(':')
    .at(-1)
    .trim()
    .split(',')
    .flatMap((range) => {
      const [from, to = from] = range.split('-').map(Number);
      return Array.from({ length: to - from + 1 }, (_, n) => from + n);
    });
}

/** This process and its descendants, from /proc (each entry's stat holds its parent's pid). */
function processTree() {
  const parents = new Map();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${name}/stat`, 'utf8').split(') ')[1].split(' ')[1]);
      parents.set(Number(name), ppid);
    } catch {} // exited meanwhile
  }
  const tree = [process.pid];
  for (let n = 0; n < tree.length; n++) for (const [pid, ppid] of parents) if (ppid === tree[n]) tree.push(pid);
  return tree;
}

const all = allowedCpus();
let chosen = all;

function pin(cpus) {
  if (!all) return;
  for (const pid of processTree()) taskset(['-a', '-p', '-c', cpus.join(','), String(pid)]);
}

/** One-thread work from here on: the chosen vCPU only. */
export const useOne = () => pin(chosen);
/** Work on several threads from here on: every vCPU allowed at start. */
export const useAll = () => pin(all);

/**
 * Pins to each allowed vCPU in turn, runs `gflops()` there (a short probe) and keeps the fastest for useOne().
 * Returns the sentence for the report.
 */
export async function chooseCpu(gflops, probeName) {
  if (!all) return 'one-thread cells not pinned (taskset not available)';
  await gflops(); // warm-up on any vCPU, so that the first one measured does not pay for tier-up
  const speeds = [];
  for (const cpu of all) {
    pin([cpu]);
    speeds.push(await gflops());
  }
  const best = speeds.indexOf(Math.max(...speeds));
  chosen = [all[best]];
  useAll();
  const list = all.map((cpu, n) => `${cpu}: ${speeds[n].toFixed(1)}`).join(', ');
  return `one-thread cells pinned to vCPU ${all[best]}, the fastest at ${probeName} (GFLOP/s per vCPU: ${list})`;
}
