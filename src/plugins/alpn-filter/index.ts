import { EnvoyFilter, FilterChainContext, HttpFilterContributor } from '../../modules/model/generator';
import { meshPlugin } from '../../modules/plugins/decorator';
import { ALPN_FILTER_TYPE } from './protos';

export { ALPN_FILTER_TYPE, AlpnFilterProtos } from './protos';
export { AlpnFilterProxyFilter } from './proxy-filter';
export const ALPN_FILTER = 'mesh.alpn';

/**
 * The ALPN each upstream protocol is offered with: the mesh's own value first (the peer's
 * inbound side tells mesh traffic and its protocol apart by it), then `mesh` for older peers,
 * then the plain value so traffic leaving the mesh still has a valid ALPN (as the incumbent).
 */
export const ALPN_OVERRIDES = [
  { upstream_protocol: 'HTTP10', alpn_override: ['mesh-http/1.0', 'mesh', 'http/1.0'] },
  { upstream_protocol: 'HTTP11', alpn_override: ['mesh-http/1.1', 'mesh', 'http/1.1'] },
  { upstream_protocol: 'HTTP2', alpn_override: ['mesh-h2', 'mesh', 'h2'] },
];

/**
 * `mesh.alpn` on outbound HTTP connection managers, before the router: overrides the upstream
 * ALPN by protocol. Optional, so a proxy without the filter accepts the listener and ignores it.
 */
@meshPlugin({
  name: 'alpn-filter',
  enabledBy: 'PILOT_ENABLE_ALPN_FILTER',
  provides: [HttpFilterContributor],
  description: 'mesh.alpn HTTP filter on outbound HTTP: upstream ALPN by protocol (mesh-http/1.0, mesh-http/1.1, mesh-h2)',
})
export class AlpnFilterPlugin implements HttpFilterContributor {
  httpFilters(context: FilterChainContext): EnvoyFilter[] {
    if (context.direction !== 'outbound') return [];
    const filter: EnvoyFilter & { is_optional: boolean } = {
      name: ALPN_FILTER,
      typed_config: { '@type': ALPN_FILTER_TYPE, alpn_override: ALPN_OVERRIDES.map((o) => ({ ...o, alpn_override: [...o.alpn_override] })) },
      is_optional: true,
    };
    return [filter];
  }
}
