import { EndpointContributor } from '../../model/generator';
import { ServiceEndpoint } from '../../registry/model';
import { jsonToStruct } from '../../envoy/struct';
import { TRANSPORT_SOCKET_MATCH_KEY } from './cluster-tls';
import { DISABLED_TLS_MODE, endpointTlsMode } from './identity';

/**
 * `metadata.filter_metadata['envoy.transport_socket_match'] = { tlsMode }` on the EDS endpoints
 * of workloads labelled with a TLS mode (other than `disabled`): what the `tlsMode-mesh`
 * transport socket match of auto mTLS clusters selects.
 */
export class TlsModeEndpointMetadata implements EndpointContributor {
  patchEndpoint(lbEndpoint: Record<string, unknown>, endpoint: ServiceEndpoint): void {
    const mode = endpointTlsMode(endpoint.labels);
    if (mode === DISABLED_TLS_MODE) return;
    const metadata = (lbEndpoint.metadata ??= {}) as Record<string, unknown>;
    const filterMetadata = (metadata.filter_metadata ??= {}) as Record<string, unknown>;
    filterMetadata[TRANSPORT_SOCKET_MATCH_KEY] = jsonToStruct({ tlsMode: mode });
  }
}
