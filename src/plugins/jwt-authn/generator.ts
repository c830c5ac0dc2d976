import { inject } from 'inversify';
import { EnvoyFilter, FilterChainContext, HttpFilterContributor } from '../../modules/model/generator';
import { meshPlugin } from '../../modules/plugins/decorator';
import { DaemonKeySets } from '../../modules/security/authn';

/**
 * The daemon's part of jwt-authn: the `jwt_authn` filter of inbound HTTP chains of workloads
 * selected by RequestAuthentication policies, with the key sets the daemon fetched inlined.
 * Phase `authn`: before the RBAC filters, which match the payload it verifies.
 */
@meshPlugin({
  name: 'jwt-authn',
  enabledBy: 'MESH_ENABLE_JWT_AUTHN_FILTER',
  phase: 'authn',
  provides: [HttpFilterContributor],
  description: 'envoy.filters.http.jwt_authn on inbound HTTP from RequestAuthentication (key sets fetched by the daemon inlined)',
})
export class JwtAuthnFilterPlugin implements HttpFilterContributor {
  constructor(@inject(DaemonKeySets) private readonly keySets: DaemonKeySets) {}

  httpFilters(context: FilterChainContext): EnvoyFilter[] {
    return this.keySets.filters.httpFilters(context);
  }
}
