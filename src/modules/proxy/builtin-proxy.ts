/**
 * The built-in proxy (DESIGN.md §7): an ADS client of the daemon feeding clusters, endpoints,
 * listeners and routes to the data plane in this process. It is ready once its first
 * clusters and listeners are applied and every route table they name has arrived.
 */
import { TypeUrl } from '../envoy/type-urls';
import { AdsNode, ResourceMap, XdsClient, XdsProtocol } from './xds/xds-client';
import { FilterContext, HttpFilterFactory, NetworkFilterFactory } from './http/filter-api';
import { FilterRegistry } from './http/filter-registry';
import { Router } from './http/router';
import { RouteTable } from './http/routing';
import { ListenerManager } from './listeners/listener-manager';
import { ClusterManager } from './upstream/cluster-manager';
import * as grpc from '@grpc/grpc-js';
import { SdsClient, SecretStore } from './tls/secrets';

export type ProxyLog = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;

export interface BuiltInProxyOptions {
  /** `host:port` of the daemon's xDS server. */
  discoveryAddress: string;
  node: AdsNode;
  httpFilters: readonly HttpFilterFactory[];
  networkFilters: readonly NetworkFilterFactory[];
  log: ProxyLog;
  /** Asked for on each new channel to the daemon; default plain text. */
  credentials?: () => grpc.ChannelCredentials;
  /** Channel options toward the daemon (keepalive...). */
  channelOptions?: grpc.ChannelOptions;
  /** `delta` (MESH_DELTA_XDS, as Envoy is bootstrapped) or `sotw`; default `sotw`. */
  protocol?: XdsProtocol;
  /** The agent's SDS Unix socket, for the certificates TLS transport sockets name. */
  sdsSocketPath?: string;
  now?: () => number;
  /** HTTP_STRIP_FRAGMENT_FROM_PATH_UNSAFE_IF_DISABLED: drop `#fragment` from request paths (default true). */
  stripFragmentFromPath?: boolean;
}

/** What was last applied, per type, for the admin config dump. */
export interface AppliedConfig {
  clusters: ResourceMap;
  endpoints: ResourceMap;
  listeners: ResourceMap;
  routes: ResourceMap;
  versions: Record<string, string>;
}

export class BuiltInProxy {
  readonly secrets = new SecretStore();
  readonly clusters = new ClusterManager(this.secrets);
  private readonly sds: SdsClient | undefined;
  /** Route tables by name, compiled as they arrive. */
  private readonly routes = new Map<string, RouteTable>();
  private readonly listeners: ListenerManager;
  private readonly router: Router;
  private readonly ads: XdsClient;
  private readonly applied: AppliedConfig = { clusters: new Map(), endpoints: new Map(), listeners: new Map(), routes: new Map(), versions: {} };
  private clustersApplied = false;
  private listenersApplied = false;
  private readyWaiters: Array<() => void> = [];
  private wasReady = false;

  constructor(private readonly options: BuiltInProxyOptions) {
    const context: FilterContext = { now: options.now ?? Date.now, log: (level, message) => options.log(level, message) };
    this.router = new Router(this.clusters);
    this.listeners = new ListenerManager({
      registry: new FilterRegistry(options.httpFilters, options.networkFilters),
      context,
      routes: { get: (name) => this.routes.get(name) },
      router: this.router,
      clusters: this.clusters,
      secrets: this.secrets,
      pathFlags: { stripFragmentFromPath: options.stripFragmentFromPath ?? true },
      log: (level, message) => options.log(level, message),
    });
    this.sds = options.sdsSocketPath ? new SdsClient(options.sdsSocketPath, this.secrets, options.node, (level, message) => options.log(level, message)) : undefined;
    this.ads = new XdsClient(
      { address: options.discoveryAddress, node: options.node, credentials: options.credentials, channelOptions: options.channelOptions, protocol: options.protocol },
      { apply: (typeUrl, resources) => this.apply(typeUrl, resources), log: options.log },
    );
  }

  start(): void {
    this.sds?.start();
    this.ads.start();
  }

  /** Ready: first clusters and listeners applied, and every route table they name received. */
  ready(): boolean {
    const ok = this.clustersApplied && this.listenersApplied && this.listeners.routeNames().every((n) => this.routes.has(n));
    if (ok && !this.wasReady) {
      this.wasReady = true;
      this.options.log('info', `built-in proxy ready: listeners ${Object.values(this.listeners.bound()).join(', ') || '(none)'}`);
      for (const w of this.readyWaiters.splice(0)) w();
    }
    return ok;
  }

  whenReady(): Promise<void> {
    if (this.ready()) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  connected(): boolean {
    return this.ads.connected;
  }

  config(): AppliedConfig {
    return this.applied;
  }

  activeConnections(): number {
    return this.listeners.activeConnections();
  }

  boundListeners(): Record<string, string> {
    return this.listeners.bound();
  }

  async stop(): Promise<void> {
    this.ads.stop();
    this.sds?.stop();
    await this.listeners.stop();
    this.router.close();
  }

  private async apply(typeUrl: string, resources: ResourceMap): Promise<void> {
    switch (typeUrl) {
      case TypeUrl.Cluster:
        this.clusters.applyClusters(resources);
        this.applied.clusters = resources;
        this.clustersApplied = true;
        this.ads.subscribe(TypeUrl.ClusterLoadAssignment, this.clusters.edsNames());
        break;
      case TypeUrl.ClusterLoadAssignment:
        this.clusters.applyEndpoints(resources);
        for (const [n, r] of resources) this.applied.endpoints.set(n, r);
        break;
      case TypeUrl.Listener:
        await this.listeners.apply(resources);
        this.applied.listeners = resources;
        this.listenersApplied = true;
        this.ads.subscribe(TypeUrl.RouteConfiguration, this.listeners.routeNames());
        for (const name of [...this.routes.keys()]) {
          if (!this.listeners.routeNames().includes(name)) {
            this.routes.delete(name);
            this.applied.routes.delete(name);
          }
        }
        break;
      case TypeUrl.RouteConfiguration:
        {
          // All or nothing: one table that does not compile NACKs the response.
          const compiled = [...resources].map(([n, r]) => [n, new RouteTable(r)] as const);
          for (const [n, table] of compiled) {
            this.routes.set(n, table);
            this.applied.routes.set(n, table.config);
          }
        }
        break;
      default:
        throw new Error(`unexpected type ${typeUrl}`);
    }
    this.ready();
  }
}
