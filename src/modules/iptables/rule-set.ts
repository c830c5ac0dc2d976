/*
 * An ordered list of iptables rules for IPv4 and IPv6, rendered as iptables-restore input.
 * Rules keep the order they were added in; the restore text groups them per table in a
 * fixed table order and declares each non-built-in chain once, where it is first used.
 */

export type Table = 'filter' | 'mangle' | 'nat' | 'raw';
export type IpVersion = 4 | 6;

export interface Rule {
  readonly table: Table;
  readonly chain: string;
  /** 1-based position for `-I`; absent for `-A`. */
  readonly position?: number;
  readonly params: readonly string[];
}

/** Placeholder a versioned rule replaces with its IPv4 or IPv6 address. */
export const VERSIONED_ADDRESS = '{address}';

const TABLE_ORDER: readonly Table[] = ['filter', 'mangle', 'nat', 'raw'];
const BUILT_IN_CHAINS = new Set(['PREROUTING', 'INPUT', 'FORWARD', 'OUTPUT', 'POSTROUTING']);

export function isBuiltInChain(chain: string): boolean {
  return BUILT_IN_CHAINS.has(chain);
}

export class RuleSet {
  private readonly rules: Record<IpVersion, Rule[]> = { 4: [], 6: [] };

  append(table: Table, chain: string, ...params: string[]): this {
    return this.appendV4(table, chain, ...params).appendV6(table, chain, ...params);
  }

  appendV4(table: Table, chain: string, ...params: string[]): this {
    this.rules[4].push({ table, chain, params });
    return this;
  }

  appendV6(table: Table, chain: string, ...params: string[]): this {
    this.rules[6].push({ table, chain, params });
    return this;
  }

  /** One rule whose `{address}` parameter differs per IP version (loopback, passthrough source...). */
  appendVersioned(v4Address: string, v6Address: string, table: Table, chain: string, ...params: string[]): this {
    this.appendV4(table, chain, ...withAddress(params, v4Address));
    return this.appendV6(table, chain, ...withAddress(params, v6Address));
  }

  insert(table: Table, chain: string, position: number, ...params: string[]): this {
    return this.insertV4(table, chain, position, ...params).insertV6(table, chain, position, ...params);
  }

  insertV4(table: Table, chain: string, position: number, ...params: string[]): this {
    this.rules[4].push({ table, chain, position, params });
    return this;
  }

  insertV6(table: Table, chain: string, position: number, ...params: string[]): this {
    this.rules[6].push({ table, chain, position, params });
    return this;
  }

  rulesOf(version: IpVersion): readonly Rule[] {
    return this.rules[version];
  }

  /** The mesh chains each table uses, in order of first use. */
  chainsOf(version: IpVersion): Map<Table, string[]> {
    const chains = new Map<Table, string[]>();
    for (const rule of this.rules[version]) {
      const list = chains.get(rule.table) ?? [];
      chains.set(rule.table, list);
      if (!isBuiltInChain(rule.chain) && !list.includes(rule.chain)) list.push(rule.chain);
    }
    return chains;
  }

  /** iptables-restore input for one IP version; empty when it has no rules. */
  restoreInput(version: IpVersion): string {
    const chains = this.chainsOf(version);
    const lines: string[] = [];
    for (const table of TABLE_ORDER) {
      const rules = this.rules[version].filter((rule) => rule.table === table);
      if (rules.length === 0) continue;
      lines.push(`* ${table}`);
      for (const chain of chains.get(table) ?? []) lines.push(`-N ${chain}`);
      for (const rule of rules) lines.push(ruleLine(rule));
      lines.push('COMMIT');
    }
    return lines.length ? lines.join('\n') + '\n' : '';
  }
}

/** `-A CHAIN params...` or `-I CHAIN n params...`, as iptables-restore and iptables read it. */
export function ruleLine(rule: Rule): string {
  const head = rule.position === undefined ? ['-A', rule.chain] : ['-I', rule.chain, String(rule.position)];
  return [...head, ...rule.params].join(' ');
}

function withAddress(params: readonly string[], address: string): string[] {
  return params.map((p) => (p === VERSIONED_ADDRESS ? address : p));
}
