/**
 * The DNS proxy's view of a name table: which names it answers itself and with what. Built
 * once per table, so a query is a map lookup.
 */
import { isIP } from 'node:net';
import type { Answer } from 'dns-packet';
import type { NameTable } from '../../envoy/name-table';

/** Kept low so clients that honour it soon see a changed address. */
export const ANSWER_TTL_SECONDS = 30;

interface Addresses {
  v4: readonly string[];
  v6: readonly string[];
}

export class LookupTable {
  /** Every name answered with addresses: table hosts (some `*.` wildcards) and their alternative names. */
  private readonly hosts = new Map<string, Addresses>();
  /**
   * `<name>.<first search domain>` → `<name>`: the first query a stub resolver sends for a
   * mesh name (its search list applies before the name alone) is answered with a CNAME to
   * the name and its addresses, instead of going upstream and failing first.
   */
  private readonly expansions = new Map<string, string>();

  constructor(table: NameTable, searchDomains: readonly string[]) {
    const alternatives: Array<[string, Addresses]> = [];
    for (const [host, info] of Object.entries(table.table ?? {})) {
      const ips = info.ips ?? [];
      const addresses = { v4: ips.filter((ip) => isIP(ip) === 4), v6: ips.filter((ip) => isIP(ip) === 6) };
      if (addresses.v4.length + addresses.v6.length === 0) continue;
      this.hosts.set(normalize(host), addresses);
      for (const alt of info.alt_hosts ?? []) alternatives.push([normalize(alt), addresses]);
    }
    // A real host wins over another host's alternative name.
    for (const [name, addresses] of alternatives) if (!this.hosts.has(name)) this.hosts.set(name, addresses);
    const search = searchDomains[0] ? normalize(searchDomains[0]) : '';
    if (search) {
      for (const name of this.hosts.keys()) {
        const expanded = `${name}.${search}`;
        if (!name.startsWith('*.') && !this.hosts.has(expanded)) this.expansions.set(expanded, name);
      }
    }
  }

  /** Names answered with addresses (without expansions). */
  get size(): number {
    return this.hosts.size;
  }

  /**
   * The answers for a question, or undefined when the name is not a mesh name (the query is
   * then forwarded). A mesh name asked for a type other than A or AAAA, or for a family it
   * has no address of, gets no answers: NOERROR, never NXDOMAIN, so a client asking A and
   * AAAA at once does not conclude that the name does not exist.
   */
  lookup(questionName: string, questionType: string): Answer[] | undefined {
    const asked = questionName.replace(/\.$/, '');
    const name = asked.toLowerCase();
    const answers: Answer[] = [];
    let target = name;
    let owner = asked;
    let addresses = this.hosts.get(name);
    if (!addresses) {
      const expandedFrom = this.expansions.get(name);
      if (expandedFrom !== undefined) {
        answers.push({ type: 'CNAME', name: asked, ttl: ANSWER_TTL_SECONDS, class: 'IN', data: expandedFrom });
        target = expandedFrom;
        owner = expandedFrom;
        addresses = this.hosts.get(target);
      } else {
        addresses = this.wildcardMatch(name);
      }
    }
    if (!addresses) return undefined;
    if (questionType === 'A') for (const ip of rotated(addresses.v4)) answers.push({ type: 'A', name: owner, ttl: ANSWER_TTL_SECONDS, class: 'IN', data: ip });
    if (questionType === 'AAAA') for (const ip of rotated(addresses.v6)) answers.push({ type: 'AAAA', name: owner, ttl: ANSWER_TTL_SECONDS, class: 'IN', data: ip });
    return answers;
  }

  /** `a.b.example.com` under `*.b.example.com`, else `*.example.com`, else `*.com`. */
  private wildcardMatch(name: string): Addresses | undefined {
    const labels = name.split('.');
    for (let i = 1; i < labels.length; i++) {
      const found = this.hosts.get(`*.${labels.slice(i).join('.')}`);
      if (found) return found;
    }
    return undefined;
  }
}

function normalize(name: string): string {
  return name.replace(/\.$/, '').toLowerCase();
}

/**
 * The addresses starting at a random one: clients mostly take the first, so a headless
 * service's endpoints share the load, as the orchestrator's DNS does.
 */
function rotated(ips: readonly string[]): readonly string[] {
  if (ips.length < 2) return ips;
  const start = Math.floor(Math.random() * ips.length);
  return [...ips.slice(start), ...ips.slice(0, start)];
}
