import { CaptureConfig } from './capture-config';
import { MESH_CHAIN_PREFIX } from './chains';
import { CommandRunner } from './command-runner';
import { IpVersion, isBuiltInChain, Rule, RuleSet, Table } from './rule-set';
import { hasMeshState, MeshState, parseSavedState } from './saved-state';

export interface ApplyOptions {
  /** Replace existing mesh rules that differ from the requested ones instead of failing. */
  readonly reconcile: boolean;
  /** Re-apply even when the requested rules are already in place. */
  readonly forceApply: boolean;
}

export type ApplyOutcome = 'applied' | 'unchanged' | 'reconciled';

/** Existing mesh rules differ from the requested ones and reconciling was not asked for. */
export class DriftError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DriftError';
  }
}

interface Tools {
  save: string;
  restore: string;
  iptables: string;
  family: string;
}

const TOOLS: Record<IpVersion, Tools> = {
  4: { save: 'iptables-save', restore: 'iptables-restore', iptables: 'iptables', family: '-4' },
  6: { save: 'ip6tables-save', restore: 'ip6tables-restore', iptables: 'ip6tables', family: '-6' },
};

/**
 * Puts a rule set in place with iptables-restore (one atomic commit per table), after checking
 * what the namespace already has: identical mesh rules are left alone, different ones are
 * an error unless reconciling, and cleanup removes every mesh chain and every jump to one.
 */
export class IptablesApplier {
  constructor(
    private readonly runner: CommandRunner,
    private readonly log: (message: string) => void = () => undefined,
  ) {}

  versions(config: CaptureConfig): IpVersion[] {
    return config.dualStack ? [4, 6] : [4];
  }

  async apply(rules: RuleSet, config: CaptureConfig, options: ApplyOptions): Promise<ApplyOutcome> {
    let outcome: ApplyOutcome = 'unchanged';
    for (const version of this.versions(config)) {
      const state = await this.state(version);
      if (hasMeshState(state)) {
        const drift = await this.drift(version, rules, state);
        if (!drift && !options.forceApply) {
          this.log(`IPv${version}: the mesh rules are already in place`);
          continue;
        }
        if (drift && !options.reconcile) {
          throw new DriftError(`IPv${version}: existing mesh rules differ from the requested ones (${drift}); rerun with --reconcile to replace them`);
        }
        this.log(drift ? `IPv${version}: replacing mesh rules that differ (${drift})` : `IPv${version}: re-applying (--force-apply)`);
        await this.cleanupVersion(version, rules);
        outcome = 'reconciled';
      } else if (outcome === 'unchanged') {
        outcome = 'applied';
      }
      await this.runner.check(TOOLS[version].restore, ['--noflush'], rules.restoreInput(version));
      this.log(`IPv${version}: applied ${rules.rulesOf(version).length} rules`);
    }
    if (config.inboundInterceptionMode === 'TPROXY') await this.addTproxyRoutes(config);
    return outcome;
  }

  /** Removes every mesh chain, every jump into one, and the built-in-chain rules `rules` would add. */
  async cleanup(rules: RuleSet, config: CaptureConfig): Promise<void> {
    for (const version of this.versions(config)) await this.cleanupVersion(version, rules);
    await this.removeTproxyRoutes(config);
  }

  async state(version: IpVersion): Promise<MeshState> {
    return parseSavedState(await this.runner.check(TOOLS[version].save, []));
  }

  /** Why the saved state is not the requested rule set, or undefined when it is. */
  private async drift(version: IpVersion, rules: RuleSet, state: MeshState): Promise<string | undefined> {
    const expected = rules.rulesOf(version);
    const expectedChains = rules.chainsOf(version);
    for (const [table, chains] of state.chains) {
      for (const [chain, saved] of chains) {
        if (!expectedChains.get(table)?.includes(chain)) return `unexpected chain ${chain} in ${table}`;
        const count = expected.filter((r) => r.table === table && r.chain === chain).length;
        if (saved.length !== count) return `${table} ${chain} has ${saved.length} rules, expected ${count}`;
      }
    }
    for (const [table, chains] of expectedChains) {
      for (const chain of chains) if (!state.chains.get(table)?.has(chain)) return `missing chain ${chain} in ${table}`;
    }
    const expectedJumps = expected.filter((r) => isBuiltInChain(r.chain) && jumpsToMesh(r)).length;
    if (state.jumps.length !== expectedJumps) return `${state.jumps.length} jumps into mesh chains, expected ${expectedJumps}`;
    // Counts match; iptables itself compares each rule (it knows the normal forms).
    for (const rule of expected) {
      const result = await this.runner.run(TOOLS[version].iptables, ['-t', rule.table, '-C', rule.chain, ...rule.params]);
      if (result.code !== 0) return `missing rule in ${rule.table}: ${rule.chain} ${rule.params.join(' ')}`;
    }
    return undefined;
  }

  private async cleanupVersion(version: IpVersion, rules: RuleSet): Promise<void> {
    const tools = TOOLS[version];
    const state = await this.state(version);
    const input: string[] = [];
    const tables = new Set<Table>([...state.chains.keys(), ...state.jumps.map((j) => j.table)]);
    for (const table of tables) {
      const chains = [...(state.chains.get(table)?.keys() ?? [])];
      const jumps = state.jumps.filter((j) => j.table === table);
      if (chains.length === 0 && jumps.length === 0) continue;
      input.push(`*${table}`);
      for (const jump of jumps) input.push(jump.line.replace(/^-A /, '-D '));
      for (const chain of chains) input.push(`-F ${chain}`);
      for (const chain of chains) input.push(`-X ${chain}`);
      input.push('COMMIT');
    }
    if (input.length) await this.runner.check(tools.restore, ['--noflush'], input.join('\n') + '\n');
    // Rules in built-in chains that jump nowhere of ours (interface exclusions, TPROXY marks).
    for (const rule of rules.rulesOf(version)) {
      if (!isBuiltInChain(rule.chain) || jumpsToMesh(rule)) continue;
      for (let i = 0; i < 16; i++) {
        const result = await this.runner.run(tools.iptables, ['-t', rule.table, '-D', rule.chain, ...rule.params]);
        if (result.code !== 0) break;
      }
    }
    this.log(`IPv${version}: removed ${state.jumps.length} jumps and ${[...state.chains.values()].reduce((n, c) => n + c.size, 0)} mesh chains`);
  }

  /** TPROXY-marked packets are routed to the loopback interface, where the proxy's transparent socket takes them. */
  private async addTproxyRoutes(config: CaptureConfig): Promise<void> {
    for (const version of this.versions(config)) {
      const family = TOOLS[version].family;
      await this.ignoringExisting(['ip', family, 'rule', 'add', 'fwmark', config.inboundTproxyMark, 'lookup', config.inboundTproxyRouteTable]);
      await this.ignoringExisting(['ip', family, 'route', 'add', 'local', 'default', 'dev', 'lo', 'table', config.inboundTproxyRouteTable]);
    }
  }

  private async removeTproxyRoutes(config: CaptureConfig): Promise<void> {
    for (const version of this.versions(config)) {
      const family = TOOLS[version].family;
      await this.runner.run('ip', [family, 'rule', 'del', 'fwmark', config.inboundTproxyMark, 'lookup', config.inboundTproxyRouteTable]);
      await this.runner.run('ip', [family, 'route', 'flush', 'table', config.inboundTproxyRouteTable]);
    }
  }

  private async ignoringExisting([command, ...args]: string[]): Promise<void> {
    const result = await this.runner.run(command, args);
    if (result.code !== 0 && !/exists/i.test(result.stderr)) {
      throw new Error(`${command} ${args.join(' ')} failed (exit ${result.code}): ${result.stderr.trim()}`);
    }
  }
}

function jumpsToMesh(rule: Rule): boolean {
  const target = rule.params.indexOf('-j');
  return target >= 0 && (rule.params[target + 1] ?? '').startsWith(MESH_CHAIN_PREFIX);
}

/** The TPROXY policy-routing commands, as a dry run shows them. */
export function tproxyRouteCommands(config: CaptureConfig): string[] {
  if (config.inboundInterceptionMode !== 'TPROXY') return [];
  return (config.dualStack ? ['-4', '-6'] : ['-4']).flatMap((family) => [
    `ip ${family} rule add fwmark ${config.inboundTproxyMark} lookup ${config.inboundTproxyRouteTable}`,
    `ip ${family} route add local default dev lo table ${config.inboundTproxyRouteTable}`,
  ]);
}
