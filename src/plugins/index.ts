import { PluginClass } from '../modules/plugins/decorator';
import { AlpnFilterPlugin, AlpnFilterProtos, AlpnFilterProxyFilter } from './alpn-filter';
import { DocDbFilterPlugin } from './docdb-filter';
import { EndpointTelemetryLabelsPlugin } from './endpoint-telemetry-labels';
import { ExtAuthzProxyHttpFilter } from './ext-authz';
import { Http10Plugin } from './http10';
import { JwtAuthnFilterPlugin, JwtAuthnProxyFilter } from './jwt-authn';
import { KvStoreFilterPlugin } from './kvstore-filter';
import {
  MetadataExchangeAlpn,
  MetadataExchangeHttpPlugin,
  MetadataExchangePlugin,
  MetadataExchangeProtos,
  MetadataExchangeProxyHttpFilter,
  MetadataExchangeProxyNetworkFilter,
} from './metadata-exchange';
import { RbacHttpFilterPlugin, RbacNetworkFilterPlugin, RbacProxyHttpFilter, RbacProxyNetworkFilter } from './rbac';
import { SidecarUseRemoteAddressPlugin } from './sidecar-use-remote-address';
import { SqlDbFilterPlugin } from './sqldb-filter';
import { TelemetryLabelsPlugin } from './telemetry-labels';

/**
 * The mesh's own feature plugins (one folder each under src/plugins/), bound like
 * third-party ones: only when their `enabledBy` setting is on. A chain's order comes from the
 * plugins' phases (metadata exchange `first` on TCP chains, jwt-authn `authn`, rbac and ext-authz `authz` on
 * HTTP and `last` on TCP); within a phase, from this list. A plugin's parts (daemon generator,
 * built-in proxy filter, protos) sit together; each is bound only to the points it provides.
 */
export const BUILT_IN_PLUGINS: PluginClass[] = [
  MetadataExchangePlugin,
  MetadataExchangeHttpPlugin,
  MetadataExchangeAlpn,
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
  JwtAuthnFilterPlugin,
  JwtAuthnProxyFilter,
  RbacHttpFilterPlugin,
  RbacNetworkFilterPlugin,
  RbacProxyHttpFilter,
  RbacProxyNetworkFilter,
  ExtAuthzProxyHttpFilter,
];
