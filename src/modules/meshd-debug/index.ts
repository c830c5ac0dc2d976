/**
 * meshctl talking to the control-plane daemons over xDS (spec/03, the XDS-connection group):
 * reaching them (an address, or their pods through port-forwards), authenticating (token,
 * client certificate), debug requests, and what the commands print of the answers
 * (proxy-status and its diff, internal-debug, version with the control plane).
 */
export { askDaemon, DaemonChannel, DaemonRequestError, RawDiscoveryResponse } from './debug-client';
export { channelSecurity, certificateNamespace, CERT_DIR_FILES, XdsSecurityError } from './credentials';
export {
  answersByInstance,
  ControlPlaneNotFoundError,
  ControlPlaneReach,
  DaemonAnswer,
  DaemonSession,
  DEFAULT_XDS_LABEL,
  MESH_TOKEN_AUDIENCE,
  OrchReach,
  REVISION_LABEL,
  SessionOptions,
  TOKEN_SERVICE_ACCOUNT,
  XdsConnectionFlags,
} from './daemon-session';
export { internalDebug } from './internal-debug';
export { DEBUG_CONFIG_DUMP_TYPE, parseProxyDump, PROXY_ADMIN_PORT, proxyConfigDump, proxyStatusDiff, proxyStatusList, readProxyDumpFile, StatusListOptions } from './proxy-status';
export { canonicalMessage, lookupMessage } from './proto3-json';
export { controlPlaneVersions, proxyVersions, proxyVersionSummary, renderVersionReport, serverInfo, ServerInfo, ProxyInfo, VersionReport } from './remote-version';
export { ConfigDumpJson, lastRouteLoad, rfc1123, syncDiff, SyncDiff } from './sync-diff';
export { DEBUG_SYNCZ_TYPE, filterNamespace, instanceId, Json, JsonObject, layout, responseInstance, statusTable, synczJson } from './sync-status';
export { splitLines, unifiedDiff } from './unified-diff';
export { podOfTarget } from './pod-target';
export { OrchAccessReach, ROOT_CERT_CONFIGMAP } from './orch-reach';
