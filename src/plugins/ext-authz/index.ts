import { EXT_AUTHZ_HTTP_TYPE } from '../../modules/envoy/well-known';
import { meshPlugin } from '../../modules/plugins/decorator';
import { ProxyHttpFilterFactory } from '../../modules/proxy/contributions';
import type { FilterContext, HttpFilter } from '../../modules/proxy/http/filter-api';
import { ExtAuthzHttpFilter, parseExtAuthzConfig } from './http-filter';

/**
 * The built-in proxy's `envoy.filters.http.ext_authz`: the external authorization the daemon
 * generates for CUSTOM AuthorizationPolicies (with the rbac plugin's shadow RBAC filter before
 * it), checked against an HTTP or gRPC authorization server. Without this plugin the built-in
 * proxy refuses listeners that carry ext_authz (fails closed). The network ext_authz (gRPC
 * servers on TCP ports) is not run by the built-in proxy: such listeners are refused too.
 */
@meshPlugin({
  name: 'ext-authz',
  enabledBy: 'MESH_ENABLE_EXT_AUTHZ_FILTER',
  provides: [ProxyHttpFilterFactory],
  phase: 'authz',
  description: 'envoy.filters.http.ext_authz in the built-in proxy: CUSTOM AuthorizationPolicy checks against an HTTP or gRPC authorization server',
})
export class ExtAuthzProxyHttpFilter implements ProxyHttpFilterFactory {
  readonly typeUrl = EXT_AUTHZ_HTTP_TYPE;

  create(name: string, config: Record<string, unknown>, context: FilterContext): HttpFilter {
    return new ExtAuthzHttpFilter(name, parseExtAuthzConfig(config, name), context);
  }
}
