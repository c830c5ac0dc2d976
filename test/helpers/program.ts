import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { assertSharedLoopbackNetworkHeld } from './shared-network';
import { REPO_ROOT } from './run-cli';

/** A long-running program of ours started as a user would, with its output captured. */
export interface RunningProgram {
  process: ChildProcess;
  /** Everything it logged so far (stdout and stderr). */
  output(): string;
  /** Resolves when a log line matching `pattern` appears (after `since` characters of output). */
  waitForLog(pattern: RegExp, timeoutMs?: number, since?: number): Promise<string>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export function startProgram(program: string, args: string[], env: Record<string, string>, cwd: string = REPO_ROOT): RunningProgram {
  if (program === 'pilot-agent' && args[0] === 'proxy') assertSharedLoopbackNetworkHeld('pilot-agent proxy');
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', program), ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters: Array<() => void> = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of waiters.splice(0)) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      resolve(code);
      for (const w of waiters.splice(0)) w();
    }),
  );
  const waitForLog = (pattern: RegExp, timeoutMs = 10_000, since = 0): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${program} did not log ${pattern} within ${timeoutMs} ms; output:\n${out}`)), timeoutMs);
      const check = () => {
        const m = pattern.exec(out.slice(since));
        if (m) {
          clearTimeout(timer);
          resolve(m[0]);
          return;
        }
        if (child.exitCode !== null) {
          clearTimeout(timer);
          reject(new Error(`${program} exited with ${child.exitCode} before logging ${pattern}; output:\n${out}`));
          return;
        }
        waiters.push(check);
      };
      check();
    });
  return {
    process: child,
    output: () => out,
    waitForLog,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
