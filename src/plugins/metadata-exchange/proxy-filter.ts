import { meshPlugin } from '../../modules/plugins/decorator';
import { ProxyHttpFilterFactory, ProxyNetworkFilterFactory } from '../../modules/proxy/contributions';
import { HttpFilter, NetworkFilter, passRequest } from '../../modules/proxy/http/filter-api';
import { METADATA_EXCHANGE_TYPE } from './protos';

/**
 * The built-in proxy's side of metadata exchange: it accepts the filters so the listeners that
 * carry them are not NACKed, and lets traffic through. The exchange itself feeds peer telemetry,
 * which this proxy does not do.
 */
@meshPlugin({ name: 'metadata-exchange', enabledBy: 'PILOT_ENABLE_METADATA_EXCHANGE', provides: [ProxyHttpFilterFactory] })
export class MetadataExchangeProxyHttpFilter implements ProxyHttpFilterFactory {
  readonly typeUrl = METADATA_EXCHANGE_TYPE;

  create(name: string): HttpFilter {
    return { name, onRequest: passRequest };
  }
}

/** The network filter of TCP chains: accepted, every connection goes on (see above). */
@meshPlugin({ name: 'metadata-exchange', enabledBy: 'PILOT_ENABLE_METADATA_EXCHANGE', provides: [ProxyNetworkFilterFactory] })
export class MetadataExchangeProxyNetworkFilter implements ProxyNetworkFilterFactory {
  readonly typeUrl = METADATA_EXCHANGE_TYPE;

  create(name: string): NetworkFilter {
    return { name, onConnection: () => 'continue' };
  }
}
