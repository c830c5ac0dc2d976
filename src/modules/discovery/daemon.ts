import { grpcLibrary } from '../shared/grpc-library';
import { inject, injectable } from 'inversify';
import { GeneratorWarmUp } from './generator-warm-up';
import { MemoryConfigStore } from '../config';
import { ControlzServer, InProcessProfiler } from '../ctrlz';
import { DebugHttpServer } from '../debug';
import { Logging, LoggingToken } from '../logging';
import { MeshConfig, MeshNetworks } from '../mesh-config';
import { PushContext } from '../model/push-context';
import { DaemonMetrics, formatListenAddress, MonitoringServer } from '../monitoring';
import { SingletonControllers } from '../leader-election';
import { DaemonKeySets } from '../security/authn';
import { Settings, SettingsToken } from '../settings';
import { XdsServer } from '../xds/server';
import { WorkloadAutoRegistration } from './autoregistration';
import { DaemonConfigSources } from './config-sources';
import { DaemonAddresses, DaemonFlags, DaemonFlagsToken } from './daemon-flags';
import { DaemonSecurity } from './daemon-security';
import { DaemonHttpsServer } from './https-server';
import { orchestratorConfigured } from './orch-options';
import { PushCoordinator } from './push-coordinator';
import { DaemonReadiness } from './readiness';
import { DaemonXdsDebug } from './xds-debug-service';

export { DaemonFlags, DaemonFlagsToken, DaemonStartError } from './daemon-flags';

/** What `pilot-discovery discovery` resolves, in a scope holding its DaemonFlags. */
export const DaemonToken = Symbol.for('mesh.Daemon');

/**
 * `pilot-discovery discovery`: starts the config sources, the push pipeline, the xDS server and
 * the HTTP servers (DESIGN.md §2) in order, and stops them in order. Every service is made by the
 * container; resolving the daemon checks the flags, the settings and the mesh config file.
 */
@injectable()
export class Daemon {
  private unwatchPolicies: (() => void) | undefined;
  private readonly unwatchMesh: Array<() => void> = [];
  /** Pushes reach the key sets from the moment they start (before, there is nothing to refresh). */
  private keySetsFollowPushes = false;

  constructor(
    @inject(DaemonFlagsToken) private readonly flags: DaemonFlags,
    @inject(MeshConfig) private readonly meshConfig: MeshConfig,
    @inject(MeshNetworks) private readonly meshNetworks: MeshNetworks,
    @inject(DaemonKeySets) private readonly keySets: DaemonKeySets,
    @inject(DaemonAddresses) private readonly addresses: DaemonAddresses,
    @inject(LoggingToken) private readonly logging: Logging,
    @inject(DaemonMetrics) private readonly metrics: DaemonMetrics,
    @inject(DaemonReadiness) private readonly readiness: DaemonReadiness,
    @inject(DebugHttpServer) private readonly http: DebugHttpServer,
    @inject(MonitoringServer) private readonly monitoring: MonitoringServer,
    @inject(MemoryConfigStore) private readonly store: MemoryConfigStore,
    @inject(DaemonConfigSources) private readonly sources: DaemonConfigSources,
    @inject(PushCoordinator) private readonly coordinator: PushCoordinator,
    @inject(DaemonSecurity) private readonly security: DaemonSecurity,
    @inject(XdsServer) private readonly xds: XdsServer,
    @inject(DaemonHttpsServer) private readonly https: DaemonHttpsServer,
    @inject(SingletonControllers) private readonly singletons: SingletonControllers,
    @inject(SettingsToken) private readonly settings: Settings,
    @inject(WorkloadAutoRegistration) private readonly autoRegistration: WorkloadAutoRegistration,
    @inject(DaemonXdsDebug) private readonly xdsDebug: DaemonXdsDebug,
    @inject(ControlzServer) private readonly ctrlz: ControlzServer,
    @inject(InProcessProfiler) private readonly profiler: InProcessProfiler,
    @inject(GeneratorWarmUp) private readonly warmUp: GeneratorWarmUp,
  ) {}

  async start(): Promise<void> {
    const log = this.logging.scope('default');
    // HTTP first, so /ready can say "not ready" while config loads.
    log.info(`HTTP discovery listening on ${formatListenAddress(await this.http.start())}`);
    log.info(`monitoring listening on ${formatListenAddress(await this.monitoring.start())}`);
    await this.startIntrospection();

    await this.sources.start();
    // After the sources: the orchestrator's mesh ConfigMap is a layer of the mesh config.
    const mesh = this.meshConfig.current();
    log.info(`mesh config: trust domain ${mesh.trustDomain}, root namespace ${mesh.rootNamespace}`);
    const firstPush = this.coordinator.start((push, change, at) => {
      if (this.keySetsFollowPushes) this.keySets.pushContextBuilt(push);
      this.xds.pushAll(push, change, at);
    });
    this.followMeshConfig();
    await this.security.start();
    await this.startKeySets(firstPush);
    this.warmUp.warm(this.coordinator.currentPush() ?? firstPush);

    // Every debug page is answerable over xDS too (the incumbent's debug types).
    this.xds.answerDebugRequestsWith(this.xdsDebug);
    const grpcAddress = this.addresses.grpc;
    const grpcPort = await this.xds.listen({
      host: grpcAddress.host === '' ? '::' : grpcAddress.host,
      port: grpcAddress.port,
      credentials: grpcLibrary().ServerCredentials.createInsecure(),
      auth: this.security.plaintextAuth(),
    });
    log.info(`xDS (gRPC) listening on ${formatListenAddress({ host: grpcAddress.host, port: grpcPort })}`);
    await this.startSecureAddresses();
    // After the HTTPS address: the leader patches webhook configurations to point at it.
    if (orchestratorConfigured(this.flags, this.settings)) await this.singletons.start();
    this.autoRegistration.start();

    this.readiness.set(true);
    const startup = this.metrics.markReady();
    log.info(`daemon ready in ${startup.toFixed(3)}s`);
  }

  /** Graceful stop (SIGTERM): not ready, close streams, stop sources and servers within `--shutdownDuration`. */
  async stop(): Promise<void> {
    const log = this.logging.scope('default');
    this.readiness.set(false);
    log.info(`shutting down (grace ${this.flags.shutdownDurationMs} ms)`);
    // First, while the orchestrator client still works: the controllers end their writes, then the Leases are released.
    await this.singletons.stop();
    this.sources.stop();
    for (const stop of this.unwatchMesh.splice(0)) stop();
    this.meshConfig.stop();
    this.meshNetworks.stop();
    this.autoRegistration.stop();
    this.unwatchPolicies?.();
    this.keySets.stop();
    this.coordinator.stop();
    await this.xds.stop(this.flags.shutdownDurationMs);
    this.security.stop();
    // The profiler first: a CPU profile in progress ends (its request answered) so its server can close.
    await this.profiler.stop();
    await Promise.all([this.http.stop(), this.monitoring.stop(), this.https.stop(), this.ctrlz.stop()]);
    log.info('shutdown complete');
  }

  /**
   * The introspection facility (ControlZ), early so log levels can be changed while the daemon
   * starts, and the profiler with `--profile`. As with the incumbent, a ControlZ port that
   * cannot be bound is a warning, not a reason to stay down.
   */
  private async startIntrospection(): Promise<void> {
    const log = this.logging.scope('default');
    if (this.flags.profile) {
      await this.profiler.start();
      log.info('profiling on: /debug/pprof/ on the ControlZ and HTTP debug ports');
    }
    try {
      log.info(`ControlZ listening on ${formatListenAddress(await this.ctrlz.start())}`);
    } catch (err) {
      log.warn(`ControlZ not started: ${(err as Error).message}`);
    }
  }

  /**
   * The mesh config and mesh networks files are watched from now on; a change (file or
   * ConfigMap layer) is a full push, so every proxy gets config built with the new values.
   */
  private followMeshConfig(): void {
    const log = this.logging.scope('default');
    this.unwatchMesh.push(
      this.meshConfig.onChange((now, before) => {
        if (now.trustDomain !== before.trustDomain || now.rootNamespace !== before.rootNamespace) {
          log.info(`mesh config: trust domain ${now.trustDomain}, root namespace ${now.rootNamespace}`);
        }
        this.coordinator.requestFullPush('global');
      }),
      this.meshNetworks.onChange(() => this.coordinator.requestFullPush('networks')),
    );
    this.meshConfig.watch();
    this.meshNetworks.watch();
  }

  /**
   * The key sets the daemon inlines into jwt_authn (PILOT_JWT_ENABLE_REMOTE_JWKS): fetched before
   * xDS opens, fetched early when a RequestAuthentication arrives, refreshed periodically, and
   * pushed as a change of the policies using them when their keys change.
   */
  private async startKeySets(firstPush: PushContext): Promise<void> {
    this.keySetsFollowPushes = true;
    this.unwatchPolicies = this.store.onChange((changes) => this.keySets.configChanged(changes, this.store.snapshot()));
    await this.keySets.start(firstPush, this.coordinator);
  }

  /** The TLS gRPC address (xDS and CA) and the HTTPS address, when the daemon has a certificate. */
  private async startSecureAddresses(): Promise<void> {
    const log = this.logging.scope('default');
    const { secureGrpc, https } = this.addresses;
    if (secureGrpc) {
      const listener = this.security.secureListener(secureGrpc.host === '' ? '::' : secureGrpc.host, secureGrpc.port);
      if (listener) {
        const port = await this.xds.listen(listener);
        log.info(`secure gRPC (xDS and CA) listening on ${formatListenAddress({ host: secureGrpc.host, port })}`);
      }
    }
    const material = this.security.servingCertificate();
    if (https && material) {
      this.security.onServingCertificate((m) => this.https.update(m));
      const bound = await this.https.start(https, material);
      log.info(`HTTPS listening on ${formatListenAddress(bound)}`);
    }
  }
}
