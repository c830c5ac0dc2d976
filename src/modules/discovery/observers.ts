import { inject, injectable } from 'inversify';
import { ConfigConflict, MemoryConfigStoreOptions } from '../config/memory-store';
import { ORCH_SOURCE_PREFIX } from '../config/orch-source';
import { Logging, LoggingToken, ScopedLogger } from '../logging';
import { DaemonMetrics, labelsOf } from '../monitoring';
import { Settings } from '../settings';
import { CachedType, XdsCache } from '../model/xds-cache';
import { XdsObserver } from '../xds/observer';
import { PushPipelineObserver } from './push-coordinator';

const REJECT_GAUGE = {
  lds: 'xdsLdsReject',
  rds: 'xdsRdsReject',
  cds: 'xdsCdsReject',
  eds: 'xdsEdsReject',
} as const;

/** The xDS server's reports as the spec's metrics. */
export function metricsObserver(m: DaemonMetrics): XdsObserver {
  const rejectedBy = new Map<string, string>();
  // Recorded per response and proxy of a push: deferred, off the push's path (see DeferredMetrics).
  const later = m.deferred;
  const ofType = labelsOf('type');
  const encodedLabels = new Map<string, { reused: object; encoded: object }>();
  const encodedOf = (type: string) => {
    let labels = encodedLabels.get(type);
    if (!labels) encodedLabels.set(type, (labels = { reused: Object.freeze({ type, result: 'reused' }), encoded: Object.freeze({ type, result: 'encoded' }) }));
    return labels;
  };
  return {
    connections: (delta) => m.xdsClients.inc({ version: 'unknown' }, delta),
    pushed: (type, bytes, buildSeconds, sendSeconds) => {
      const labels = ofType(type);
      later.inc(m.xdsPushes, labels);
      later.observe(m.xdsConfigSize, labels, bytes);
      later.observe(m.xdsPushTime, labels, buildSeconds + sendSeconds);
      later.observe(m.xdsSendTime, undefined, sendSeconds);
    },
    encoded: (type, reused) => later.inc(m.xdsSharedEncodings, reused ? encodedOf(type).reused : encodedOf(type).encoded),
    sendError: (type) => m.xdsPushes.inc({ type: `${type}_senderr` }),
    buildError: (type) => m.xdsPushes.inc({ type: `${type}_builderr` }),
    rejected: (type, node, message) => {
      m.totalXdsRejects.inc({ type });
      const err = message.slice(0, 200);
      if (type === 'nds') return; // no per-node reject gauge for the name table (none in the spec)
      rejectedBy.set(`${type}/${node}`, err);
      m[REJECT_GAUGE[type]].set({ node, err }, 1);
    },
    rejectCleared: (type, node) => {
      const err = type === 'nds' ? undefined : rejectedBy.get(`${type}/${node}`);
      if (type === 'nds' || err === undefined) return;
      rejectedBy.delete(`${type}/${node}`);
      m[REJECT_GAUGE[type]].remove({ node, err });
    },
    expiredNonce: (type) => m.xdsExpiredNonce.inc({ type }),
    queued: (seconds) => later.observe(m.proxyQueueTime, undefined, seconds),
    converged: (seconds) => later.observe(m.proxyConvergenceTime, undefined, seconds),
    internalError: () => m.totalXdsInternalErrors.inc(),
    writeTimeout: () => m.xdsWriteTimeout.inc(),
  };
}

/** The push pipeline's reports as metrics and log lines. */
@injectable()
export class PipelineMetricsObserver implements PushPipelineObserver {
  private readonly logger: ScopedLogger;

  constructor(
    @inject(DaemonMetrics) private readonly m: DaemonMetrics,
    @inject(LoggingToken) logging: Logging,
  ) {
    this.logger = logging.scope('model');
  }

  inboundUpdate(type: 'config' | 'eds' | 'svc' | 'svcdelete'): void {
    this.m.inboundUpdates.inc({ type });
  }

  debounced(seconds: number): void {
    this.m.debounceTime.observe(seconds);
  }

  pushContextBuilt(seconds: number, services: number, virtualServices: number): void {
    this.m.pushContextInitSeconds.observe(seconds);
    this.m.services.set(services);
    this.m.virtualServices.set(virtualServices);
  }

  pushTriggered(reason: string): void {
    this.m.pushTriggers.inc({ type: reason as never });
  }

  duplicateHost(host: string, kept: string, ignored: string): void {
    this.m.duplicateEnvoyClusters.inc();
    this.logger.warn(`host ${host} is declared by ${kept} and ${ignored}; ${ignored} is ignored for it`);
  }
}

/**
 * The config store's conflicts (two sources declaring one resource) as ignored configs, and a
 * warning; files (layer 0) overlay the orchestrator's resources (layer 1).
 */
@injectable()
export class StoreOptionsWithMetrics implements MemoryConfigStoreOptions {
  readonly logger: ScopedLogger;
  readonly onConflict: (conflict: ConfigConflict) => void;
  readonly layerOf = (sourceId: string) => (sourceId.startsWith(ORCH_SOURCE_PREFIX) ? 1 : 0);

  constructor(@inject(DaemonMetrics) metrics: DaemonMetrics, @inject(LoggingToken) logging: Logging) {
    const logger = logging.scope('model');
    this.logger = logger;
    this.onConflict = (c) => {
      metrics.totalRejectedConfigs.inc({ type: c.key.split('/')[0] });
      logger.warn(`${c.key} is declared by ${[c.winner, ...c.ignored].join(' and ')}; serving the one from ${c.winner}`);
    };
  }
}

/**
 * The xDS cache per PILOT_ENABLE_XDS_CACHE (off: no cache), PILOT_ENABLE_CDS_CACHE,
 * PILOT_ENABLE_RDS_CACHE and PILOT_XDS_CACHE_SIZE; hit and miss counts only with
 * PILOT_XDS_CACHE_STATS, as they cost a little on every read.
 */
export function xdsCacheFrom(settings: Settings, m: DaemonMetrics): XdsCache | undefined {
  if (!settings.bool('PILOT_ENABLE_XDS_CACHE')) return undefined;
  // A proxy's own inbound listeners (lds) are kept too, so a push that does not touch them
  // does not rebuild them for every proxy.
  const types = new Set<CachedType>(['eds', 'lds']);
  if (settings.bool('PILOT_ENABLE_CDS_CACHE')) types.add('cds');
  if (settings.bool('PILOT_ENABLE_RDS_CACHE')) types.add('rds');
  const stats = settings.bool('PILOT_XDS_CACHE_STATS');
  const cacheTypeLabels = labelsOf('type');
  return new XdsCache({
    maxEntries: Math.max(1, settings.int('PILOT_XDS_CACHE_SIZE')),
    types,
    observer: {
      read: (hit) => {
        if (stats) m.xdsCacheReads.inc({ type: hit ? 'hit' : 'miss' });
      },
      evicted: (reason, count) => m.xdsCacheEvictions.inc({ type: reason }, count),
      size: (type, entries) => m.deferred.set(m.xdsCacheSize, cacheTypeLabels(type), entries),
    },
  });
}
