/**
 * A proxy worker (`pilot-agent proxy --concurrency N`, N > 1): a cluster worker process
 * running the built-in proxy's data plane, fed its xDS resources by the agent (the primary)
 * instead of a stream of its own, so the daemon sees one proxy per workload as with Envoy.
 * Its listeners are cluster-shared handles, so every worker serves the same ports. It lives
 * as long as the agent says: signals are the agent's to handle (it drains first), and a
 * worker whose agent is gone exits.
 */
import type { BuiltInProxy, ConfigApply, ConfigFeed } from '../../proxy/builtin-proxy';
import type { ProxyLoggers } from '../../proxy/logging/proxy-loggers';
import type { AdsNode } from '../../proxy/xds/xds-client';
import type { FromWorker, ToWorker, WorkerState } from './messages';

const CONNECTIONS_REPORT_MS = 250;

export interface ProxyWorkerOptions {
  node: AdsNode;
  loggers: ProxyLoggers;
  stripFragmentFromPath: boolean;
}

export class ProxyWorker {
  private apply?: ConfigApply;
  private lastConnections = -1;
  private timer?: NodeJS.Timeout;
  /** Settles when the agent has stopped this worker (just before the process exits). */
  readonly stopped: Promise<void>;
  private markStopped!: () => void;

  constructor(
    private readonly proxy: BuiltInProxy,
    private readonly options: ProxyWorkerOptions,
  ) {
    this.stopped = new Promise((resolve) => (this.markStopped = resolve));
  }

  start(): void {
    process.on('message', (message: ToWorker) => void this.receive(message));
    // The agent is gone (crashed or killed): nothing feeds this worker any more.
    process.on('disconnect', () => process.exit(1));
    this.send({ kind: 'hello' });
  }

  private async receive(message: ToWorker): Promise<void> {
    switch (message.kind) {
      case 'init':
        this.options.loggers.set(new Map(message.levels));
        this.proxy.start({
          discoveryAddress: 'agent',
          node: this.options.node,
          loggers: this.options.loggers,
          sdsSocketPath: message.sdsSocketPath,
          stripFragmentFromPath: this.options.stripFragmentFromPath,
          feed: (apply) => this.feed(apply),
        });
        this.proxy.secrets.onChange(() => this.send({ kind: 'state', state: this.state() }));
        this.timer = setInterval(() => this.reportConnections(), CONNECTIONS_REPORT_MS);
        this.timer.unref();
        break;
      case 'apply': {
        let error: string | undefined;
        try {
          await this.apply!(message.typeUrl, new Map(message.resources));
        } catch (e) {
          error = e instanceof Error ? e.message : String(e);
        }
        this.send({ kind: 'applied', seq: message.seq, error, state: this.state() });
        break;
      }
      case 'log-levels':
        this.options.loggers.set(new Map(message.levels));
        break;
      case 'stop':
        clearInterval(this.timer);
        await this.proxy.stop();
        this.markStopped();
        process.exit(0);
    }
  }

  private feed(apply: ConfigApply): ConfigFeed {
    this.apply = apply;
    return {
      start: () => undefined,
      stop: () => undefined,
      subscribe: (typeUrl, names) => this.send({ kind: 'subscribe', typeUrl, names: [...names] }),
      connected: true,
    };
  }

  private reportConnections(): void {
    const n = this.proxy.activeConnections();
    if (n === this.lastConnections) return;
    this.lastConnections = n;
    this.send({ kind: 'connections', activeConnections: n });
  }

  private state(): WorkerState {
    return {
      ready: this.proxy.ready(),
      activeConnections: this.proxy.activeConnections(),
      bound: this.proxy.boundListeners(),
      clusters: this.proxy.clusterStatuses(),
      secrets: this.proxy.secretCertificates(),
    };
  }

  private send(message: FromWorker): void {
    if (process.connected) process.send!(message);
  }
}
