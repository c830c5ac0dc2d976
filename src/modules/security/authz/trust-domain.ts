/**
 * The mesh's trust domain and its aliases (identities of any of them are treated alike), and
 * how policy values naming a trust domain are widened to all of them, as the incumbent does.
 */

/** Identities in policies use `cluster.local` to mean "the local trust domain, whatever it is". */
export const LOCAL_TRUST_DOMAIN = 'cluster.local';

export class TrustDomainBundle {
  /** The trust domain first, then its aliases. */
  readonly trustDomains: readonly string[];

  constructor(trustDomain: string, aliases: readonly string[] = []) {
    if (trustDomain === '') throw new Error('trust domain must not be empty');
    this.trustDomains = [trustDomain, ...aliases.filter((a) => a !== trustDomain)];
  }

  /** Cache key of everything the bundle changes in generated config. */
  get key(): string {
    return this.trustDomains.join(',');
  }

  /**
   * Principals `<td>/ns/<ns>/sa/<sa>` whose trust domain is the local one (or `cluster.local`,
   * or matches one by `*` pattern) become one principal per trust domain of the bundle; others,
   * and principals whose trust domain is `*`, stay as written.
   */
  expandPrincipals(principals: readonly string[]): string[] {
    const out: string[] = [];
    for (const principal of principals) {
      const parts = principal.split('/');
      const td = parts[0];
      if (parts.length !== 5 || td === '*' || !(td === LOCAL_TRUST_DOMAIN || this.trustDomains.some((known) => patternsMeet(td, known)))) {
        out.push(principal);
        continue;
      }
      const forEach: string[] = [];
      for (const known of this.trustDomains) {
        // A `*x` trust domain already covers each domain it matches: keep it rather than replace it.
        const replaced = td.startsWith('*') && known.endsWith(td.slice(1)) ? principal : [known, ...parts.slice(1)].join('/');
        if (!forEach.includes(replaced)) forEach.push(replaced);
      }
      out.push(...forEach);
    }
    return out;
  }

  /** Trust-domain values naming one of the bundle's domains stand for all of them. */
  expandTrustDomains(values: readonly string[]): string[] {
    const out: string[] = [];
    for (const v of values) for (const td of this.trustDomains.includes(v) ? this.trustDomains : [v]) if (!out.includes(td)) out.push(td);
    return out;
  }
}

/** Equal, `*`, or either a prefix (`x*`) or suffix (`*x`) pattern matching the other. */
function patternsMeet(a: string, b: string): boolean {
  const prefix = (s: string, p: string) => p.endsWith('*') && s.startsWith(p.slice(0, -1));
  const suffix = (s: string, p: string) => p.startsWith('*') && s.endsWith(p.slice(1));
  return a === b || b === '*' || prefix(a, b) || prefix(b, a) || suffix(a, b) || suffix(b, a);
}
