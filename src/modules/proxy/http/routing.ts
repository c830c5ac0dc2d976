/**
 * Route selection as Envoy's router does it: the virtual host whose domains match the
 * request's authority (exact, then longest `*.suffix`, then longest `prefix*`, then `*`),
 * then its first route whose match holds.
 */
import type { Decoded } from '../xds/ads-client';

export interface RouteRequest {
  method: string;
  /** Path with query. */
  path: string;
  headers: Record<string, string>;
}

export interface SelectedRoute {
  virtualHost: Decoded;
  route: Decoded;
}

export function selectVirtualHost(config: Decoded, authority: string): Decoded | undefined {
  const host = authority.toLowerCase();
  const hostNoPort = stripPort(host);
  let best: { vh: Decoded; rank: number; length: number } | undefined;
  for (const vh of (config.virtual_hosts ?? []) as Decoded[]) {
    for (const raw of (vh.domains ?? []) as string[]) {
      const domain = raw.toLowerCase();
      const rank = domainRank(domain, host, hostNoPort);
      if (rank === undefined) continue;
      if (!best || rank < best.rank || (rank === best.rank && domain.length > best.length)) best = { vh, rank, length: domain.length };
    }
  }
  return best?.vh;
}

/** 0 exact, 1 suffix wildcard, 2 prefix wildcard, 3 `*`; undefined: no match. */
function domainRank(domain: string, host: string, hostNoPort: string): number | undefined {
  if (domain === '*') return 3;
  if (domain === host || domain === hostNoPort) return 0;
  if (domain.startsWith('*') && (host.endsWith(domain.slice(1)) || hostNoPort.endsWith(domain.slice(1))) && host.length > domain.length - 1) return 1;
  if (domain.endsWith('*') && host.startsWith(domain.slice(0, -1))) return 2;
  return undefined;
}

function stripPort(host: string): string {
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const colon = host.lastIndexOf(':');
  return colon > 0 && /^\d+$/.test(host.slice(colon + 1)) ? host.slice(0, colon) : host;
}

export function selectRoute(config: Decoded, request: RouteRequest): SelectedRoute | undefined {
  const virtualHost = selectVirtualHost(config, request.headers[':authority'] ?? request.headers.host ?? '');
  if (!virtualHost) return undefined;
  const route = ((virtualHost.routes ?? []) as Decoded[]).find((r) => routeMatches(r.match ?? {}, request));
  return route ? { virtualHost, route } : undefined;
}

export function routeMatches(match: Decoded, request: RouteRequest): boolean {
  const queryAt = request.path.indexOf('?');
  const path = queryAt >= 0 ? request.path.slice(0, queryAt) : request.path;
  const caseSensitive = match.case_sensitive?.value !== false;
  const cmp = (s: string) => (caseSensitive ? s : s.toLowerCase());
  if (match.prefix !== undefined) {
    if (!cmp(path).startsWith(cmp(String(match.prefix)))) return false;
  } else if (match.path !== undefined) {
    if (cmp(path) !== cmp(String(match.path))) return false;
  } else if (match.safe_regex !== undefined) {
    if (!fullMatch(String(match.safe_regex.regex), path)) return false;
  } else if (match.path_separated_prefix !== undefined) {
    const p = String(match.path_separated_prefix);
    if (!(cmp(path) === cmp(p) || cmp(path).startsWith(cmp(p) + '/'))) return false;
  } else if (match.connect_matcher !== undefined) {
    if (request.method !== 'CONNECT') return false;
  } else {
    throw new Error('route match has no path specifier the built-in proxy knows');
  }
  for (const h of (match.headers ?? []) as Decoded[]) if (!headerMatches(h, request.headers)) return false;
  if (match.query_parameters?.length) {
    const query = new URLSearchParams(queryAt >= 0 ? request.path.slice(queryAt + 1) : '');
    for (const q of match.query_parameters as Decoded[]) {
      const value = query.get(String(q.name));
      if (q.present_match) {
        if (value === null) return false;
      } else if (value === null || (q.string_match && !stringMatches(q.string_match, value))) return false;
    }
  }
  return true;
}

/** Envoy's route HeaderMatcher (the RBAC filter has its own copy of the rules it needs). */
export function headerMatches(h: Decoded, headers: Record<string, string>): boolean {
  const value = headers[String(h.name).toLowerCase()];
  let result: boolean;
  if (h.present_match !== undefined) result = (value !== undefined) === (h.present_match !== false);
  else if (value === undefined) return h.treat_missing_header_as_empty ? matchValue(h, '') !== h.invert_match : false;
  else result = matchValue(h, value);
  return h.invert_match ? !result : result;
}

function matchValue(h: Decoded, value: string): boolean {
  if (h.string_match) return stringMatches(h.string_match, value);
  if (h.exact_match !== undefined) return value === h.exact_match;
  if (h.prefix_match !== undefined) return value.startsWith(h.prefix_match);
  if (h.suffix_match !== undefined) return value.endsWith(h.suffix_match);
  if (h.contains_match !== undefined) return value.includes(h.contains_match);
  if (h.safe_regex_match) return fullMatch(h.safe_regex_match.regex, value);
  if (h.range_match) {
    const n = Number(value);
    return Number.isInteger(n) && n >= Number(h.range_match.start) && n < Number(h.range_match.end);
  }
  return true;
}

export function stringMatches(m: Decoded, value: string): boolean {
  const ic = Boolean(m.ignore_case);
  const v = ic ? value.toLowerCase() : value;
  const s = (x: unknown) => (ic ? String(x).toLowerCase() : String(x));
  if (m.exact !== undefined) return v === s(m.exact);
  if (m.prefix !== undefined) return v.startsWith(s(m.prefix));
  if (m.suffix !== undefined) return v.endsWith(s(m.suffix));
  if (m.contains !== undefined) return v.includes(s(m.contains));
  if (m.safe_regex) return fullMatch(m.safe_regex.regex, value);
  return false;
}

const regexCache = new Map<string, RegExp>();

/** RE2 `safe_regex` must match the whole value. */
export function fullMatch(regex: string, value: string): boolean {
  let re = regexCache.get(regex);
  if (!re) {
    re = new RegExp(`^(?:${regex})$`);
    regexCache.set(regex, re);
  }
  return re.test(value);
}
