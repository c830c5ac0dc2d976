/**
 * The agent's own metrics, served on its status port at `/stats/prometheus` (where the
 * incumbent's agent serves its telemetry). spec/02 names no agent metrics, so these are ours:
 * how the agent's link to the daemon fares, which every proxy stream of the workload shares
 * (the built-in proxy or Envoy, the name table, proxyless gRPC applications), so an operator
 * sees a workload that serves stale config.
 *
 *   mesh_agent_xds_connected                      1 while the daemon answers, else 0
 *   mesh_agent_xds_disconnected_seconds           how long the current outage has lasted (0 when connected)
 *   mesh_agent_xds_disconnected_seconds_total     time spent disconnected, over ended outages
 *   mesh_agent_xds_reconnects_total               times the daemon answered again after an outage
 *   mesh_agent_xds_connection_failures_total      attempts to reach the daemon that failed
 */
import { Counter, Gauge, Registry } from '../shared/prom-client';
import type { XdsConnectionEvents } from '../proxy/xds/xds-client';

/** What the metrics read at scrape time: the link's own view of its outage. */
export interface LinkStatus {
  connected(): boolean;
  disconnectedForMs(): number;
}

export class AgentMetrics {
  readonly registry = new Registry();
  readonly contentType = this.registry.contentType;
  private link: LinkStatus | undefined;
  private readonly disconnectedTotal: Counter;
  private readonly reconnects: Counter;
  private readonly failures: Counter;

  constructor() {
    const registers = [this.registry];
    const link = () => this.link;
    new Gauge({
      name: 'mesh_agent_xds_connected',
      help: '1 while the daemon answers the agent, else 0',
      registers,
      collect() {
        this.set(link()?.connected() ? 1 : 0);
      },
    });
    new Gauge({
      name: 'mesh_agent_xds_disconnected_seconds',
      help: 'How long the daemon has not been answering; 0 while it is (proxies serve their last good config meanwhile)',
      registers,
      collect() {
        this.set((link()?.disconnectedForMs() ?? 0) / 1000);
      },
    });
    this.disconnectedTotal = new Counter({ name: 'mesh_agent_xds_disconnected_seconds_total', help: 'Time spent disconnected from the daemon, over ended outages', registers });
    this.reconnects = new Counter({ name: 'mesh_agent_xds_reconnects_total', help: 'Times the daemon answered again after an outage', registers });
    this.failures = new Counter({ name: 'mesh_agent_xds_connection_failures_total', help: 'Attempts to reach the daemon that failed', registers });
  }

  /** Reports a link; returns the events it should be given. */
  track(link: LinkStatus): XdsConnectionEvents {
    this.link = link;
    return {
      connected: (downMs) => {
        if (downMs <= 0) return;
        this.reconnects.inc();
        this.disconnectedTotal.inc(downMs / 1000);
      },
      attemptFailed: () => this.failures.inc(),
    };
  }

  metrics(): Promise<string> {
    return this.registry.metrics();
  }
}
