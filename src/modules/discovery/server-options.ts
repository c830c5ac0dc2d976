/** The daemon's HTTP servers' options: addresses from the flags, switches from the settings. */
import type * as http from 'node:http';
import { inject, injectable } from 'inversify';
import { ControlzOptions } from '../ctrlz';
import { DebugHandler, DebugHttpServer, DebugHttpServerOptions, Readiness } from '../debug';
import { Logging, LoggingToken } from '../logging';
import { DaemonMetrics, ListenAddress, MetricsSource, MonitoringServerOptions } from '../monitoring';
import { Settings, SettingsToken } from '../settings';
import { DaemonAddresses, DaemonFlags, DaemonFlagsToken } from './daemon-flags';
import { DaemonDebugHandlers } from './debug-handlers';
import { DaemonReadiness } from './readiness';

/** `--httpAddr`: `/ready`, and the debug pages unless ENABLE_DEBUG_ON_HTTP is false. */
@injectable()
export class DebugServerOptionsFromSettings implements DebugHttpServerOptions {
  readonly address: ListenAddress;
  readonly debugEnabled: boolean;
  readonly isReady: () => Readiness;
  readonly handlers: readonly DebugHandler[];
  readonly onHandlerError: (path: string, err: unknown) => void;

  constructor(
    @inject(DaemonAddresses) addresses: DaemonAddresses,
    @inject(SettingsToken) settings: Settings,
    @inject(DaemonReadiness) readiness: DaemonReadiness,
    @inject(DaemonDebugHandlers) handlers: DaemonDebugHandlers,
    @inject(LoggingToken) logging: Logging,
  ) {
    const log = logging.scope('default');
    this.address = addresses.http;
    this.debugEnabled = settings.bool('ENABLE_DEBUG_ON_HTTP');
    this.isReady = () => readiness.state();
    this.handlers = handlers.handlers();
    this.onHandlerError = (path, err) => log.error(`debug handler ${path} failed: ${(err as Error).message}`);
  }
}

/** `--monitoringAddr`: the metrics (METRICS_LOCALHOST_ACCESS_ONLY), and the debug pages too, as the incumbent serves them there. */
@injectable()
export class MonitoringOptionsFromSettings implements MonitoringServerOptions {
  readonly address: ListenAddress;
  readonly metrics: MetricsSource;
  readonly localhostOnly: boolean;
  readonly fallback: http.RequestListener;

  constructor(
    @inject(DaemonAddresses) addresses: DaemonAddresses,
    @inject(SettingsToken) settings: Settings,
    @inject(DaemonMetrics) metrics: DaemonMetrics,
    @inject(DebugHttpServer) debug: DebugHttpServer,
  ) {
    this.address = addresses.monitoring;
    this.metrics = metrics;
    this.localhostOnly = settings.bool('METRICS_LOCALHOST_ACCESS_ONLY');
    // `pilot-discovery request` sends its debug requests to this port.
    this.fallback = debug.listener;
  }
}

/** `--ctrlz_address`/`--ctrlz_port`: the introspection facility, with the profiles when `--profile` is set. */
@injectable()
export class ControlzOptionsFromFlags implements ControlzOptions {
  readonly address: ListenAddress;
  readonly profile: boolean;
  readonly metrics: ControlzOptions['metrics'];

  constructor(
    @inject(DaemonAddresses) addresses: DaemonAddresses,
    @inject(DaemonFlagsToken) flags: DaemonFlags,
    @inject(DaemonMetrics) metrics: DaemonMetrics,
  ) {
    this.address = addresses.ctrlz;
    this.profile = flags.profile;
    this.metrics = metrics.registry;
  }
}
