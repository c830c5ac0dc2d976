/**
 * The orchestrator registry's endpoint metrics, named as in spec/01 ("Events"), on the daemon's
 * registry. The gauges are read from the registries (the local cluster's and each remote
 * cluster's) when scraped, summed.
 */
import { inject, injectable } from 'inversify';
import { Counter, Gauge } from '../../shared/prom-client';
import { DaemonMetrics } from '../../monitoring';

/** What the gauges read from the registry at scrape time. */
export interface EndpointGaugeSource {
  /** Endpoints of EndpointSlices that are not ready. */
  notReady(): number;
  /** Endpoints without a pod behind them. */
  withoutPod(): number;
  /** Endpoints whose pod has not arrived yet. */
  pendingPod(): number;
  /** Pods (not finished) that have no IP yet, so no endpoint can name them. */
  podsWithoutIp(): number;
}

@injectable()
export class OrchRegistryMetrics {
  /** pilot_k8s_endpoints_with_no_pods: endpoints seen without a pod, counted each time their service's endpoints are rebuilt. */
  readonly endpointsWithNoPods: Counter;
  private readonly sources = new Set<EndpointGaugeSource>();

  constructor(@inject(DaemonMetrics) daemon: DaemonMetrics) {
    const registers = [daemon.registry];
    const metrics = this;
    const gauge = (name: string, help: string, read: (s: EndpointGaugeSource) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set([...metrics.sources].reduce((n, s) => n + read(s), 0));
        },
      });
    gauge('pilot_k8s_endpoints_pending_pod', 'Number of endpoints that do not currently have any corresponding pods.', (s) => s.pendingPod());
    gauge('endpoint_no_pod', 'Endpoints without an associated pod.', (s) => s.withoutPod());
    gauge('pilot_no_ip', 'Pods not found in the endpoint table, possibly invalid (no IP yet).', (s) => s.podsWithoutIp());
    gauge('pilot_endpoint_not_ready', 'Endpoint found in unready state.', (s) => s.notReady());
    this.endpointsWithNoPods = new Counter({ name: 'pilot_k8s_endpoints_with_no_pods', help: 'Endpoints that do not have any corresponding pods.', registers });
  }

  /** Adds a registry's counts to the gauges; the returned function takes them out again. */
  watch(source: EndpointGaugeSource): () => void {
    const entry = { ...source };
    this.sources.add(entry);
    return () => void this.sources.delete(entry);
  }
}
