import { Proxy } from './proxy';
import { PushContext } from './push-context';
import { Service, ServicePort } from '../registry/model';
import { XdsTypeUrl } from '../envoy/type-urls';

/** One encoded xDS resource, ready to be wrapped in an Any and sent. */
export interface XdsResource {
  name: string;
  /** The encoded Envoy message (not the Any). */
  body: Buffer;
}

/**
 * Runs many proxies share, for a generated list: the list is the concatenation of the runs,
 * in order, and each run is one array object handed to every proxy that gets it (a scope's
 * outbound clusters, say). The xDS server keeps what it derives from a run (versions, wire
 * framing, identity) once per run, not once per proxy and resource: a connect storm of
 * thousands of proxies then costs per proxy only what is its own.
 */
const runsOfList = new WeakMap<readonly XdsResource[], readonly (readonly XdsResource[])[]>();

/**
 * `runs` concatenated, marked as made of them. Runs are frozen: one changed in place would
 * stand for bytes it no longer has.
 */
export function concatRuns(runs: readonly (readonly XdsResource[])[]): XdsResource[] {
  for (const run of runs) if (!Object.isFrozen(run)) Object.freeze(run);
  const list = runs.length === 1 ? [...runs[0]] : ([] as XdsResource[]).concat(...runs);
  runsOfList.set(list, runs);
  return list;
}

/**
 * `concatRuns([run])` for a list handed to many proxies as it is (a push's answer to one
 * subscription): frozen, so one list serves every proxy that asks instead of a copy each.
 * Typed as a generator's result; see XdsGenerator.
 */
export function sharedList(run: readonly XdsResource[]): XdsResource[] {
  return Object.freeze(concatRuns([run])) as XdsResource[];
}

/** The shared runs `list` is made of, if a generator said so (see concatRuns) and it was not changed since. */
export function runsOf(list: readonly XdsResource[]): readonly (readonly XdsResource[])[] | undefined {
  const runs = runsOfList.get(list);
  if (!runs) return undefined;
  let at = 0;
  for (const run of runs) {
    if (run.length > 0 && (list[at] !== run[0] || list[at + run.length - 1] !== run[run.length - 1])) return undefined;
    at += run.length;
  }
  return at === list.length ? runs : undefined;
}

/** What changed since the previous push; generators may use it to skip untouched work. */
export interface ChangeSet {
  /** Every resource type must be rebuilt (first push, a kind without finer tracking changed...). */
  full: boolean;
  /** Hosts whose service definition, DestinationRule or VirtualService changed. */
  services: ReadonlySet<string>;
  /** Hosts whose endpoints changed. */
  endpoints: ReadonlySet<string>;
  /** Config keys (`Kind/ns/name`) that changed, for the reason labels of pushes. */
  configs: ReadonlySet<string>;
  /** Workload addresses that joined or left the endpoints of changed hosts (their proxies' inbound config moves). */
  workloadAddresses: ReadonlySet<string>;
}

export interface GenerateRequest {
  proxy: Proxy;
  push: PushContext;
  typeUrl: XdsTypeUrl;
  /** The names the proxy subscribed to; `undefined` for a wildcard subscription (all of the type it should have). */
  names: readonly string[] | undefined;
  /**
   * Only the resources of these hosts are wanted (a push after their services changed; the
   * others cannot have changed). A generator may ignore it and return more.
   */
  hosts?: ReadonlySet<string>;
}

/**
 * Builds the resources of one type for one proxy from a push context. Generators read
 * only the push context and the proxy (DESIGN.md §2). For a named subscription they return
 * only resources with requested names; names they know nothing of are left out (the proxy
 * then sees them as absent). The list returned may be one many proxies share (frozen, see
 * sharedList): whoever changes it copies it first.
 */
export interface XdsGenerator {
  generate(request: GenerateRequest): XdsResource[];
}

/** The generator a proxy gets, by its node metadata GENERATOR (`''` = Envoy sidecar/router). */
export const XdsGeneratorToken = Symbol.for('mesh.XdsGenerator');
export interface NamedGenerator {
  /** GENERATOR metadata value served by this generator; `''` for the default (Envoy). */
  readonly generatorName: string;
  readonly generator: XdsGenerator;
}

/** A network or HTTP filter as it appears in a listener: `{ name, typed_config: { '@type', ... } }`. */
export interface EnvoyFilter {
  name: string;
  typed_config: { '@type': string; [field: string]: unknown };
}

/** Where a filter chain is being built; given to filter contributors. */
export interface FilterChainContext {
  /**
   * The proxy the chain is built for first. Chains are shared by the proxies they read alike:
   * outbound ones by every proxy of a scope, inbound ones by replicas (same namespace, labels
   * and service instances). Read its namespace and labels only; a chain named after the
   * proxy's addresses or ID would go to others too.
   */
  proxy: Proxy;
  push: PushContext;
  direction: 'inbound' | 'outbound';
  port: ServicePort;
  /** The service behind the chain (outbound: the destination; inbound: the proxy's own service). */
  service?: Service;
}

/** Contribution point: network filters of TCP filter chains (DESIGN.md §4). */
export const NetworkFilterContributor = Symbol.for('mesh.NetworkFilterContributor');
export interface NetworkFilterContributor {
  /**
   * Filters to place before the chain's terminal filter, and optionally a terminal filter
   * that replaces `tcp_proxy` (as the KV-store proxy does). `cluster` is the chain's target.
   */
  networkFilters(context: FilterChainContext, cluster: string): { before?: EnvoyFilter[]; terminal?: EnvoyFilter };
}

/** Contribution point: HTTP filters placed before the router in HTTP connection managers. */
export const HttpFilterContributor = Symbol.for('mesh.HttpFilterContributor');
export interface HttpFilterContributor {
  httpFilters(context: FilterChainContext): EnvoyFilter[];
}

/**
 * Contribution point: adjustments to each generated cluster (metadata, options). An outbound
 * cluster's output must depend only on its service, port, subset and the DestinationRule in
 * force: one encoding serves every proxy that sees that rule (the proxy is given for inbound
 * clusters, which the replicas of a workload share: read its namespace and labels only).
 */
export const ClusterContributor = Symbol.for('mesh.ClusterContributor');
export interface ClusterContributor {
  /** Mutates the plain cluster object before it is encoded. */
  patchCluster(cluster: Record<string, unknown>, context: { proxy: Proxy; push: PushContext; service: Service; port: ServicePort; subset: string }): void;
}

/** Contribution point: adjustments to each LbEndpoint of EDS (telemetry metadata). */
export const EndpointContributor = Symbol.for('mesh.EndpointContributor');
export interface EndpointContributor {
  patchEndpoint(lbEndpoint: Record<string, unknown>, endpoint: import('../registry/model').ServiceEndpoint): void;
}

/**
 * Contribution point: adjustments to each HTTP connection manager of the sidecar's listeners
 * (protocol options, `use_remote_address`...). Called after the manager's own fields and HTTP
 * filters are set; `context.direction` tells inbound from outbound. Output must depend only on
 * what the generator's memo keys cover (for outbound: the proxy's namespace and scope).
 */
export const HttpConnectionManagerContributor = Symbol.for('mesh.HttpConnectionManagerContributor');
export interface HttpConnectionManagerContributor {
  /** Mutates the plain HttpConnectionManager (the `typed_config`, with its `@type`) before it is encoded. */
  patchConnectionManager(hcm: Record<string, unknown>, context: FilterChainContext): void;
}
