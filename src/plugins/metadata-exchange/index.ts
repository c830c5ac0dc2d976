import { inject } from 'inversify';
import { EnvoyFilter, FilterChainContext, HttpFilterContributor, NetworkFilterContributor } from '../../modules/model/generator';
import { meshPlugin } from '../../modules/plugins/decorator';
import { isHttpProtocol } from '../../modules/registry/model';
import { MeshTlsAlpnContributor } from '../../modules/security/mtls/alpn';
import { Settings, SettingsToken } from '../../modules/settings/settings';
import { METADATA_EXCHANGE_TYPE } from './protos';

export { METADATA_EXCHANGE_TYPE, MetadataExchangeProtos } from './protos';
export { MetadataExchangeProxyHttpFilter, MetadataExchangeProxyNetworkFilter } from './proxy-filter';
export const METADATA_EXCHANGE_FILTER = 'mesh.metadata_exchange';
/** The ALPN protocol that announces the exchange. */
export const METADATA_EXCHANGE_PROTOCOL = 'mesh-peer-exchange';

/** PILOT_MX_ADDITIONAL_LABELS: comma separated, trimmed, empty entries dropped. */
export function additionalLabels(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** The filters' config: the exchange protocol, and the extra labels of PILOT_MX_ADDITIONAL_LABELS. */
function exchangeConfig(labels: readonly string[]): EnvoyFilter['typed_config'] {
  const config: EnvoyFilter['typed_config'] = { '@type': METADATA_EXCHANGE_TYPE, protocol: METADATA_EXCHANGE_PROTOCOL };
  if (labels.length > 0) config.additional_labels = [...labels];
  return config;
}

const NAME = 'metadata-exchange';
const ENABLED_BY = 'PILOT_ENABLE_METADATA_EXCHANGE';

/**
 * Peers swap workload metadata in-band: the `mesh.metadata_exchange` network filter first on
 * every TCP (non-HTTP) chain, inbound and outbound (phase `first`).
 */
@meshPlugin({
  name: NAME,
  enabledBy: ENABLED_BY,
  phase: 'first',
  provides: [NetworkFilterContributor],
  description: 'mesh.metadata_exchange filters (protocol mesh-peer-exchange) on TCP chains and HTTP connection managers',
})
export class MetadataExchangePlugin implements NetworkFilterContributor {
  private readonly labels: readonly string[];

  constructor(@inject(SettingsToken) settings: Settings) {
    this.labels = additionalLabels(settings.string('PILOT_MX_ADDITIONAL_LABELS'));
  }

  networkFilters(context: FilterChainContext): { before?: EnvoyFilter[] } {
    if (isHttpProtocol(context.port.protocol)) return {};
    return { before: [{ name: METADATA_EXCHANGE_FILTER, typed_config: exchangeConfig(this.labels) }] };
  }
}

/**
 * The HTTP filter of the same name in every HTTP connection manager, optional (a proxy without
 * it ignores it). Phase `default`, first of the plugins' filters: jwt_authn and RBAC stay ahead
 * of it, as they always were in the generated chains.
 */
@meshPlugin({ name: NAME, enabledBy: ENABLED_BY, provides: [HttpFilterContributor] })
export class MetadataExchangeHttpPlugin implements HttpFilterContributor {
  private readonly labels: readonly string[];

  constructor(@inject(SettingsToken) settings: Settings) {
    this.labels = additionalLabels(settings.string('PILOT_MX_ADDITIONAL_LABELS'));
  }

  httpFilters(): EnvoyFilter[] {
    const filter: EnvoyFilter & { is_optional: boolean } = { name: METADATA_EXCHANGE_FILTER, typed_config: exchangeConfig(this.labels), is_optional: true };
    return [filter];
  }
}

/**
 * Offers `mesh-peer-exchange` first on mesh mTLS, so a peer knows to expect the exchange;
 * PILOT_DISABLE_MX_ALPN keeps the filters but stops offering it.
 */
@meshPlugin({ name: NAME, enabledBy: ENABLED_BY, provides: [MeshTlsAlpnContributor] })
export class MetadataExchangeAlpn implements MeshTlsAlpnContributor {
  readonly meshTlsAlpns: readonly string[];

  constructor(@inject(SettingsToken) settings: Settings) {
    this.meshTlsAlpns = settings.bool('PILOT_DISABLE_MX_ALPN') ? [] : [METADATA_EXCHANGE_PROTOCOL];
  }
}
