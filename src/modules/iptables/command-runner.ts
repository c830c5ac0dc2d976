import { spawn } from 'node:child_process';
import * as path from 'node:path';

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the external tools (iptables-restore, ip...), inside a network namespace when one is given. */
export class CommandRunner {
  /** `namespace`: a name under /var/run/netns, or a path to a namespace file (/proc/<pid>/ns/net...). */
  constructor(readonly namespace?: string) {}

  /** The namespace file nsenter enters; undefined for the current namespace. */
  get namespacePath(): string | undefined {
    if (!this.namespace) return undefined;
    return this.namespace.includes('/') ? this.namespace : path.join('/var/run/netns', this.namespace);
  }

  /** The argv that runs `command args` in the namespace. */
  argv(command: string, args: readonly string[]): string[] {
    const ns = this.namespacePath;
    return ns ? ['nsenter', `--net=${ns}`, '--', command, ...args] : [command, ...args];
  }

  run(command: string, args: readonly string[], input?: string): Promise<CommandResult> {
    const [file, ...rest] = this.argv(command, args);
    return new Promise((resolve, reject) => {
      const child = spawn(file, rest, { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      child.on('error', (err: NodeJS.ErrnoException) => {
        reject(err.code === 'ENOENT' ? new Error(`${file} not found: install it (iptables, iproute2, util-linux) or use --dry-run`) : err);
      });
      child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
      child.stdin.on('error', () => undefined);
      child.stdin.end(input ?? '');
    });
  }

  /** Runs and fails with the tool's own message when it exits non-zero. */
  async check(command: string, args: readonly string[], input?: string): Promise<string> {
    const result = await this.run(command, args, input);
    if (result.code !== 0) {
      const where = this.namespace ? ` (network namespace ${this.namespace})` : '';
      throw new Error(`${command} ${args.join(' ')}${where} failed (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}`);
    }
    return result.stdout;
  }
}
