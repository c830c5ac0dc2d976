import { execFileSync, spawnSync } from 'node:child_process';

/*
 * Real network namespaces for the iptables tests. They need root, `ip` (iproute2) and the
 * iptables tools; where any is missing the tests say so and skip.
 */

export function netnsUnavailableReason(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespace tests need root';
  for (const tool of ['ip', 'iptables-restore', 'iptables-save', 'nsenter']) {
    if (spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0) return `network namespace tests need ${tool} (apt-get install iproute2 iptables util-linux)`;
  }
  return undefined;
}

export function canUseNetns(): boolean {
  return netnsUnavailableReason() === undefined;
}

/** Skips the running test or hook, saying why, where network namespaces cannot be used. */
export function skipWithoutNetns(context: Mocha.Context): void {
  const reason = netnsUnavailableReason();
  if (reason === undefined) return;
  console.log(`      skipped: ${reason}`);
  context.skip();
}

/** A namespace with loopback up and a veth link to the host, so it has a route to the outside. */
export class TestNetns {
  readonly hostIf: string;

  constructor(readonly name: string, private readonly subnet = 10) {
    this.hostIf = `mh${name.slice(-8)}`;
  }

  create(): this {
    this.destroy();
    const inner = 'eth0';
    execFileSync('ip', ['netns', 'add', this.name]);
    execFileSync('ip', ['link', 'add', this.hostIf, 'type', 'veth', 'peer', 'name', inner, 'netns', this.name]);
    execFileSync('ip', ['addr', 'add', `10.${this.subnet}.0.1/24`, 'dev', this.hostIf]);
    execFileSync('ip', ['link', 'set', this.hostIf, 'up']);
    this.exec('ip', 'link', 'set', 'lo', 'up');
    this.exec('ip', 'addr', 'add', `10.${this.subnet}.0.2/24`, 'dev', inner);
    this.exec('ip', 'link', 'set', inner, 'up');
    this.exec('ip', 'route', 'add', 'default', 'via', `10.${this.subnet}.0.1`, 'dev', inner);
    return this;
  }

  /** The workload's address inside the namespace. */
  get address(): string {
    return `10.${this.subnet}.0.2`;
  }

  exec(command: string, ...args: string[]): string {
    return execFileSync('ip', ['netns', 'exec', this.name, command, ...args], { encoding: 'utf8' });
  }

  destroy(): void {
    spawnSync('ip', ['link', 'del', this.hostIf], { stdio: 'ignore' });
    spawnSync('ip', ['netns', 'del', this.name], { stdio: 'ignore' });
  }
}
