/**
 * Where the keys of one JWT rule come from: inline in the rule, fetched by the proxy
 * (`remote_jwks`), or fetched by the daemon and inlined (`local_jwks`). One decision, used both
 * by the filter generator and by the daemon when it works out which key sets to fetch.
 */
import { JwtRule, RequestAuthenticationSpec } from '../../config/kinds/request-authentication';
import { ConfigResource, resourceKey } from '../../config/resource';
import { outboundClusterName } from '../../model/naming';
import { Duration } from '../../settings/duration';
import { JwksFetchMode } from './fetch-mode';

/** The incumbent's default for fetching a key set when the rule gives no `timeout`. */
export const DEFAULT_JWKS_TIMEOUT = Duration.parse('5s');

/** A key set the daemon fetches: from `jwksUri`, or found through the issuer's OpenID discovery document. */
export interface KeySetLocation {
  jwksUri?: string;
  issuer?: string;
  timeoutMs: number;
}

export type JwksSource =
  | { kind: 'inline'; jwks: string }
  | { kind: 'remote'; uri: string; cluster: string; timeout: Duration }
  | { kind: 'daemon'; location: KeySetLocation };

/** Whether `host:port` is a port of a service of the mesh (so proxies have its outbound cluster). */
export type MeshLookup = (host: string, port: number) => boolean;

export function ruleTimeout(rule: JwtRule): Duration {
  return rule.timeout ? Duration.parse(rule.timeout) : DEFAULT_JWKS_TIMEOUT;
}

/** Host and port of a `jwksUri` (port defaulted by scheme), or undefined when it is not an http(s) URL. */
export function jwksUriTarget(uri: string): { host: string; port: number } | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return { host, port };
}

export function jwksSourceOf(rule: JwtRule, mode: JwksFetchMode, inMesh: MeshLookup): JwksSource {
  // A key set written in the rule is used as is, whatever the mode.
  if (rule.jwks) return { kind: 'inline', jwks: rule.jwks };
  const timeout = ruleTimeout(rule);
  const daemon: JwksSource = { kind: 'daemon', location: { jwksUri: rule.jwksUri, issuer: rule.issuer, timeoutMs: timeout.milliseconds } };
  // Without jwksUri only the daemon can find the keys (OpenID discovery), in every mode, as the incumbent does.
  if (mode === 'meshd' || !rule.jwksUri) return daemon;
  const target = jwksUriTarget(rule.jwksUri);
  if (!target) return daemon;
  const cluster = outboundClusterName(target.port, '', target.host);
  if (inMesh(target.host, target.port)) return { kind: 'remote', uri: rule.jwksUri, cluster, timeout };
  if (mode === 'hybrid') return daemon;
  // `proxy` mode, server outside the mesh: Envoy needs a cluster of this name, which exists once
  // a ServiceEntry declares the host (the incumbent names it the same way); the built-in proxy
  // fetches `http_uri.uri` directly and ignores the cluster.
  return { kind: 'remote', uri: rule.jwksUri, cluster, timeout };
}

/** Identity of a key set the daemon fetches: the same jwksUri (or the same issuer, discovered) is fetched once. */
export function keySetId(location: Pick<KeySetLocation, 'jwksUri' | 'issuer'>): string {
  return location.jwksUri ? `jwks ${location.jwksUri}` : `openid ${location.issuer ?? ''}`;
}

/**
 * The key sets the daemon must fetch for `policies` (every RequestAuthentication of the push,
 * selected by some workload or not), one per identity, with the longest timeout asked for.
 */
export function daemonFetchedKeySets(policies: readonly ConfigResource<RequestAuthenticationSpec>[], mode: JwksFetchMode, inMesh: MeshLookup): KeySetLocation[] {
  const byId = new Map<string, KeySetLocation>();
  for (const policy of policies) {
    for (const rule of policy.spec.jwtRules ?? []) {
      const source = jwksSourceOf(rule, mode, inMesh);
      if (source.kind !== 'daemon') continue;
      const id = keySetId(source.location);
      const known = byId.get(id);
      if (!known || known.timeoutMs < source.location.timeoutMs) byId.set(id, source.location);
    }
  }
  return [...byId.values()];
}

/** `Kind/namespace/name` of the policies with a rule whose daemon-fetched key set is one of `ids`. */
export function policiesUsingKeySets(policies: readonly ConfigResource<RequestAuthenticationSpec>[], ids: ReadonlySet<string>): string[] {
  return policies
    .filter((p) => (p.spec.jwtRules ?? []).some((rule) => !rule.jwks && ids.has(keySetId(rule))))
    .map(resourceKey);
}

/** A MeshLookup over a service registry: the host is a service and the port one of its ports. */
export function meshLookup(service: (host: string) => { ports: readonly { number: number }[] } | undefined): MeshLookup {
  return (host, port) => service(host)?.ports.some((p) => p.number === port) ?? false;
}
