import { EnvoyFilter, FilterChainContext, NetworkFilterContributor } from '../../modules/model/generator';
import { meshPlugin } from '../../modules/plugins/decorator';
import { typeUrlOf } from '../../modules/envoy/type-urls';

export const MONGO_PROXY_FILTER = 'envoy.filters.network.mongo_proxy';
export const MONGO_PROXY_TYPE = typeUrlOf('envoy.extensions.filters.network.mongo_proxy.v3.MongoProxy');

/** Envoy's Mongo proxy before `tcp_proxy` on chains of MONGO ports, inbound and outbound, with the chain's cluster as stat prefix. */
@meshPlugin({
  name: 'docdb-filter',
  enabledBy: 'PILOT_ENABLE_DOCDB_FILTER',
  provides: [NetworkFilterContributor],
  description: 'envoy.filters.network.mongo_proxy before tcp_proxy on MONGO ports',
})
export class DocDbFilterPlugin implements NetworkFilterContributor {
  networkFilters(context: FilterChainContext, cluster: string): { before?: EnvoyFilter[] } {
    if (context.port.protocol !== 'MONGO') return {};
    return { before: [{ name: MONGO_PROXY_FILTER, typed_config: { '@type': MONGO_PROXY_TYPE, stat_prefix: cluster } }] };
  }
}
