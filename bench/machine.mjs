// What a benchmark table depends on: the machine and toolchain (one line per fact), and the source measured.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism, totalmem } from 'node:os';

const firstLine = (command, args) => {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.split('\n')[0].trim() : `${command}: not found`;
};

export function describeMachine() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const field = (name) => cpuinfo.match(new RegExp(`^${name}\\s*:\\s*(.*)$`, 'm'))?.[1] ?? '?';
  const emcc = firstLine('emcc', ['--version']).match(/\) ([\d.]+)/)?.[1] ?? '?';
  return [
    `CPU ${field('model name')} (family ${field('cpu family')} model ${field('model')}, ${Math.round(field('cpu MHz'))} MHz)`,
    `nproc ${availableParallelism()}`,
    `${Math.round(totalmem() / 2 ** 30)} GiB RAM`,
    `Node ${process.version} (V8 ${process.versions.v8})`,
    `Emscripten ${emcc}`,
    firstLine('g++', ['--version']),
  ];
}

/** The commit measured, and whether the engine (cpp/, web/src/) differs from it. */
export function describeSource() {
  const git = (...args) => spawnSync('git', args, { encoding: 'utf8', cwd: new URL('..', import.meta.url) });
  const head = git('rev-parse', '--short', 'HEAD');
  if (head.status !== 0) return 'source: not a git checkout';
  const dirty = git('status', '--porcelain', '--', 'cpp', 'web/src').stdout.trim() !== '';
  return `commit ${head.stdout.trim()}${dirty ? ' with uncommitted changes to cpp/ or web/src/' : ''}`;
}

// CPU time in clock ticks: busy time of the whole machine (/proc/stat), and of this process with its finished children.
function ticks() {
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const self = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ').slice(11, 15).map(Number);
  return { machine: user + nice + system + irq + softirq + steal, self: self.reduce((a, b) => a + b, 0) };
}

/**
 * Starts watching the machine; the returned function gives the average number of cores that other processes kept
 * busy since then (call it after every child has exited, so that their time counts as ours). Linux only.
 */
export function watchOtherLoad() {
  const start = ticks();
  const t0 = performance.now();
  return () => {
    const end = ticks();
    const hz = 100; // USER_HZ on Linux
    return (end.machine - start.machine - (end.self - start.self)) / hz / ((performance.now() - t0) / 1e3);
  };
}
