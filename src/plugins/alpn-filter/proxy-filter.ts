import { meshPlugin } from '../../modules/plugins/decorator';
import { ProxyHttpFilterFactory } from '../../modules/proxy/contributions';
import { HttpFilter, passRequest } from '../../modules/proxy/http/filter-api';
import { ALPN_FILTER_TYPE } from './protos';

/**
 * The built-in proxy's side of `mesh.alpn`: the config is accepted and nothing is done per
 * request. The filter overrides the ALPN offered upstream; this proxy speaks HTTP/1.1 upstream
 * with the ALPN of the cluster's TLS context, and its peers do not sniff protocols by ALPN.
 */
@meshPlugin({ name: 'alpn-filter', enabledBy: 'PILOT_ENABLE_ALPN_FILTER', provides: [ProxyHttpFilterFactory] })
export class AlpnFilterProxyFilter implements ProxyHttpFilterFactory {
  readonly typeUrl = ALPN_FILTER_TYPE;

  create(name: string): HttpFilter {
    return { name, onRequest: passRequest };
  }
}
