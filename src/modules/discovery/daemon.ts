import * as os from 'node:os';
import type { Container } from 'inversify';
import { BuildInfo, BuildInfoToken } from '../build-info';
import { ConfigIssue, configFileLimits, ConfigLimitSettingError, FileConfigSource, KindRegistry, KindRegistryToken, MemoryConfigStore } from '../config';
import { ServiceEntrySpec } from '../config/kinds/service-entry';
import { ConfigResource } from '../config/resource';
import { configzHandler, DebugHandler, DebugHttpServer, pluginsHandler, registryzHandler } from '../debug';
import { Logging, LoggingToken } from '../logging';
import { PushContext } from '../model/push-context';
import { DaemonMetrics, formatListenAddress, MonitoringServer, parseListenAddress } from '../monitoring';
import { PluginStatus, PluginStatusToken } from '../plugins';
import { mockServiceEntries } from '../registry/mock';
import { AuthnSettingError, DaemonKeySets, KeySetSettings, keySetSettingsFrom } from '../security/authn';
import { Settings, SettingsToken } from '../settings';
import { XdsServer } from '../xds/server';
import * as grpc from '@grpc/grpc-js';
import { ListenAddress } from '../monitoring/listen-address';
import { CipherSelection, cipherSelection, CipherSuiteError } from '../security/tls/cipher-suites';
import { DaemonSecurity, DaemonSecurityError } from './daemon-security';
import { DaemonHttpsServer } from './https-server';
import { pushThrottleFrom } from '../xds/push-queue';
import { requestsPerSecondFrom } from '../xds/rate-limiter';
import { metricsObserver, pipelineObserver, xdsCacheFrom } from './observers';
import { CoreContributions, generatorsFrom } from './generators';
import { AuthzHttpFilterContributor, AuthzNetworkFilterContributor } from '../security/authz';
import { HttpFilterContributor } from '../model/generator';
import { PushCoordinator } from './push-coordinator';
import { configDump, findConnection, syncz } from './xds-debug';

/** The flags of `pilot-discovery discovery` this daemon acts on. */
export interface DaemonFlags {
  configDir: string;
  registries: string[];
  domain: string;
  grpcAddr: string;
  httpAddr: string;
  monitoringAddr: string;
  keepaliveIntervalMs: number;
  keepaliveTimeoutMs: number;
  keepaliveMaxServerConnectionAgeMs: number;
  shutdownDurationMs: number;
  orchconfig: string;
  secureGrpcAddr: string;
  httpsAddr: string;
  tlsCertFile: string;
  tlsKeyFile: string;
  caCertFile: string;
  tlsCipherSuites: string[];
}

export class DaemonStartError extends Error {}

const REGISTRIES = ['Orch', 'Mock'];

/**
 * `pilot-discovery discovery`: composes the config sources, the push pipeline, the xDS
 * server and the HTTP servers (DESIGN.md §2), and stops them in order.
 */
export class Daemon {
  private readonly settings: Settings;
  private readonly logging: Logging;
  private readonly metrics: DaemonMetrics;
  private readonly store: MemoryConfigStore;
  private fileSource: FileConfigSource | undefined;
  private coordinator: PushCoordinator | undefined;
  private xds: XdsServer | undefined;
  private http: DebugHttpServer | undefined;
  private monitoring: MonitoringServer | undefined;
  private security: DaemonSecurity | undefined;
  private https: DaemonHttpsServer | undefined;
  private keySets: DaemonKeySets | undefined;
  private unwatchPolicies: (() => void) | undefined;
  private ready = false;

  constructor(
    private readonly container: Container,
    private readonly flags: DaemonFlags,
  ) {
    this.settings = container.get<Settings>(SettingsToken);
    this.logging = container.get<Logging>(LoggingToken);
    const build = container.get<BuildInfo>(BuildInfoToken);
    this.metrics = new DaemonMetrics({ component: 'pilot', version: build.version });
    this.store = new MemoryConfigStore({
      logger: this.logging.scope('model'),
      onConflict: (c) => {
        this.metrics.totalRejectedConfigs.inc({ type: c.key.split('/')[0] });
        this.logging.scope('model').warn(`${c.key} is declared by ${[c.winner, ...c.ignored].join(' and ')}; serving the one from ${c.winner}`);
      },
    });
  }

  async start(): Promise<void> {
    const log = this.logging.scope('default');
    const f = this.flags;
    const addresses = {
      grpc: parseListenAddress(f.grpcAddr, '--grpcAddr'),
      http: parseListenAddress(f.httpAddr, '--httpAddr'),
      monitoring: parseListenAddress(f.monitoringAddr, '--monitoringAddr'),
      secureGrpc: f.secureGrpcAddr ? parseListenAddress(f.secureGrpcAddr, '--secureGRPCAddr') : undefined,
      https: f.httpsAddr ? parseListenAddress(f.httpsAddr, '--httpsAddr') : undefined,
    };
    let ciphers: CipherSelection;
    try {
      ciphers = cipherSelection(f.tlsCipherSuites);
    } catch (err) {
      if (err instanceof CipherSuiteError) throw new DaemonStartError(err.message);
      throw err;
    }
    const registries = this.checkRegistries();
    const keySetSettings = this.checkKeySetSettings();

    // HTTP first, so /ready can say "not ready" while config loads.
    const debugHandlers = this.debugHandlers();
    this.http = new DebugHttpServer({
      address: addresses.http,
      debugEnabled: this.settings.bool('ENABLE_DEBUG_ON_HTTP'),
      isReady: () => (this.ready ? { ready: true } : { ready: false, reason: 'config not loaded yet' }),
      handlers: debugHandlers,
      onHandlerError: (path, err) => log.error(`debug handler ${path} failed: ${(err as Error).message}`),
    });
    const httpBound = await this.http.start();
    log.info(`HTTP discovery listening on ${formatListenAddress(httpBound)}`);
    this.monitoring = new MonitoringServer({
      address: addresses.monitoring,
      metrics: this.metrics,
      localhostOnly: this.settings.bool('METRICS_LOCALHOST_ACCESS_ONLY'),
      // The incumbent serves the debug interface on the monitoring port too (pilot-discovery request).
      fallback: this.http.listener,
    });
    const monitoringBound = await this.monitoring.start();
    log.info(`monitoring listening on ${formatListenAddress(monitoringBound)}`);

    await this.startConfigSources(registries.includes('Orch'));
    this.coordinator = new PushCoordinator(
      this.store,
      {
        domain: f.domain,
        rootNamespace: 'mesh-system',
        debounceAfterMs: this.settings.duration('PILOT_DEBOUNCE_AFTER').milliseconds,
        debounceMaxMs: this.settings.duration('PILOT_DEBOUNCE_MAX').milliseconds,
        edsDebounce: this.settings.bool('PILOT_ENABLE_EDS_DEBOUNCE'),
        extraServiceEntries: registries.includes('Mock') ? mockServiceEntries(f.domain) : ([] as ConfigResource<ServiceEntrySpec>[]),
        cache: xdsCacheFrom(this.settings, this.metrics),
      },
      (push, change, at) => {
        this.keySets?.pushContextBuilt(push);
        this.xds?.pushAll(push, change, at);
      },
      pipelineObserver(this.metrics, this.logging.scope('model')),
      this.logging.scope('model'),
    );
    const firstPush = this.coordinator.start();
    this.security = new DaemonSecurity(this.settings, { tlsCertFile: f.tlsCertFile, tlsKeyFile: f.tlsKeyFile, caCertFile: f.caCertFile, ciphers }, this.logging.scope('security'), this.metrics.registry);
    try {
      await this.security.start();
    } catch (err) {
      if (err instanceof DaemonSecurityError) throw new DaemonStartError(err.message);
      throw err;
    }
    const keySets = await this.startKeySets(keySetSettings, firstPush);

    this.xds = new XdsServer({
      generators: generatorsFrom(this.container, this.settings, this.securityFilters(keySets.filters), { trustDomain: 'cluster.local', sidecars: true }),
      deltaEnabled: this.settings.bool('MESH_DELTA_XDS'),
      maxReceiveMessageBytes: this.settings.int('MESH_GPRC_MAXRECVMSGSIZE'),
      maxConcurrentStreams: this.settings.int('MESH_GPRC_MAXSTREAMS'),
      keepaliveIntervalMs: f.keepaliveIntervalMs,
      keepaliveTimeoutMs: f.keepaliveTimeoutMs,
      maxConnectionAgeMs: f.keepaliveMaxServerConnectionAgeMs,
      pushConcurrency: pushThrottleFrom(this.settings.int('PILOT_PUSH_THROTTLE'), os.cpus().length),
      newStreamsPerSecond: requestsPerSecondFrom(this.settings.float('PILOT_MAX_REQUESTS_PER_SECOND'), os.cpus().length),
      controlPlaneId: `meshd-${os.hostname()}`,
      logger: this.logging.scope('ads'),
      observer: metricsObserver(this.metrics),
      currentPush: () => this.coordinator?.currentPush(),
    });
    const grpcPort = await this.xds.listen({
      host: addresses.grpc.host === '' ? '::' : addresses.grpc.host,
      port: addresses.grpc.port,
      credentials: grpc.ServerCredentials.createInsecure(),
      auth: this.security.plaintextAuth(),
    });
    log.info(`xDS (gRPC) listening on ${formatListenAddress({ host: addresses.grpc.host, port: grpcPort })}`);
    await this.startSecureAddresses(addresses.secureGrpc, addresses.https, ciphers);

    this.ready = true;
    const startup = this.metrics.markReady();
    log.info(`daemon ready in ${startup.toFixed(3)}s`);
  }

  /** Graceful stop (SIGTERM): not ready, close streams, stop sources and servers within `--shutdownDuration`. */
  async stop(): Promise<void> {
    const log = this.logging.scope('default');
    this.ready = false;
    log.info(`shutting down (grace ${this.flags.shutdownDurationMs} ms)`);
    this.fileSource?.stop();
    this.unwatchPolicies?.();
    this.keySets?.stop();
    this.coordinator?.stop();
    await this.xds?.stop(this.flags.shutdownDurationMs);
    this.security?.stop();
    await Promise.all([this.http?.stop(), this.monitoring?.stop(), this.https?.stop()]);
    log.info('shutdown complete');
  }

  /** The TLS gRPC address (xDS and CA) and the HTTPS address, when the daemon has a certificate. */
  private async startSecureAddresses(secureGrpc: ListenAddress | undefined, httpsAddress: ListenAddress | undefined, ciphers: CipherSelection): Promise<void> {
    const log = this.logging.scope('default');
    const security = this.security!;
    if (secureGrpc) {
      const listener = security.secureListener(secureGrpc.host === '' ? '::' : secureGrpc.host, secureGrpc.port);
      if (listener) {
        const port = await this.xds!.listen(listener);
        log.info(`secure gRPC (xDS and CA) listening on ${formatListenAddress({ host: secureGrpc.host, port })}`);
      }
    }
    const material = security.servingCertificate();
    if (httpsAddress && material) {
      this.https = new DaemonHttpsServer(material, () => this.ready, ciphers.ciphers);
      security.onServingCertificate((m) => this.https?.update(m));
      const bound = await this.https.start(httpsAddress);
      log.info(`HTTPS listening on ${formatListenAddress(bound)}`);
    }
  }

  private checkRegistries(): string[] {
    const unknown = this.flags.registries.filter((r) => !REGISTRIES.includes(r));
    if (unknown.length > 0) {
      throw new DaemonStartError(`--registries: unknown registry ${unknown.map((u) => `"${u}"`).join(', ')} (choose from ${REGISTRIES.join(', ')})`);
    }
    return this.flags.registries;
  }

  private checkKeySetSettings(): KeySetSettings {
    try {
      return keySetSettingsFrom(this.settings);
    } catch (err) {
      if (err instanceof AuthnSettingError) throw new DaemonStartError(err.message);
      throw err;
    }
  }

  /**
   * The key sets the daemon inlines into jwt_authn (PILOT_JWT_ENABLE_REMOTE_JWKS): fetched before
   * xDS opens, fetched early when a RequestAuthentication arrives, refreshed periodically, and
   * pushed as a change of the policies using them when their keys change.
   */
  /**
   * jwt_authn, then the RBAC filters (DENY before ALLOW) on inbound HTTP chains; network RBAC
   * on inbound TCP chains. The trust domain is the default `cluster.local` until the mesh
   * config file is read.
   */
  private securityFilters(jwtAuthn: HttpFilterContributor): CoreContributions {
    const log = this.logging.scope('authorization');
    const options = { trustDomain: 'cluster.local', log };
    return {
      leadingHttpFilters: [jwtAuthn, new AuthzHttpFilterContributor(options)],
      trailingNetworkFilters: [new AuthzNetworkFilterContributor(options)],
    };
  }

  private async startKeySets(settings: KeySetSettings, firstPush: PushContext): Promise<DaemonKeySets> {
    const log = this.logging.scope('authn');
    this.keySets = new DaemonKeySets({
      ...settings,
      logger: log,
      observer: { fetched: (ok) => (ok ? this.metrics.jwksFetchSuccess : this.metrics.jwksFetchFail).inc() },
      currentPush: () => this.coordinator?.currentPush(),
      requestPush: (changes) => {
        log.info(`fetched key sets changed; pushing ${changes.map((c) => c.key).join(', ')}`);
        this.coordinator?.requestPush(changes);
      },
    });
    const keySets = this.keySets;
    this.unwatchPolicies = this.store.onChange((changes) => keySets.configChanged(changes, this.store.snapshot()));
    await keySets.start(firstPush);
    return keySets;
  }

  private async startConfigSources(orch: boolean): Promise<void> {
    const log = this.logging.scope('file');
    if (orch) {
      const inCluster = this.settings.string('ORCH_SERVICE_HOST') ?? '';
      if (this.flags.orchconfig === '' && inCluster === '') {
        const note = this.flags.configDir ? '; serving config from --configDir only' : '';
        this.logging.scope('orch').warn(`no orchestrator is configured (no --orchconfig, not running in a cluster); the Orch registry is empty${note}`);
      } else {
        this.logging.scope('orch').warn('the orchestrator registry is not available in this build yet; the Orch registry is empty');
      }
    }
    if (!this.flags.configDir) return;
    let limits;
    try {
      limits = configFileLimits(this.settings);
    } catch (err) {
      if (err instanceof ConfigLimitSettingError) throw new DaemonStartError(err.message);
      throw err;
    }
    this.fileSource = new FileConfigSource({
      dir: this.flags.configDir,
      kinds: this.container.get<KindRegistry>(KindRegistryToken),
      limits,
      store: this.store,
      logger: log,
      onRejected: (issue: ConfigIssue) => this.metrics.totalRejectedConfigs.inc({ type: issue.kind ?? 'file' }),
    });
    try {
      await this.fileSource.start();
    } catch (err) {
      throw new DaemonStartError(`--configDir: ${(err as Error).message}`);
    }
    const resources = [...this.store.snapshot().values()].reduce((n, list) => n + list.length, 0);
    log.info(`loaded ${resources} resources from ${this.flags.configDir}; watching for changes`);
  }

  private debugHandlers(): DebugHandler[] {
    const plugins = this.container.isBound(PluginStatusToken) ? this.container.getAll<PluginStatus>(PluginStatusToken) : [];
    return [
      { path: '/debug/syncz', description: 'each connected proxy: per type, the version and nonce sent and acknowledged', handle: () => ({ json: syncz(this.xds?.connections() ?? []) }) },
      {
        path: '/debug/config_dump',
        description: 'what a proxy was sent, as an Envoy config dump (?proxyID=<id>)',
        handle: (query) => {
          const id = query.get('proxyID');
          if (!id) return { status: 400, text: 'proxyID is required: /debug/config_dump?proxyID=<node id>\n' };
          const conn = findConnection(this.xds?.connections() ?? [], id);
          if (!conn) return { status: 404, text: `no connected proxy with ID ${id}\n` };
          return { json: configDump(conn) };
        },
      },
      configzHandler(() => this.store.snapshot()),
      {
        path: '/debug/config_files',
        description: 'each file under --configDir: the resources it contributes and why its content is rejected or skipped, if it is',
        handle: () => ({ json: this.fileSource?.status() ?? [] }),
      },
      registryzHandler(() => {
        const push = this.coordinator?.currentPush();
        if (!push) return [];
        return push.services.map((s) => ({ ...s, endpoints: Object.fromEntries(s.ports.map((p) => [p.number, push.endpoints(s.hostname, p.number)])) }));
      }),
      pluginsHandler(() => plugins),
    ];
  }
}
