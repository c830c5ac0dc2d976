import type { ScopedLogger } from '../../logging';
import { formatListenAddress, MetricsSource, MonitoringServer } from '../../monitoring';
import type { NodeComponent } from './components';

/** `/metrics` on `--monitoring-port` (all interfaces; 0 = any free port), as a NodeComponent. */
export class MetricsEndpoint implements NodeComponent {
  readonly name = 'metrics server';
  private readonly server: MonitoringServer;
  private boundPort: number | undefined;

  constructor(
    port: number,
    metrics: MetricsSource,
    private readonly log: ScopedLogger,
  ) {
    this.server = new MonitoringServer({ address: { host: '', port }, metrics });
  }

  /** The port bound (known after start; differs from the one asked for when that was 0). */
  get port(): number | undefined {
    return this.boundPort;
  }

  async start(): Promise<void> {
    const bound = await this.server.start();
    this.boundPort = bound.port;
    this.log.info(`serving metrics on ${formatListenAddress(bound)} (/metrics), monitoring port ${bound.port}`);
  }

  stop(): Promise<void> {
    return this.server.stop();
  }
}
