import { PluginClass } from '../modules/plugins/decorator';
import { AlpnFilterPlugin, AlpnFilterProtos, AlpnFilterProxyFilter } from './alpn-filter';
import { DocDbFilterPlugin } from './docdb-filter';
import { EndpointTelemetryLabelsPlugin } from './endpoint-telemetry-labels';
import { Http10Plugin } from './http10';
import { JwtAuthnProxyFilter } from './jwt-authn';
import { KvStoreFilterPlugin } from './kvstore-filter';
import { MetadataExchangePlugin, MetadataExchangeProtos, MetadataExchangeProxyHttpFilter, MetadataExchangeProxyNetworkFilter } from './metadata-exchange';
import { RbacProxyHttpFilter, RbacProxyNetworkFilter } from './rbac';
import { SidecarUseRemoteAddressPlugin } from './sidecar-use-remote-address';
import { SqlDbFilterPlugin } from './sqldb-filter';
import { TelemetryLabelsPlugin } from './telemetry-labels';

/**
 * The mesh's own feature plugins (one folder each under src/plugins/), bound like
 * third-party ones: only when their `enabledBy` setting is on. The order is the order of
 * their contributions within a phase: metadata exchange comes first in a chain, as with the
 * incumbent. A plugin's parts (daemon generator, built-in proxy filter, protos) are listed
 * together; each is bound only to the points it provides.
 */
export const BUILT_IN_PLUGINS: PluginClass[] = [
  MetadataExchangePlugin,
  MetadataExchangeProtos,
  MetadataExchangeProxyHttpFilter,
  MetadataExchangeProxyNetworkFilter,
  AlpnFilterPlugin,
  AlpnFilterProtos,
  AlpnFilterProxyFilter,
  SqlDbFilterPlugin,
  DocDbFilterPlugin,
  KvStoreFilterPlugin,
  TelemetryLabelsPlugin,
  EndpointTelemetryLabelsPlugin,
  Http10Plugin,
  SidecarUseRemoteAddressPlugin,
  JwtAuthnProxyFilter,
  RbacProxyHttpFilter,
  RbacProxyNetworkFilter,
];
