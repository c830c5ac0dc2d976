/**
 * The orchestrator controllers' metrics, named as in spec/01 ("Events"), on the daemon's
 * registry: watch events of the config source and of the registry, sync errors, and the work
 * queues' depth, latency and handling time (only with MESH_ENABLE_CONTROLLER_QUEUE_METRICS).
 */
import { inject, injectable } from 'inversify';
import { Counter, Gauge, Histogram } from '../shared/prom-client';
import { DaemonMetrics } from '../monitoring';
import { Settings, SettingsToken } from '../settings';
import { QueueObserver } from './work-queue';

/** Event labels as the incumbent writes them. */
export type WatchEvent = 'add' | 'update' | 'delete';

// The incumbent's buckets for queue latency and duration (seconds).
const QUEUE_SECONDS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 0.001, 0.01, 0.1, 1, 10];

@injectable()
export class OrchMetrics {
  /** pilot_k8s_cfg_events{type=<Kind>, event}: custom resource events of the config source. */
  readonly cfgEvents: Counter<'type' | 'event'>;
  /** pilot_k8s_reg_events{type=<resource>, event}: Service, EndpointSlice, Pod, Node, Namespace events. */
  readonly regEvents: Counter<'type' | 'event'>;
  readonly syncErrors: Counter;
  private readonly queueDepth: Gauge<'name'>;
  private readonly queueLatency: Histogram<'name'>;
  private readonly queueDuration: Histogram<'name'>;
  private readonly queueMetrics: boolean;

  constructor(@inject(DaemonMetrics) daemon: DaemonMetrics, @inject(SettingsToken) settings: Settings) {
    const registers = [daemon.registry];
    this.cfgEvents = new Counter({ name: 'pilot_k8s_cfg_events', help: 'Events from the orchestrator config registry.', labelNames: ['type', 'event'], registers });
    this.regEvents = new Counter({ name: 'pilot_k8s_reg_events', help: 'Events from the orchestrator service registry.', labelNames: ['type', 'event'], registers });
    this.syncErrors = new Counter({ name: 'controller_sync_errors_total', help: 'Total number of errors syncing controllers.', registers });
    this.queueDepth = new Gauge({ name: 'pilot_worker_queue_depth', help: 'Depth of the controller queues.', labelNames: ['name'], registers });
    this.queueLatency = new Histogram({ name: 'pilot_worker_queue_latency', help: 'Seconds an item waits in a controller queue before being handled.', labelNames: ['name'], buckets: QUEUE_SECONDS, registers });
    this.queueDuration = new Histogram({ name: 'pilot_worker_queue_duration', help: 'Seconds to handle an item (a batch) of a controller queue.', labelNames: ['name'], buckets: QUEUE_SECONDS, registers });
    this.queueMetrics = settings.bool('MESH_ENABLE_CONTROLLER_QUEUE_METRICS');
  }

  /** What a queue named `name` reports to; undefined when queue metrics are off. */
  queueObserver(name: string): QueueObserver | undefined {
    if (!this.queueMetrics) return undefined;
    return {
      depth: (n) => this.queueDepth.set({ name }, n),
      latency: (s) => this.queueLatency.observe({ name }, s),
      duration: (s) => this.queueDuration.observe({ name }, s),
    };
  }
}
