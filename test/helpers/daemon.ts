import { ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import { REPO_ROOT } from './run-cli';

export interface RunningDaemon {
  process: ChildProcess;
  grpcPort: number;
  httpPort: number;
  monitoringPort: number;
  /** Everything the daemon logged so far (stdout and stderr). */
  output(): string;
  /** Resolves when a log line matching `pattern` appears (after `since` characters of output). */
  waitForLog(pattern: RegExp, timeoutMs?: number, since?: number): Promise<string>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `pilot-discovery discovery` as a user would, on loopback with ports picked by the
 * system, and learns the bound ports from its start-up log lines.
 */
export async function startDaemon(args: string[], env: Record<string, string> = {}): Promise<RunningDaemon> {
  // Loopback with system-picked ports, unless the test chose an address.
  const defaults = ['--grpcAddr', '--httpAddr', '--monitoringAddr'].filter((f) => !args.includes(f)).flatMap((f) => [f, '127.0.0.1:0']);
  const child = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'bin', 'pilot-discovery'), 'discovery', ...defaults, ...args],
    { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
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
      const timer = setTimeout(() => reject(new Error(`daemon did not log ${pattern} within ${timeoutMs} ms; output:\n${out}`)), timeoutMs);
      const check = () => {
        const m = pattern.exec(out.slice(since));
        if (m) {
          clearTimeout(timer);
          resolve(m[0]);
          return;
        }
        if (child.exitCode !== null) {
          clearTimeout(timer);
          reject(new Error(`daemon exited with ${child.exitCode} before logging ${pattern}; output:\n${out}`));
          return;
        }
        waiters.push(check);
      };
      check();
    });

  const port = async (what: string) => Number(/(\d+)$/.exec(await waitForLog(new RegExp(`${what} listening on \\S+:\\d+`)))![1]);
  const grpcPort = await port('xDS \\(gRPC\\)');
  const httpPort = await port('HTTP discovery');
  const monitoringPort = await port('monitoring');
  await waitForLog(/daemon ready/);
  return {
    process: child,
    grpcPort,
    httpPort,
    monitoringPort,
    output: () => out,
    waitForLog,
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
