/**
 * Builders shared by the Envoy sidecar generator and the proxyless gRPC generator: outbound
 * clusters of a service port (CDS, `clusters`), the load assignment of an outbound cluster
 * (EDS, `load-assignment`) and the virtual host of a service port (RDS, `virtual-host`). They
 * return plain Envoy v3 objects in the form `encodeMessage` takes (snake_case fields, Any as
 * `{ '@type', ... }`); callers encode and cache them. Nothing here memoizes: results are fresh
 * objects the caller may mutate.
 *
 * `forGrpc` restricts the output to what gRPC's xDS client accepts (gRFC A27/A28/A31/A42/A44):
 * every cluster is EDS, load balancing is ROUND_ROBIN or RING_HASH, timeouts go to
 * `max_stream_duration`, retries name gRPC status codes only, and routes whose action is not
 * `route` (redirect, direct response) are left out, since gRPC rejects a whole route table
 * that contains one.
 */
export { clusterMetadata, MESH_METADATA_KEY, serviceShortName } from './cluster-metadata';
export {
  buildOutboundClusters, meshConnectTimeout, defaultCircuitBreakers, MAX_UINT32, OutboundClusterOptions,
} from './clusters';
export { protoDuration } from './durations';
export {
  ADS_CONFIG_SOURCE, CORS_FILTER, EnvoyEnum, FAULT_FILTER, HTTP_PROTOCOL_OPTIONS_KEY,
} from './envoy-enums';
export { buildLoadAssignment, endpointAddress, loadAssignmentOf } from './load-assignment';
export { destinationCluster } from './route-action';
export { translateMatch } from './route-match';
export {
  corsConfig, DEFAULT_RETRY_ON, faultConfig, fractionalPercent, GRPC_RETRY_ON, hashPolicies, retryPolicy,
} from './route-policies';
export { EffectivePolicy, effectivePolicy, subsetOf } from './traffic-policy';
export {
  buildVirtualHost, defaultRoute, seesShortName, virtualHostDomains, VirtualHostOptions,
} from './virtual-host';
