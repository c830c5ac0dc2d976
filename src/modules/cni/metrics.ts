import { collectDefaultMetrics, Counter, Gauge, Registry } from '../shared/prom-client';

/** How the repair controller repaired a pod (the `type` label of mesh_cni_repair_pods_repaired_total). */
export type RepairType = 'label' | 'delete';

export interface CniMetricsOptions {
  /** Build version, for mesh_build{tag}. */
  version: string;
  /** Component name for mesh_build; default `install-cni`. */
  component?: string;
}

/**
 * The node installer's metrics, named as in spec/02 ("Events"): Sum = Counter,
 * LastValue = Gauge. Like the daemon's, names are kept exactly (prom-client adds no `_total`)
 * and each instance owns its Registry, so several installers can live in one test process.
 */
export class CniMetrics {
  readonly registry = new Registry();
  readonly contentType = this.registry.contentType;

  /** 1 while the plug-in is installed (config entry, executable and orchestrator config in place), else 0. */
  readonly installReady: Gauge;
  /** Successful installations: each time the installer put its entry in place or became ready. */
  readonly installsTotal: Counter;
  /** Pods repaired by the repair controller, by how (`type` = label | delete). */
  readonly repairPodsRepairedTotal: Counter<'type'>;
  readonly nodeagentReconcileEventsTotal: Counter;
  readonly ztunnelConnected: Gauge;
  readonly build: Gauge<'component' | 'tag'>;

  constructor(options: CniMetricsOptions) {
    const registers = [this.registry];
    this.installReady = new Gauge({ name: 'mesh_cni_install_ready', help: 'Whether the mesh CNI plugin installation is ready or not.', registers });
    this.installReady.set(0);
    this.installsTotal = new Counter({ name: 'mesh_cni_installs_total', help: 'Total number of mesh CNI plugin installations by the installer.', registers });
    this.repairPodsRepairedTotal = new Counter({
      name: 'mesh_cni_repair_pods_repaired_total',
      help: 'Total number of pods repaired by the repair controller, by type (label or delete).',
      labelNames: ['type'],
      registers,
    });
    this.nodeagentReconcileEventsTotal = new Counter({ name: 'nodeagent_reconcile_events_total', help: 'Total number of node agent reconcile events.', registers });
    this.ztunnelConnected = new Gauge({ name: 'ztunnel_connected', help: 'Number of connections to ztunnel.', registers });
    this.build = new Gauge({ name: 'mesh_build', help: 'Mesh component build info.', labelNames: ['component', 'tag'], registers });
    this.build.set({ component: options.component ?? 'install-cni', tag: options.version }, 1);
    collectDefaultMetrics({ register: this.registry });
  }

  /** Prometheus text exposition of everything in this registry. */
  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
