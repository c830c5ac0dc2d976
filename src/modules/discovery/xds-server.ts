import * as os from 'node:os';
import { inject, injectable, named } from 'inversify';
import { XdsGenerators } from '../generators';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { XdsGenerator } from '../model/generator';
import { PushContext } from '../model/push-context';
import { DaemonMetrics } from '../monitoring';
import { ContributionProvider } from '../plugins/contribution-provider';
import { Settings, SettingsToken } from '../settings';
import { XdsConnectionListener } from '../xds/connection-listener';
import { XdsObserver } from '../xds/observer';
import { pushThrottleFrom } from '../xds/push-queue';
import { requestsPerSecondFrom } from '../xds/rate-limiter';
import { XdsServerOptions } from '../xds/server';
import { ControlPlaneInstance } from './control-plane-instance';
import { DaemonFlags, DaemonFlagsToken } from './daemon-flags';
import { metricsObserver } from './observers';
import { PushCoordinator } from './push-coordinator';

/**
 * The daemon's xDS server options: the generators, MESH_DELTA_XDS, the gRPC limits
 * (MESH_GPRC_MAXRECVMSGSIZE, MESH_GPRC_MAXSTREAMS), the keepalive flags, PILOT_PUSH_THROTTLE and
 * PILOT_MAX_REQUESTS_PER_SECOND (scaled to the cores), its metrics, and the push in force.
 */
@injectable()
export class XdsServerOptionsFromSettings implements XdsServerOptions {
  readonly generators: ReadonlyMap<string, XdsGenerator>;
  readonly deltaEnabled: boolean;
  readonly maxReceiveMessageBytes: number;
  readonly maxConcurrentStreams: number;
  readonly keepaliveIntervalMs: number;
  readonly keepaliveTimeoutMs: number;
  readonly maxConnectionAgeMs: number;
  readonly pushConcurrency: number;
  readonly newStreamsPerSecond: number;
  readonly controlPlaneId: string;
  readonly logger: ScopedLogger;
  readonly observer: XdsObserver;
  readonly currentPush: () => PushContext | undefined;
  readonly connectionListeners: readonly XdsConnectionListener[];

  constructor(
    @inject(XdsGenerators) generators: XdsGenerators,
    @inject(DaemonFlagsToken) flags: DaemonFlags,
    @inject(SettingsToken) settings: Settings,
    @inject(LoggingToken) logging: Logging,
    @inject(DaemonMetrics) metrics: DaemonMetrics,
    @inject(PushCoordinator) coordinator: PushCoordinator,
    @inject(ContributionProvider) @named(XdsConnectionListener) listeners: ContributionProvider<XdsConnectionListener>,
    @inject(ControlPlaneInstance) instance: ControlPlaneInstance,
  ) {
    this.generators = generators.byName;
    this.deltaEnabled = settings.bool('MESH_DELTA_XDS');
    this.maxReceiveMessageBytes = settings.int('MESH_GPRC_MAXRECVMSGSIZE');
    this.maxConcurrentStreams = settings.int('MESH_GPRC_MAXSTREAMS');
    this.keepaliveIntervalMs = flags.keepaliveIntervalMs;
    this.keepaliveTimeoutMs = flags.keepaliveTimeoutMs;
    this.maxConnectionAgeMs = flags.keepaliveMaxServerConnectionAgeMs;
    this.pushConcurrency = pushThrottleFrom(settings.int('PILOT_PUSH_THROTTLE'), os.cpus().length);
    this.newStreamsPerSecond = requestsPerSecondFrom(settings.float('PILOT_MAX_REQUESTS_PER_SECOND'), os.cpus().length);
    this.controlPlaneId = instance.identifier();
    this.logger = logging.scope('ads');
    this.observer = metricsObserver(metrics);
    this.currentPush = () => coordinator.currentPush();
    this.connectionListeners = listeners.getContributions();
  }
}
