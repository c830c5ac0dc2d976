import { performance } from 'node:perf_hooks';
import { inject, injectable } from 'inversify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from '../shared/prom-client';
import { DeferredMetrics } from './deferred-metrics';

/*
 * The control-plane core's metrics, named exactly as in spec/01 ("Events"). Kinds map as
 * Sum = Counter, LastValue = Gauge, Distribution = Histogram. Counters keep the spec's
 * names: no `_total` suffix is added (prom-client adds none), as the incumbent exports them.
 *
 * Every DaemonMetrics owns its own Registry instead of prom-client's global one, so several
 * daemons (tests) can live in one process without "metric already registered" errors.
 *
 * Label values used by convention (the types below document them; prom-client only checks
 * label names at compile time):
 *   type on xDS metrics          cds | eds | lds | rds (XdsType)
 *   type on pilot_xds_pushes     XdsType, or `<XdsType>_senderr` / `<XdsType>_builderr`
 *   type on pilot_push_triggers  the push reason (PushTrigger)
 *   type on pilot_inbound_updates config | eds | svc | svcdelete
 *   type on pilot_total_rejected_configs  the resource kind, or `file` for unreadable files
 *   type on xds_cache_reads      hit | miss; on xds_cache_evictions the reason; on
 *                                xds_cache_size the cached xDS type
 *   version on pilot_xds         the connected proxy's mesh version (`unknown` if it sent none)
 */

export type XdsType = 'cds' | 'eds' | 'lds' | 'rds';
export type XdsPushType = XdsType | `${XdsType}_senderr` | `${XdsType}_builderr`;
export type PushTrigger =
  | 'endpoint'
  | 'config'
  | 'service'
  | 'proxy'
  | 'global'
  | 'unknown'
  | 'debug'
  | 'secret'
  | 'networks'
  | 'proxyrequest'
  | 'namespace'
  | 'clusterupdate'
  | (string & {});
export type InboundUpdateType = 'config' | 'eds' | 'svc' | 'svcdelete';
export type CacheReadType = 'hit' | 'miss';

/** Bound by the monitoring module (component and version of this build). */
export const DaemonMetricsOptionsToken = Symbol.for('mesh.DaemonMetricsOptions');
export interface DaemonMetricsOptions {
  /** Component name for mesh_build, e.g. `pilot-discovery`. */
  component: string;
  /** Build version, for mesh_build{tag} and pilot_info{version}. */
  version: string;
  /** Process start (ms since epoch) for uptime and startup duration; default: when Node started. */
  startTime?: number;
  /** Clock (ms since epoch); tests replace it. */
  now?: () => number;
}

// Buckets are the incumbent's, so dashboards written for it keep working.
const PUSH_SECONDS = [0.01, 0.1, 1, 3, 5, 10, 20, 30];
const CONVERGENCE_SECONDS = [0.1, 0.5, 1, 3, 5, 10, 20, 30];
const PUSHCONTEXT_SECONDS = [0.01, 0.1, 0.5, 1, 3, 5];
const CONFIG_SIZE_BYTES = [1, 10000, 1000000, 4000000, 10000000, 40000000];

@injectable()
export class DaemonMetrics {
  readonly registry = new Registry();
  /**
   * Observations of the push path (pilot_xds_pushes, pilot_xds_push_time, pilot_xds_send_time,
   * pilot_xds_config_size_bytes, pilot_xds_shared_encodings, pilot_proxy_convergence_time,
   * pilot_proxy_queue_time) made off the push's path; any read of those metrics sees them.
   */
  readonly deferred = new DeferredMetrics();
  readonly contentType = this.registry.contentType;
  readonly startTime: number;
  private readonly now: () => number;
  private readyAt: number | undefined;

  // xDS serving
  readonly xdsClients: Gauge<'version'>;
  readonly xdsPushes: Counter<'type'>;
  readonly xdsPushTime: Histogram<'type'>;
  readonly xdsSendTime: Histogram;
  readonly xdsConfigSize: Histogram<'type'>;
  readonly proxyConvergenceTime: Histogram;
  readonly proxyQueueTime: Histogram;
  readonly debounceTime: Histogram;
  readonly pushContextInitSeconds: Histogram;
  readonly pushTriggers: Counter<'type'>;
  readonly inboundUpdates: Counter<'type'>;
  readonly xdsExpiredNonce: Counter<'type'>;
  readonly totalXdsRejects: Counter<'type'>;
  readonly xdsCdsReject: Gauge<'node' | 'err'>;
  readonly xdsEdsReject: Gauge<'node' | 'err'>;
  readonly xdsLdsReject: Gauge<'node' | 'err'>;
  readonly xdsRdsReject: Gauge<'node' | 'err'>;
  readonly totalXdsInternalErrors: Counter;
  readonly xdsWriteTimeout: Counter;
  readonly xdsSharedEncodings: Counter<'type' | 'result'>;

  // config and push context
  readonly totalRejectedConfigs: Counter<'type'>;
  readonly services: Gauge;
  readonly virtualServices: Gauge;
  readonly conflictOutboundListenerTcpOverCurrentTcp: Gauge;
  readonly conflictInboundListener: Gauge;
  readonly duplicateEnvoyClusters: Gauge;
  readonly edsNoInstances: Gauge;
  readonly destinationRuleSubsets: Gauge;
  readonly virtualServiceDuplicateDomain: Gauge;

  // xDS cache
  readonly xdsCacheReads: Counter<'type'>;
  readonly xdsCacheEvictions: Counter<'type'>;
  readonly xdsCacheSize: Gauge<'type'>;
  readonly xdsCacheDependentConfigSize: Gauge;

  // request authentication: the daemon's key-set fetches
  readonly jwksFetchSuccess: Counter;
  readonly jwksFetchFail: Counter;

  // process and build
  readonly uptimeSeconds: Gauge;
  readonly build: Gauge<'component' | 'tag'>;
  readonly info: Gauge<'version'>;
  readonly startupDurationSeconds: Gauge;

  constructor(@inject(DaemonMetricsOptionsToken) options: DaemonMetricsOptions) {
    this.now = options.now ?? Date.now;
    this.startTime = options.startTime ?? performance.timeOrigin;
    const registers = [this.registry];
    const counter = <L extends string = string>(name: string, help: string, labelNames: L[] = []) =>
      new Counter<L>({ name, help, labelNames, registers });
    const gauge = <L extends string = string>(name: string, help: string, labelNames: L[] = []) =>
      new Gauge<L>({ name, help, labelNames, registers });
    const histogram = <L extends string = string>(name: string, help: string, buckets: number[], labelNames: L[] = []) =>
      new Histogram<L>({ name, help, buckets, labelNames, registers });
    // Metrics recorded once per response or proxy of a push: they may be given observations
    // through `deferred`, which they fold in before any read.
    const deferred = this.deferred;
    const perPushCounter = <L extends string = string>(name: string, help: string, labelNames: L[] = []) =>
      new Counter<L>({ name, help, labelNames, registers, collect: () => deferred.flush() });
    const perPushHistogram = <L extends string = string>(name: string, help: string, buckets: number[], labelNames: L[] = []) =>
      new Histogram<L>({ name, help, buckets, labelNames, registers, collect: () => deferred.flush() });
    const perPushGauge = <L extends string = string>(name: string, help: string, labelNames: L[] = []) =>
      new Gauge<L>({ name, help, labelNames, registers, collect: () => deferred.flush() });

    this.xdsClients = gauge('pilot_xds', 'Number of endpoints connected to this daemon using xDS.', ['version']);
    this.xdsPushes = perPushCounter('pilot_xds_pushes', 'xDS pushes, and build and send errors, for lds, rds, cds and eds.', ['type']);
    this.xdsPushTime = perPushHistogram('pilot_xds_push_time', 'Total time in seconds Pilot takes to push lds, rds, cds and eds.', PUSH_SECONDS, ['type']);
    this.xdsSendTime = perPushHistogram('pilot_xds_send_time', 'Total time in seconds Pilot takes to send generated configuration.', PUSH_SECONDS);
    this.xdsConfigSize = perPushHistogram('pilot_xds_config_size_bytes', 'Distribution of configuration sizes pushed to clients.', CONFIG_SIZE_BYTES, ['type']);
    this.proxyConvergenceTime = perPushHistogram(
      'pilot_proxy_convergence_time',
      'Delay in seconds between config change and a proxy receiving all required configuration.',
      CONVERGENCE_SECONDS,
    );
    this.proxyQueueTime = perPushHistogram('pilot_proxy_queue_time', 'Time in seconds a proxy is in the push queue before being dequeued.', CONVERGENCE_SECONDS);
    this.debounceTime = histogram(
      'pilot_debounce_time',
      'Delay in seconds between the first config enters debouncing and the merged push request is pushed into the push queue.',
      PUSH_SECONDS,
    );
    this.pushContextInitSeconds = histogram('pilot_pushcontext_init_seconds', 'Total time in seconds Pilot takes to init pushContext.', PUSHCONTEXT_SECONDS);
    this.pushTriggers = counter('pilot_push_triggers', 'Total number of times a push was triggered, labeled by reason for the push.', ['type']);
    this.inboundUpdates = counter('pilot_inbound_updates', 'Total number of updates received by pilot.', ['type']);
    this.xdsExpiredNonce = counter('pilot_xds_expired_nonce', 'Total number of xDS requests with an expired nonce.', ['type']);
    this.totalXdsRejects = counter('pilot_total_xds_rejects', 'Total number of xDS responses from pilot rejected by proxy.', ['type']);
    // Gauges, not counters: how many proxies are rejecting right now (set 1, remove on ACK).
    this.xdsCdsReject = gauge('pilot_xds_cds_reject', 'Proxies currently rejecting CDS configuration, by node and error.', ['node', 'err']);
    this.xdsEdsReject = gauge('pilot_xds_eds_reject', 'Proxies currently rejecting EDS configuration, by node and error.', ['node', 'err']);
    this.xdsLdsReject = gauge('pilot_xds_lds_reject', 'Proxies currently rejecting LDS configuration, by node and error.', ['node', 'err']);
    this.xdsRdsReject = gauge('pilot_xds_rds_reject', 'Proxies currently rejecting RDS configuration, by node and error.', ['node', 'err']);
    this.totalXdsInternalErrors = counter('pilot_total_xds_internal_errors', 'Total number of internal xDS errors in pilot.');
    this.xdsWriteTimeout = counter('pilot_xds_write_timeout', 'Pilot xDS response write timeouts.');
    this.xdsSharedEncodings = perPushCounter(
      'pilot_xds_shared_encodings',
      'xDS responses written, by type: encoded for the stream, or reused from another stream with the same response.',
      ['type', 'result'],
    );

    this.totalRejectedConfigs = counter('pilot_total_rejected_configs', 'Total number of configs that Pilot had to reject or ignore.', ['type']);
    this.services = gauge('pilot_services', 'Total services known to pilot.');
    this.virtualServices = gauge('pilot_virt_services', 'Total virtual services known to pilot.');
    this.conflictOutboundListenerTcpOverCurrentTcp = gauge(
      'pilot_conflict_outbound_listener_tcp_over_current_tcp',
      'Number of conflicting tcp listeners with current tcp listener.',
    );
    this.conflictInboundListener = gauge('pilot_conflict_inbound_listener', 'Number of conflicting inbound listeners.');
    this.duplicateEnvoyClusters = gauge(
      'pilot_duplicate_envoy_clusters',
      'Duplicate envoy clusters caused by service entries with same hostname.',
    );
    this.edsNoInstances = gauge('pilot_eds_no_instances', 'Number of clusters without instances.');
    this.destinationRuleSubsets = gauge('pilot_destrule_subsets', 'Duplicate subsets across destination rules for same host.');
    this.virtualServiceDuplicateDomain = gauge('pilot_vservice_dup_domain', 'Virtual services with dup domains.');

    this.xdsCacheReads = counter('xds_cache_reads', 'Total number of xds cache reads.', ['type']);
    this.xdsCacheEvictions = counter('xds_cache_evictions', 'Total number of xds cache evictions.', ['type']);
    // Set on every cache miss, thousands of times in a connect storm: deferred like the per-push metrics.
    this.xdsCacheSize = perPushGauge('xds_cache_size', 'Current size of xds cache.', ['type']);
    this.xdsCacheDependentConfigSize = gauge('xds_cache_dependent_config_size', 'Current size of dependent configs.');

    this.jwksFetchSuccess = counter('pilot_jwks_resolver_network_fetch_success_total', 'Total number of successful network fetches by the daemon\'s key-set resolver.');
    this.jwksFetchFail = counter('pilot_jwks_resolver_network_fetch_fail_total', 'Total number of failed network fetches by the daemon\'s key-set resolver.');

    const startTime = this.startTime;
    const now = this.now;
    // Computed at scrape time, so nothing has to tick.
    this.uptimeSeconds = new Gauge({
      name: 'meshd_uptime_seconds',
      help: 'Current meshd server uptime in seconds.',
      registers,
      collect() {
        this.set((now() - startTime) / 1000);
      },
    });
    this.build = gauge('mesh_build', 'Mesh component build info.', ['component', 'tag']);
    this.build.set({ component: options.component, tag: options.version }, 1);
    this.info = gauge('pilot_info', 'Pilot version and build information.', ['version']);
    this.info.set({ version: options.version }, 1);
    this.startupDurationSeconds = gauge('startup_duration_seconds', 'The time from the process starting to being marked ready.');

    collectDefaultMetrics({ register: this.registry });
  }

  /** The reject gauge for one xDS type. */
  xdsReject(type: XdsType): Gauge<'node' | 'err'> {
    return { cds: this.xdsCdsReject, eds: this.xdsEdsReject, lds: this.xdsLdsReject, rds: this.xdsRdsReject }[type];
  }

  /** Records startup_duration_seconds the first time the daemon becomes ready; later calls change nothing. */
  markReady(at: number = this.now()): number {
    if (this.readyAt === undefined) {
      this.readyAt = at;
      this.startupDurationSeconds.set((at - this.startTime) / 1000);
    }
    return (this.readyAt - this.startTime) / 1000;
  }

  /** Prometheus text exposition of everything in this registry. */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
