/**
 * CPU seconds of a process and all its descendants, read from /proc (Linux): the agent's
 * proxy workers are its children. CPU time is what stays comparable on a shared machine.
 */
import * as fs from 'node:fs';

const TICKS_PER_SECOND = 100;

function children(pid: number): number[] {
  const out: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const task of tasks) {
    try {
      out.push(...fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
    } catch {
      // The task ended meanwhile.
    }
  }
  return out;
}

function ownSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** CPU seconds used so far by `pid` and its live descendants. */
export function treeCpuSeconds(pid: number): number {
  return ownSeconds(pid) + children(pid).reduce((sum, child) => sum + treeCpuSeconds(child), 0);
}

function ownIoCalls(pid: number): number {
  try {
    const io = fs.readFileSync(`/proc/${pid}/io`, 'utf8');
    return Number(/^syscr: (\d+)/m.exec(io)?.[1] ?? 0) + Number(/^syscw: (\d+)/m.exec(io)?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** Read and write system calls made so far by `pid` and its live descendants (a socket read or write each). */
export function treeIoCalls(pid: number): number {
  return ownIoCalls(pid) + children(pid).reduce((sum, child) => sum + treeIoCalls(child), 0);
}
