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
import { AdsNode, Decoded, ResourceMap, XdsClient, XdsProtocol } from './xds/xds-client';
import { FilterContext } from './http/filter-api';
import { FilterRegistry } from './http/filter-registry';
import { Router } from './http/router';
import { RouteTable } from './http/routing';
import { ChainDependencies } from './listeners/filter-chain';
import { ListenerManager } from './listeners/listener-manager';
import { ListenerProbe } from './listeners/listener-probe';
import { ClusterManager } from './upstream/cluster-manager';
import { ClusterManagerHttpClient } from './upstream/cluster-http-client';
import { SdsClient, SecretStore } from './tls/secrets';
import { ProxyLoggers, stderrProxyLogSink } from './logging/proxy-loggers';


/** Where and how the proxy runs, given when it starts (the agent knows its xDS socket only then). */
export interface BuiltInProxyOptions {
  /** `host:port` of the daemon's xDS server, or `unix:<path>` of the agent's xDS proxy. */
  discoveryAddress: string;
  node: AdsNode;
  /** The proxy's named loggers (the admin port changes their levels); default: all at `warning`, to stderr. */
  loggers?: ProxyLoggers;
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
  /**
   * Where the resources come from instead of an ADS stream of its own: a proxy worker is fed
   * by the agent, which holds the one stream to the daemon. `discoveryAddress` is then unused.
   */
  feed?: (apply: ConfigApply) => ConfigFeed;
}

/** Applies the full set of resources of a type; throwing rejects them (NACK). */
export type ConfigApply = (typeUrl: string, resources: ResourceMap) => Promise<void>;

/** The proxy's side of its config stream: what XdsClient offers, so a feed can stand in for it. */
export interface ConfigFeed {
  start(): void;
  stop(): void;
  /** The names wanted of a type that is not wildcard (EDS, RDS). */
  subscribe(typeUrl: string, names: readonly string[]): void;
  readonly connected: boolean;
}

/** An upstream cluster and its endpoints, as the admin's `/clusters` lists them. */
export interface ClusterStatus {
  name: string;
  endpoints: { address: string; port: number; weight: number }[];
}

/**
 * What the admin port and the agent read of a running proxy: the proxy itself, or the agent's
 * pool of proxy workers (`--concurrency`), which answers for all of them.
 */
export interface BuiltInProxyView {
  ready(): boolean;
  whenReady(): Promise<void>;
  connected(): boolean;
  node(): AdsNode | undefined;
  uptimeMs(): number;
  config(): AppliedConfig;
  activeConnections(): number;
  boundListeners(): Record<string, string>;
  clusterStatuses(): ClusterStatus[];
  /** The SDS certificates held (never their keys), for the config dump. */
  secretCertificates(): SecretCertificates[];
  stop(): Promise<void>;
}

export interface SecretCertificates {
  name: string;
  certChainPem?: string;
  trustedCaPem?: string;
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
  ads: ConfigFeed;
  sds?: SdsClient;
}

/**
 * Resolved from the container with the filter factories its core and the enabled plugins
 * contribute (looked up by type URL once per proxy, not per request); started with `start`.
 */
@injectable()
export class BuiltInProxy implements BuiltInProxyView {
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
  private proxyLoggers?: ProxyLoggers;
  private readonly startedAt = Date.now();
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
    const loggers = options.loggers ?? new ProxyLoggers(stderrProxyLogSink);
    this.proxyLoggers = loggers;
    this.router.useLogger(loggers.get('router'));
    const context: FilterContext = { now: options.now ?? Date.now, log: loggers.get('filter').asLog(), loggers, clusters: this.clusterClient };
    const listeners = new ListenerManager(this.chainDependencies(context, options.stripFragmentFromPath ?? true, loggers.get('connection').asLog()));
    const sds = options.sdsSocketPath ? new SdsClient(options.sdsSocketPath, this.secrets, options.node, loggers.get('secret').asLog()) : undefined;
    const apply: ConfigApply = (typeUrl, resources) => this.apply(typeUrl, resources);
    const ads = options.feed
      ? options.feed(apply)
      : new XdsClient(
          { address: options.discoveryAddress, node: options.node, credentials: options.credentials, channelOptions: options.channelOptions, protocol: options.protocol },
          { apply, log: loggers.get('config').asLog() },
        );
    this.running = { options, listeners, ads, sds };
    sds?.start();
    ads.start();
  }

  /**
   * The given listeners built with this proxy's filters (its core's and the enabled plugins'),
   * for requests evaluated in-process and never bound or forwarded (`meshctl x authz simulate`).
   * Remote key sets are fetched as the proxy would; close the probe to stop them.
   */
  probe(listeners: readonly Decoded[], options: { now?: () => number } = {}): ListenerProbe {
    const context: FilterContext = { now: options.now ?? Date.now, log: () => undefined, clusters: this.clusterClient };
    return new ListenerProbe(listeners, this.chainDependencies(context, true, () => undefined));
  }

  /** What the listeners' chains are built from: this proxy's filters, routes, clusters and transports. */
  private chainDependencies(context: FilterContext, stripFragmentFromPath: boolean, log: ChainDependencies['log']): ChainDependencies {
    return {
      registry: this.registry,
      context,
      routes: { get: (name) => this.routes.get(name) },
      router: this.router,
      clusters: this.clusters,
      transports: this.transports,
      pathFlags: { stripFragmentFromPath },
      log,
    };
  }

  /** Ready: first clusters and listeners applied, and every route table they name received. */
  ready(): boolean {
    const running = this.running;
    if (!running) return false;
    const ok = this.clustersApplied && this.listenersApplied && running.listeners.routeNames().every((n) => this.routes.has(n));
    if (ok && !this.wasReady) {
      this.wasReady = true;
      this.loggers.get('main').info(`initial configuration applied; serving listeners ${Object.values(running.listeners.bound()).join(', ') || '(none)'}`);
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

  /** The proxy's loggers; before `start`, none exist yet. */
  get loggers(): ProxyLoggers {
    if (!this.proxyLoggers) throw new Error('the built-in proxy is not started');
    return this.proxyLoggers;
  }

  /** The node it presents to the daemon, once started. */
  node(): AdsNode | undefined {
    return this.running?.options.node;
  }

  /** Milliseconds since this proxy was created (Envoy's uptime). */
  uptimeMs(): number {
    return Date.now() - this.startedAt;
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

  secretCertificates(): SecretCertificates[] {
    return this.secrets.names().map((name) => {
      const { certChainPem, trustedCaPem } = this.secrets.get(name)!;
      return { name, certChainPem, trustedCaPem };
    });
  }

  clusterStatuses(): ClusterStatus[] {
    return this.clusters.names().map((name) => ({
      name,
      endpoints: this.clusters.endpointsOf(name).map((e) => ({ address: e.address, port: e.port, weight: e.weight })),
    }));
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
        this.loggers.get('upstream').info(`cds: ${resources.size} cluster(s) applied`);
        this.applied.clusters = resources;
        this.clustersApplied = true;
        ads.subscribe(TypeUrl.ClusterLoadAssignment, this.clusters.edsNames());
        break;
      case TypeUrl.ClusterLoadAssignment:
        this.clusters.applyEndpoints(resources);
        this.loggers.get('upstream').debug(() => `eds: endpoints of ${[...resources.keys()].join(', ')} applied`);
        for (const [n, r] of resources) this.applied.endpoints.set(n, r);
        break;
      case TypeUrl.Listener:
        await listeners.apply(resources);
        this.loggers.get('config').info(`lds: ${resources.size} listener(s) applied`);
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
          this.loggers.get('config').debug(() => `rds: route configuration(s) ${compiled.map(([n]) => n).join(', ')} applied`);
        }
        break;
      default:
        throw new Error(`unexpected type ${typeUrl}`);
    }
    this.ready();
  }
}
