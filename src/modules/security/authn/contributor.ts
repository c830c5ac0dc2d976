import { RequestAuthenticationSpec } from '../../config/kinds/request-authentication';
import { EnvoyFilter, FilterChainContext, HttpFilterContributor } from '../../model/generator';
import { Proxy } from '../../model/proxy';
import { PushContext } from '../../model/push-context';
import { policiesFor } from '../selection';
import { JwksFetchMode } from './fetch-mode';
import { KeySetProvider } from './jwks-resolver';
import { jwtAuthnFilter, ResolvedRule } from './jwt-filter';
import { jwksSourceOf, meshLookup } from './key-source';

export interface RequestAuthenticationFiltersOptions {
  /** PILOT_JWT_ENABLE_REMOTE_JWKS. */
  mode: JwksFetchMode;
  /** Key sets the daemon fetches (the JwksResolver). */
  keySets: KeySetProvider;
}

/**
 * The jwt_authn filter of inbound HTTP chains of workloads selected by RequestAuthentication
 * policies (all of them merged, as the incumbent does). No policy, or policies without rules:
 * no filter. Outbound chains get nothing. Must come before any filter that reads the verified
 * payload (RBAC).
 */
export class RequestAuthenticationFilters implements HttpFilterContributor {
  constructor(private readonly options: RequestAuthenticationFiltersOptions) {}

  httpFilters(context: FilterChainContext): EnvoyFilter[] {
    if (context.direction !== 'inbound') return [];
    const { push, proxy } = context;
    // Selection depends on the namespace and labels only; inlined keys on the resolver's version.
    const labels = JSON.stringify(Object.keys(proxy.labels).sort().map((k) => [k, proxy.labels[k]]));
    const key = `authn/jwt_authn/${this.options.keySets.version}/${proxy.namespace}/${labels}`;
    const filter = push.memoize(key, () => this.build(push, proxy) ?? null);
    return filter ? [filter] : [];
  }

  private build(push: PushContext, proxy: Pick<Proxy, 'namespace' | 'labels'>): EnvoyFilter | undefined {
    const rules = policiesFor<RequestAuthenticationSpec>(push, proxy, 'RequestAuthentication').flatMap((p) => p.spec.jwtRules ?? []);
    // By issuer, as the incumbent orders providers; a stable sort keeps policy order among equals.
    rules.sort((a, b) => cmp(a.issuer ?? '', b.issuer ?? ''));
    const inMesh = meshLookup((host) => push.service(host));
    const resolved = rules.map((rule): ResolvedRule => {
      const source = jwksSourceOf(rule, this.options.mode, inMesh);
      return source.kind === 'daemon' ? { rule, source, keySet: this.options.keySets.keySet(source.location) } : { rule, source };
    });
    return jwtAuthnFilter(resolved);
  }
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
