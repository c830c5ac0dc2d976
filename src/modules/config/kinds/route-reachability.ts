import { FieldWarning } from '../kind';
import type { HTTPMatchRequest, HTTPRoute, StringMatch, VirtualServiceSpec } from './virtual-service';

/**
 * Rules and matches of a VirtualService that can never take traffic because an earlier one
 * takes it first: a second rule without matches, a match equal to an earlier one, or a URI
 * prefix match an earlier, shorter prefix with the same other conditions already covers.
 * These are warnings, not errors: the config works, it just does not do what it says.
 */
export function routeReachabilityWarnings(spec: VirtualServiceSpec): FieldWarning[] {
  return [
    ...rulesWarnings('http', spec.http ?? [], httpRouteName, httpMatchName, withoutName),
    ...httpPrefixOverlaps(spec.http ?? []),
    ...rulesWarnings('tcp', spec.tcp ?? [], numbered, numbered, (m) => m),
    ...rulesWarnings('tls', spec.tls ?? [], numbered, numbered, (m) => m),
  ];
}

interface Rule<M> {
  match?: M[];
}

function rulesWarnings<R extends Rule<M>, M>(
  section: string,
  rules: readonly R[],
  ruleName: (r: R, i: number) => string,
  matchName: (m: M, i: number) => string,
  comparable: (m: M) => unknown,
): FieldWarning[] {
  const out: FieldWarning[] = [];
  const firstRuleOf = new Map<string, number>();
  let catchAll = -1;
  rules.forEach((rule, r) => {
    const at = `spec.${section}[${r}]`;
    const matches = rule.match ?? [];
    if (matches.length === 0) {
      if (catchAll >= 0) out.push(unreachable(at, ruleName(rule, r), 'only the last rule can have no matches'));
      catchAll = r;
      return;
    }
    let duplicates = 0;
    matches.forEach((m, i) => {
      if (catchAll >= 0) {
        out.push(unreachable(at, ruleName(rule, r), 'route without matches defined before'));
        return;
      }
      const key = canonicalJson(comparable(m));
      const earlier = firstRuleOf.get(key);
      if (earlier === undefined) {
        firstRuleOf.set(key, r);
        return;
      }
      duplicates++;
      out.push(ineffective(`${at}.match[${i}]`, ruleName(rule, r), matchName(m, i), ruleName(rules[earlier], earlier)));
    });
    if (duplicates === matches.length) out.push(unreachable(at, ruleName(rule, r), 'all matches used by prior rules'));
  });
  return out;
}

/** One URI-prefix match with the other conditions it carries, in comparable form. */
interface PrefixMatch {
  rule: string;
  match: string;
  field: string;
  prefix: string;
  port?: number;
  method: string;
  authority: string;
  headers: Record<string, string>;
  queryParams: Record<string, string>;
  withoutHeaders: Record<string, string>;
}

/**
 * A later prefix match is shadowed when an earlier prefix is a prefix of it and every other
 * condition of the earlier one is as wide or wider. Exact duplicates are left to the check above.
 */
function httpPrefixOverlaps(rules: readonly HTTPRoute[]): FieldWarning[] {
  const prefixMatches: PrefixMatch[] = [];
  const seen = new Set<string>();
  let catchAll = false;
  rules.forEach((rule, r) => {
    const matches = rule.match ?? [];
    if (matches.length === 0) catchAll = true;
    if (catchAll) return;
    matches.forEach((m, i) => {
      const key = canonicalJson(withoutName(m));
      if (seen.has(key)) return;
      seen.add(key);
      const prefix = m.uri?.prefix;
      if (!prefix) return;
      prefixMatches.push({
        rule: httpRouteName(rule, r),
        match: httpMatchName(m, i),
        field: `spec.http[${r}].match[${i}]`,
        prefix,
        port: m.port,
        // Without a method condition the incumbent compares as if GET were asked for.
        method: exactOrPrefix(m.method) || 'exact:GET',
        authority: exactOrPrefix(m.authority),
        headers: conditionMap(m.headers),
        queryParams: conditionMap(m.queryParams),
        withoutHeaders: conditionMap(m.withoutHeaders),
      });
    });
  });
  const out: FieldWarning[] = [];
  prefixMatches.forEach((earlier, a) => {
    for (const later of prefixMatches.slice(a + 1)) {
      if (later.prefix === earlier.prefix || !covers(earlier, later)) continue;
      out.push(ineffective(later.field, later.rule, `${later.match} of prefix ${later.prefix}`, `${earlier.match} of prefix ${earlier.prefix} on ${earlier.rule}`));
    }
  });
  return out;
}

function covers(a: PrefixMatch, b: PrefixMatch): boolean {
  if (!b.prefix.startsWith(a.prefix) || a.port !== b.port) return false;
  const wider = (x: string, y: string) => x === y || x.startsWith(y);
  if (!wider(a.method, b.method) || !wider(a.authority, b.authority)) return false;
  return [
    [a.headers, b.headers],
    [a.queryParams, b.queryParams],
    [a.withoutHeaders, b.withoutHeaders],
  ].every(([x, y]) => Object.keys(x).length === Object.keys(y).length && Object.entries(x).every(([k, v]) => k in y && wider(v, y[k])));
}

function exactOrPrefix(m: StringMatch | undefined): string {
  if (m?.exact) return `exact:${m.exact}`;
  if (m?.prefix) return `prefix:${m.prefix}`;
  return '';
}

function conditionMap(map: Record<string, StringMatch> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(map ?? {}).map(([k, v]) => [k, exactOrPrefix(v)]));
}

function unreachable(field: string, rule: string, reason: string): FieldWarning {
  return { field, message: `rule ${rule} not used (${reason})`, type: 'unreachable-rule', args: [rule, reason] };
}

function ineffective(field: string, rule: string, match: string, earlier: string): FieldWarning {
  return { field, message: `rule ${rule} match ${match} is not used (duplicate/overlapping match in rule ${earlier})`, type: 'ineffective-match', args: [rule, match, earlier] };
}

const quoted = (s: string) => JSON.stringify(s);
const numbered = (_: unknown, i: number) => `#${i}`;
const httpRouteName = (r: HTTPRoute, i: number) => (r.name ? quoted(r.name) : `#${i}`);
const httpMatchName = (m: HTTPMatchRequest, i: number) => (m.name ? quoted(m.name) : `#${i}`);

/** A match's routing conditions: its name only labels it. */
function withoutName(m: HTTPMatchRequest): unknown {
  const { name: _name, ...conditions } = m;
  return conditions;
}

/** JSON with object keys sorted, so two matches written in a different key order compare equal. */
function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );
}
