import { PluginClass } from '../modules/plugins/decorator';
import { AlpnFilterPlugin } from './alpn-filter';
import { DocDbFilterPlugin } from './docdb-filter';
import { EndpointTelemetryLabelsPlugin } from './endpoint-telemetry-labels';
import { Http10Plugin } from './http10';
import { KvStoreFilterPlugin } from './kvstore-filter';
import { MetadataExchangePlugin } from './metadata-exchange';
import { SidecarUseRemoteAddressPlugin } from './sidecar-use-remote-address';
import { SqlDbFilterPlugin } from './sqldb-filter';
import { TelemetryLabelsPlugin } from './telemetry-labels';

/**
 * The mesh's own feature plugins (one folder each under src/plugins/), bound like
 * third-party ones: only when their `enabledBy` setting is on. The order is the order of
 * their contributions: metadata exchange comes first in a chain, as with the incumbent.
 */
export const BUILT_IN_PLUGINS: PluginClass[] = [
  MetadataExchangePlugin,
  AlpnFilterPlugin,
  SqlDbFilterPlugin,
  DocDbFilterPlugin,
  KvStoreFilterPlugin,
  TelemetryLabelsPlugin,
  EndpointTelemetryLabelsPlugin,
  Http10Plugin,
  SidecarUseRemoteAddressPlugin,
];
