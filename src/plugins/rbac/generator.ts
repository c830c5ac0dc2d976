import { inject } from 'inversify';
import { EnvoyFilter, FilterChainContext, HttpFilterContributor, NetworkFilterContributor } from '../../modules/model/generator';
import { meshPlugin } from '../../modules/plugins/decorator';
import { AuthzContributorOptions, AuthzHttpFilterContributor, AuthzNetworkFilterContributor, AuthzOptionsToken } from '../../modules/security/authz';

const NAME = 'rbac';
const ENABLED_BY = 'MESH_ENABLE_RBAC_FILTER';

/**
 * The daemon's HTTP part of rbac: the `envoy.filters.http.rbac` filters (DENY, then ALLOW...) of
 * inbound HTTP connection managers from AuthorizationPolicy. Phase `authz`: after jwt_authn,
 * whose verified payload they match, before every other plugin's filter.
 */
@meshPlugin({
  name: NAME,
  enabledBy: ENABLED_BY,
  phase: 'authz',
  provides: [HttpFilterContributor],
  description: 'envoy.filters.http.rbac and envoy.filters.network.rbac on inbound chains from AuthorizationPolicy',
})
export class RbacHttpFilterPlugin implements HttpFilterContributor {
  private readonly filters: AuthzHttpFilterContributor;

  constructor(@inject(AuthzOptionsToken) options: AuthzContributorOptions) {
    this.filters = new AuthzHttpFilterContributor(options);
  }

  httpFilters(context: FilterChainContext): EnvoyFilter[] {
    return this.filters.httpFilters(context);
  }
}

/**
 * The daemon's network part of rbac: `envoy.filters.network.rbac` on inbound TCP chains. Phase
 * `last`: right before the terminal filter, after the protocol filters have seen the connection.
 */
@meshPlugin({ name: NAME, enabledBy: ENABLED_BY, phase: 'last', provides: [NetworkFilterContributor] })
export class RbacNetworkFilterPlugin implements NetworkFilterContributor {
  private readonly filters: AuthzNetworkFilterContributor;

  constructor(@inject(AuthzOptionsToken) options: AuthzContributorOptions) {
    this.filters = new AuthzNetworkFilterContributor(options);
  }

  networkFilters(context: FilterChainContext): { before?: EnvoyFilter[] } {
    return this.filters.networkFilters(context);
  }
}
