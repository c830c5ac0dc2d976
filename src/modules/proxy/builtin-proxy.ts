/**
 * The built-in proxy (DESIGN.md §7): an ADS client of the daemon feeding clusters, endpoints,
 * listeners and routes to the data plane in this process. It is ready once its first
 * clusters and listeners are applied and every route table they name has arrived.
 */
import { inject, injectable, named } from 'inversify';
import * as grpc from '@grpc/grpc-js';
import { TypeUrl } from '../envoy/type-urls';
import { ContributionProvider } from '../plugins/contribution-provider';
import { ProxyHttpFilterFactory, ProxyNetworkFilterFactory, ProxyTransportSocketFactory } from './contributions';
import { TransportSockets } from './tls/transport-sockets';
import { AdsNode, ResourceMap, XdsClient, XdsProtocol } from './xds/xds-client';
import { FilterContext } from './http/filter-api';
import { FilterRegistry } from './http/filter-registry';
import { Router } from './http/router';
import { RouteTable } from './http/routing';
import { ListenerManager } from './listeners/listener-manager';
import { ClusterManager } from './upstream/cluster-manager';
import { ClusterManagerHttpClient } from './upstream/cluster-http-client';
import { SdsClient, SecretStore } from './tls/secrets';

export type ProxyLog = (level: 'debug' | 'info' | 'warn' | 'error', message: string) => void;

/** Where and how the proxy runs, given when it starts (the agent knows its xDS socket only then). */
export interface BuiltInProxyOptions {
  /** `host:port` of the daemon's xDS server, or `unix:<path>` of the agent's xDS proxy. */
  discoveryAddress: string;
  node: AdsNode;
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

/** The parts that exist once the proxy is started. */
interface Running {
  options: BuiltInProxyOptions;
  listeners: ListenerManager;
  ads: XdsClient;
  sds?: SdsClient;
}

/**
 * Resolved from the container with the filter factories its core and the enabled plugins
 * contribute (looked up by type URL once per proxy, not per request); started with `start`.
 */
@injectable()
export class BuiltInProxy {
  readonly secrets = new SecretStore();
  readonly clusters: ClusterManager;
  private readonly transports: TransportSockets;
  /** Route tables by name, compiled as they arrive. */
  private readonly routes = new Map<string, RouteTable>();
  private readonly registry: FilterRegistry;
  private readonly router: Router;
  private readonly clusterClient: ClusterManagerHttpClient;
  private readonly applied: AppliedConfig = { clusters: new Map(), endpoints: new Map(), listeners: new Map(), routes: new Map(), versions: {} };
  private running?: Running;
  private clustersApplied = false;
  private listenersApplied = false;
  private readyWaiters: Array<() => void> = [];
  private wasReady = false;

  constructor(
    @inject(ContributionProvider) @named(ProxyHttpFilterFactory) httpFilters: ContributionProvider<ProxyHttpFilterFactory>,
    @inject(ContributionProvider) @named(ProxyNetworkFilterFactory) networkFilters: ContributionProvider<ProxyNetworkFilterFactory>,
    @inject(ContributionProvider) @named(ProxyTransportSocketFactory) transports: ContributionProvider<ProxyTransportSocketFactory>,
  ) {
    this.registry = new FilterRegistry(httpFilters.getContributions(), networkFilters.getContributions());
    this.transports = new TransportSockets(transports.getContributions(), this.secrets);
    this.clusters = new ClusterManager(this.transports);
    this.router = new Router(this.clusters);
    this.clusterClient = new ClusterManagerHttpClient(this.clusters);
  }

  /** Connects to the daemon (or the agent's xDS proxy) and serves what it sends. */
  start(options: BuiltInProxyOptions): void {
    if (this.running) throw new Error('the built-in proxy is already started');
    const log = options.log;
    const context: FilterContext = { now: options.now ?? Date.now, log: (level, message) => log(level, message), clusters: this.clusterClient };
    const listeners = new ListenerManager({
      registry: this.registry,
      context,
      routes: { get: (name) => this.routes.get(name) },
      router: this.router,
      clusters: this.clusters,
      transports: this.transports,
      pathFlags: { stripFragmentFromPath: options.stripFragmentFromPath ?? true },
      log: (level, message) => log(level, message),
    });
    const sds = options.sdsSocketPath ? new SdsClient(options.sdsSocketPath, this.secrets, options.node, (level, message) => log(level, message)) : undefined;
    const ads = new XdsClient(
      { address: options.discoveryAddress, node: options.node, credentials: options.credentials, channelOptions: options.channelOptions, protocol: options.protocol },
      { apply: (typeUrl, resources) => this.apply(typeUrl, resources), log },
    );
    this.running = { options, listeners, ads, sds };
    sds?.start();
    ads.start();
  }

  /** Ready: first clusters and listeners applied, and every route table they name received. */
  ready(): boolean {
    const running = this.running;
    if (!running) return false;
    const ok = this.clustersApplied && this.listenersApplied && running.listeners.routeNames().every((n) => this.routes.has(n));
    if (ok && !this.wasReady) {
      this.wasReady = true;
      running.options.log('info', `built-in proxy ready: listeners ${Object.values(running.listeners.bound()).join(', ') || '(none)'}`);
      for (const w of this.readyWaiters.splice(0)) w();
    }
    return ok;
  }

  whenReady(): Promise<void> {
    if (this.ready()) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  connected(): boolean {
    return this.running?.ads.connected ?? false;
  }

  config(): AppliedConfig {
    return this.applied;
  }

  activeConnections(): number {
    return this.running?.listeners.activeConnections() ?? 0;
  }

  boundListeners(): Record<string, string> {
    return this.running?.listeners.bound() ?? {};
  }

  async stop(): Promise<void> {
    const running = this.running;
    running?.ads.stop();
    running?.sds?.stop();
    await running?.listeners.stop();
    this.router.close();
    this.clusterClient.close();
  }

  private async apply(typeUrl: string, resources: ResourceMap): Promise<void> {
    const { ads, listeners } = this.running!;
    switch (typeUrl) {
      case TypeUrl.Cluster:
        this.clusters.applyClusters(resources);
        this.applied.clusters = resources;
        this.clustersApplied = true;
        ads.subscribe(TypeUrl.ClusterLoadAssignment, this.clusters.edsNames());
        break;
      case TypeUrl.ClusterLoadAssignment:
        this.clusters.applyEndpoints(resources);
        for (const [n, r] of resources) this.applied.endpoints.set(n, r);
        break;
      case TypeUrl.Listener:
        await listeners.apply(resources);
        this.applied.listeners = resources;
        this.listenersApplied = true;
        ads.subscribe(TypeUrl.RouteConfiguration, listeners.routeNames());
        for (const name of [...this.routes.keys()]) {
          if (!listeners.routeNames().includes(name)) {
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
