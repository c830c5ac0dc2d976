import { ClusterContributor, EnvoyFilter, FilterChainContext, NetworkFilterContributor } from '../../modules/model/generator';
import { parseClusterName } from '../../modules/model/naming';
import { meshPlugin } from '../../modules/plugins/decorator';
import { ServicePort } from '../../modules/registry/model';
import { typeUrlOf } from '../../modules/envoy/type-urls';

export const REDIS_PROXY_FILTER = 'envoy.filters.network.redis_proxy';
export const REDIS_PROXY_TYPE = typeUrlOf('envoy.extensions.filters.network.redis_proxy.v3.RedisProxy');
/** Per-operation timeout of the Redis connection pool (the incumbent's fixed 5s). */
export const REDIS_OP_TIMEOUT = { seconds: 5 };
/** Cluster.LbPolicy MAGLEV; ORIGINAL_DST clusters keep CLUSTER_PROVIDED. */
const MAGLEV = 5;
const ORIGINAL_DST = 4;

/**
 * Envoy's Redis proxy as the terminal filter (it routes by itself, so it replaces `tcp_proxy`)
 * of outbound chains of REDIS ports: every command to the chain's cluster through the catch-all
 * prefix route. As with the incumbent, outbound REDIS clusters then balance with MAGLEV so the
 * client-side sharding is consistent.
 */
@meshPlugin({
  name: 'kvstore-filter',
  enabledBy: 'PILOT_ENABLE_KVSTORE_FILTER',
  provides: [NetworkFilterContributor, ClusterContributor],
  description: 'envoy.filters.network.redis_proxy replaces tcp_proxy on outbound REDIS ports (MAGLEV clusters)',
})
export class KvStoreFilterPlugin implements NetworkFilterContributor, ClusterContributor {
  networkFilters(context: FilterChainContext, cluster: string): { terminal?: EnvoyFilter } {
    if (context.direction !== 'outbound' || context.port.protocol !== 'REDIS') return {};
    return {
      terminal: {
        name: REDIS_PROXY_FILTER,
        typed_config: {
          '@type': REDIS_PROXY_TYPE,
          stat_prefix: cluster,
          latency_in_micros: true,
          settings: { op_timeout: { ...REDIS_OP_TIMEOUT } },
          prefix_routes: { catch_all_route: { cluster } },
        },
      },
    };
  }

  patchCluster(cluster: Record<string, unknown>, context: { port: ServicePort }): void {
    if (context.port.protocol !== 'REDIS' || parseClusterName(String(cluster.name))?.direction !== 'outbound') return;
    if (cluster.type === ORIGINAL_DST || cluster.type === 'ORIGINAL_DST') return;
    cluster.lb_policy = MAGLEV;
    // A consistent-hash policy's ring settings do not apply to MAGLEV.
    delete cluster.ring_hash_lb_config;
  }
}
