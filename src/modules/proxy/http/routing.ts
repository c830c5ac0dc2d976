/**
 * Route selection as Envoy's router does it: the virtual host whose domains match the
 * request's authority (exact, then longest `*.suffix`, then longest `prefix*`, then `*`),
 * then its first route whose match holds. A route table is compiled once, when it arrives
 * (RDS) or with its listener (inline), with its routes' `regex_rewrite`s, so a table the proxy
 * cannot run is NACKed and requests only run the compiled predicates.
 */
import { compileRouteMatch, RequestPredicate } from '../filters/matchers/route-match';
import type { Decoded } from '../xds/xds-client';
import { regexRewriteOf } from './regex-rewrite';

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

interface CompiledVirtualHost {
  config: Decoded;
  domains: string[];
  routes: { config: Decoded; matches: RequestPredicate }[];
}

export class RouteTable {
  private readonly virtualHosts: CompiledVirtualHost[];

  /** Throws, naming the field, on a match the proxy cannot evaluate. */
  constructor(readonly config: Decoded) {
    const name = String(config.name ?? '');
    this.virtualHosts = ((config.virtual_hosts ?? []) as Decoded[]).map((vh, v) => ({
      config: vh,
      domains: ((vh.domains ?? []) as string[]).map((d) => d.toLowerCase()),
      routes: ((vh.routes ?? []) as Decoded[]).map((route, r) => {
        const at = `route configuration ${name}: virtual_hosts[${v}].routes[${r}]`;
        if (route.route?.regex_rewrite) regexRewriteOf(route.route, `${at}.route.regex_rewrite`);
        return { config: route, matches: compileRouteMatch(route.match ?? {}, `${at}.match`) };
      }),
    }));
  }

  select(request: RouteRequest): SelectedRoute | undefined {
    const vh = this.virtualHostFor(request.headers[':authority'] ?? request.headers.host ?? '');
    const route = vh?.routes.find((r) => r.matches(request));
    return vh && route ? { virtualHost: vh.config, route: route.config } : undefined;
  }

  private virtualHostFor(authority: string): CompiledVirtualHost | undefined {
    const host = authority.toLowerCase();
    const hostNoPort = stripPort(host);
    let best: { vh: CompiledVirtualHost; rank: number; length: number } | undefined;
    for (const vh of this.virtualHosts) {
      for (const domain of vh.domains) {
        const rank = domainRank(domain, host, hostNoPort);
        if (rank === undefined) continue;
        if (!best || rank < best.rank || (rank === best.rank && domain.length > best.length)) best = { vh, rank, length: domain.length };
      }
    }
    return best?.vh;
  }
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
