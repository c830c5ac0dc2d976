/**
 * Envoy's well-known extension names and the type URLs of their typed_config, defined once for
 * the daemon's generators, the agent and the built-in proxy.
 */
import { typeUrlOf } from './type-urls';

// Network filters
export const HCM_FILTER = 'envoy.filters.network.http_connection_manager';
export const HCM_TYPE = typeUrlOf('envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager');
export const TCP_PROXY_FILTER = 'envoy.filters.network.tcp_proxy';
export const TCP_PROXY_TYPE = typeUrlOf('envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy');
export const RBAC_NETWORK_FILTER = 'envoy.filters.network.rbac';
export const RBAC_NETWORK_TYPE = typeUrlOf('envoy.extensions.filters.network.rbac.v3.RBAC');
export const EXT_AUTHZ_NETWORK_FILTER = 'envoy.filters.network.ext_authz';
export const EXT_AUTHZ_NETWORK_TYPE = typeUrlOf('envoy.extensions.filters.network.ext_authz.v3.ExtAuthz');

// HTTP filters
export const ROUTER_FILTER = 'envoy.filters.http.router';
export const ROUTER_TYPE = typeUrlOf('envoy.extensions.filters.http.router.v3.Router');
export const FAULT_FILTER = 'envoy.filters.http.fault';
export const FAULT_TYPE = typeUrlOf('envoy.extensions.filters.http.fault.v3.HTTPFault');
export const CORS_FILTER = 'envoy.filters.http.cors';
export const CORS_TYPE = typeUrlOf('envoy.extensions.filters.http.cors.v3.Cors');
export const RBAC_HTTP_FILTER = 'envoy.filters.http.rbac';
export const RBAC_HTTP_TYPE = typeUrlOf('envoy.extensions.filters.http.rbac.v3.RBAC');
export const EXT_AUTHZ_HTTP_FILTER = 'envoy.filters.http.ext_authz';
export const EXT_AUTHZ_HTTP_TYPE = typeUrlOf('envoy.extensions.filters.http.ext_authz.v3.ExtAuthz');
/** Also the dynamic-metadata namespace where jwt_authn puts the verified payload. */
export const JWT_AUTHN_FILTER = 'envoy.filters.http.jwt_authn';
export const JWT_AUTHN_TYPE = typeUrlOf('envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication');

// Listener filters
export const ORIGINAL_DST_FILTER = 'envoy.filters.listener.original_dst';
export const ORIGINAL_DST_TYPE = typeUrlOf('envoy.extensions.filters.listener.original_dst.v3.OriginalDst');
export const TLS_INSPECTOR_FILTER = 'envoy.filters.listener.tls_inspector';
export const TLS_INSPECTOR_TYPE = typeUrlOf('envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector');

// Transport sockets and secrets
export const UPSTREAM_TLS_CONTEXT_TYPE = typeUrlOf('envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext');
export const DOWNSTREAM_TLS_CONTEXT_TYPE = typeUrlOf('envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext');
export const RAW_BUFFER_TYPE = typeUrlOf('envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer');
export const SECRET_TYPE = typeUrlOf('envoy.extensions.transport_sockets.tls.v3.Secret');

// Matchers
export const URI_TEMPLATE_TYPE = typeUrlOf('envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig');

/** The admin API's config dump sections, by the xDS type they hold. */
export const ConfigDumpType = {
  Bootstrap: typeUrlOf('envoy.admin.v3.BootstrapConfigDump'),
  Clusters: typeUrlOf('envoy.admin.v3.ClustersConfigDump'),
  Endpoints: typeUrlOf('envoy.admin.v3.EndpointsConfigDump'),
  Listeners: typeUrlOf('envoy.admin.v3.ListenersConfigDump'),
  Routes: typeUrlOf('envoy.admin.v3.RoutesConfigDump'),
  Secrets: typeUrlOf('envoy.admin.v3.SecretsConfigDump'),
} as const;
