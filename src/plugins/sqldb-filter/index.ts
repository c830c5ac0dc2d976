import { EnvoyFilter, FilterChainContext, NetworkFilterContributor } from '../../modules/model/generator';
import { meshPlugin } from '../../modules/plugins/decorator';
import { typeUrlOf } from '../../modules/envoy/type-urls';

export const MYSQL_PROXY_FILTER = 'envoy.filters.network.mysql_proxy';
export const MYSQL_PROXY_TYPE = typeUrlOf('envoy.extensions.filters.network.mysql_proxy.v3.MySQLProxy');

/**
 * Envoy's MySQL proxy (a contrib filter: it needs a contrib Envoy build) before `tcp_proxy` on
 * chains of MYSQL ports, inbound and outbound, with the chain's cluster as stat prefix.
 */
@meshPlugin({
  name: 'sqldb-filter',
  enabledBy: 'PILOT_ENABLE_SQLDB_FILTER',
  provides: [NetworkFilterContributor],
  description: 'envoy.filters.network.mysql_proxy before tcp_proxy on MYSQL ports',
})
export class SqlDbFilterPlugin implements NetworkFilterContributor {
  networkFilters(context: FilterChainContext, cluster: string): { before?: EnvoyFilter[] } {
    if (context.port.protocol !== 'MYSQL') return {};
    return { before: [{ name: MYSQL_PROXY_FILTER, typed_config: { '@type': MYSQL_PROXY_TYPE, stat_prefix: cluster } }] };
  }
}
