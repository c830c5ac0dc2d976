/** Network and HTTP filters of the sidecar's listeners. */
import { EnvoyFilter, FilterChainContext } from '../../model/generator';
import { ADS_CONFIG_SOURCE, CORS_FILTER, FAULT_FILTER } from '../common';
import { SidecarContext } from './options';
import { CORS_TYPE, FAULT_TYPE, HCM_FILTER, HCM_TYPE, ROUTER_FILTER, ROUTER_TYPE, TCP_PROXY_FILTER, TCP_PROXY_TYPE } from '../../envoy/well-known';
export { CORS_TYPE, FAULT_TYPE, HCM_FILTER, HCM_TYPE, ORIGINAL_DST_FILTER, ORIGINAL_DST_TYPE, ROUTER_FILTER, ROUTER_TYPE, TCP_PROXY_FILTER, TCP_PROXY_TYPE } from '../../envoy/well-known';


export function router(): EnvoyFilter {
  return { name: ROUTER_FILTER, typed_config: { '@type': ROUTER_TYPE } };
}

/** `tcp_proxy` to one cluster, or split by weight over several. */
export function tcpProxy(statPrefix: string, target: string | { name: string; weight: number }[]): EnvoyFilter {
  const where = typeof target === 'string' ? { cluster: target } : { weighted_clusters: { clusters: target } };
  return { name: TCP_PROXY_FILTER, typed_config: { '@type': TCP_PROXY_TYPE, stat_prefix: statPrefix, ...where } };
}

/**
 * The filters of a TCP chain: every NetworkFilterContributor's `before` filters in order, then
 * the first contributed terminal filter, else `tcp_proxy`.
 */
export function tcpChainFilters(ctx: SidecarContext, chain: FilterChainContext, cluster: string, proxyFilter: EnvoyFilter): EnvoyFilter[] {
  const before: EnvoyFilter[] = [];
  let terminal: EnvoyFilter | undefined;
  for (const c of ctx.networkFilters) {
    const r = c.networkFilters(chain, cluster);
    before.push(...(r.before ?? []));
    if (!terminal && r.terminal) terminal = r.terminal;
  }
  return [...before, terminal ?? proxyFilter];
}

/** Lets every HttpConnectionManagerContributor adjust the connection manager's config. */
function withContributions(ctx: SidecarContext, chain: FilterChainContext, hcm: EnvoyFilter): EnvoyFilter {
  for (const c of ctx.connectionManagers) c.patchConnectionManager(hcm.typed_config, chain);
  return hcm;
}

function contributedHttpFilters(ctx: SidecarContext, chain: FilterChainContext): EnvoyFilter[] {
  return ctx.httpFilters.flatMap((c) => c.httpFilters(chain));
}

/**
 * Outbound HTTP connection manager: routes from RDS `routeName`; HTTP filters are the
 * contributed ones, then CORS (optional: a client without it ignores it), fault, router.
 */
export function outboundHcm(ctx: SidecarContext, chain: FilterChainContext, statPrefix: string, routeName: string): EnvoyFilter {
  return withContributions(ctx, chain, {
    name: HCM_FILTER,
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: statPrefix,
      ...ctx.pathNormalizationFields,
      rds: { config_source: { ...ADS_CONFIG_SOURCE }, route_config_name: routeName },
      http_filters: [
        ...contributedHttpFilters(ctx, chain),
        { name: CORS_FILTER, typed_config: { '@type': CORS_TYPE }, is_optional: true },
        { name: FAULT_FILTER, typed_config: { '@type': FAULT_TYPE } },
        router(),
      ],
      upgrade_configs: [{ upgrade_type: 'websocket' }],
    },
  });
}

/** Inbound HTTP connection manager: one inline route sending everything to the inbound cluster. */
export function inboundHcm(ctx: SidecarContext, chain: FilterChainContext, statPrefix: string, cluster: string): EnvoyFilter {
  return withContributions(ctx, chain, {
    name: HCM_FILTER,
    typed_config: {
      '@type': HCM_TYPE,
      stat_prefix: statPrefix,
      ...ctx.pathNormalizationFields,
      route_config: {
        name: cluster,
        validate_clusters: { value: false },
        virtual_hosts: [
          {
            name: `inbound|http|${chain.port.number}`,
            domains: ['*'],
            routes: [{ name: 'default', match: { prefix: '/' }, route: { cluster, timeout: { seconds: 0 } } }],
          },
        ],
      },
      http_filters: [...contributedHttpFilters(ctx, chain), router()],
      upgrade_configs: [{ upgrade_type: 'websocket' }],
    },
  });
}
