/**
 * The agent's proxy workers (`pilot-agent proxy --concurrency N`, N > 1).
 *
 * node:cluster rather than worker threads: cluster workers calling `listen` on the same
 * address share one listening socket that the agent owns (on Linux the agent accepts and
 * hands connections round-robin, which spreads them evenly), so listeners, port 0 included,
 * are the same in every worker; worker threads cannot share a listening handle on Node 20
 * (no `reusePort`), and one crashing thread would take the agent with it.
 *
 * One xDS stream, in the agent, fans out to the workers, as Envoy's main thread feeds its
 * worker threads: the daemon sees one proxy per workload. A response is ACKed once every
 * worker has applied it and NACKed with the first worker's error. A worker that dies is
 * reported and replaced, and the new one gets the current config before it counts as ready.
 * Workers run the agent's own program and command line (cluster's default), and know they
 * are workers from cluster's environment.
 *
 * The admin port (served by the agent) answers from the config applied here and from the
 * workers' reports: listeners, clusters and certificates from the first worker (all hold the
 * same), connections summed over all of them.
 */
import cluster, { Worker } from 'node:cluster';
import type { ScopedLogger } from '../../logging';
import type { AppliedConfig, BuiltInProxyView, ClusterStatus, SecretCertificates } from '../../proxy/builtin-proxy';
import type { ProxyLoggers } from '../../proxy/logging/proxy-loggers';
import { TypeUrl } from '../../envoy/type-urls';
import { AdsNode, Decoded, ResourceMap, XdsClient, XdsProtocol } from '../../proxy/xds/xds-client';
import type { FromWorker, LogLevels, ToWorker, WorkerState } from './messages';

/** Types in the order a new worker is given them: clusters and their endpoints before listeners and their routes. */
const REPLAY_ORDER = [TypeUrl.Cluster, TypeUrl.ClusterLoadAssignment, TypeUrl.Listener, TypeUrl.RouteConfiguration] as const;
const STOP_TIMEOUT_MS = 5000;
const RESTART_DELAY_MS = { initial: 100, max: 5000 };
const NO_WORKER_WAIT_MS = 30_000;

export interface ProxyWorkerPoolOptions {
  workers: number;
  /** The agent's xDS proxy (or the daemon). */
  discoveryAddress: string;
  node: AdsNode;
  protocol: XdsProtocol;
  loggers: ProxyLoggers;
  sdsSocketPath?: string;
  log: ScopedLogger;
}

interface Member {
  worker: Worker;
  /** Given init and the current config: it takes part in applies. */
  live: boolean;
  state?: WorkerState;
  pending: Map<number, (result: { error?: string }) => void>;
}

export class ProxyWorkerPool implements BuiltInProxyView {
  private readonly members = new Map<number, Member>();
  private readonly applied: AppliedConfig = { clusters: new Map(), endpoints: new Map(), listeners: new Map(), routes: new Map(), versions: {} };
  private readonly appliedTypes = new Set<string>();
  private readonly startedAt = Date.now();
  private ads?: XdsClient;
  /** Applies and replays run one at a time, so a new worker never misses a change. */
  private queue: Promise<unknown> = Promise.resolve();
  private seq = 0;
  private stopping = false;
  private restarts = 0;
  private lastRestartAt = 0;
  private readyWaiters: Array<() => void> = [];

  constructor(private readonly options: ProxyWorkerPoolOptions) {}

  /** Forks the workers; the xDS stream opens once all of them are up. */
  async start(): Promise<void> {
    const { loggers } = this.options;
    loggers.onChange(() => this.broadcast({ kind: 'log-levels', levels: levelsOf(loggers) }));
    cluster.on('exit', (worker, code, signal) => this.exited(worker, code, signal));
    await Promise.all(Array.from({ length: this.options.workers }, () => this.fork()));
    this.ads = new XdsClient(
      { address: this.options.discoveryAddress, node: this.options.node, protocol: this.options.protocol },
      { apply: (typeUrl, resources) => this.fanOut(typeUrl, resources), log: loggers.get('config').asLog() },
    );
    this.ads.start();
  }

  workerPids(): number[] {
    return [...this.members.values()].map((m) => m.worker.process.pid!).filter((p) => p !== undefined);
  }

  ready(): boolean {
    const live = [...this.members.values()].filter((m) => m.live);
    const ok = live.length === this.options.workers && live.every((m) => m.state?.ready);
    if (ok) for (const w of this.readyWaiters.splice(0)) w();
    return ok;
  }

  whenReady(): Promise<void> {
    if (this.ready()) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  connected(): boolean {
    return this.ads?.connected ?? false;
  }

  node(): AdsNode {
    return this.options.node;
  }

  uptimeMs(): number {
    return Date.now() - this.startedAt;
  }

  config(): AppliedConfig {
    return this.applied;
  }

  activeConnections(): number {
    let n = 0;
    for (const m of this.members.values()) n += m.state?.activeConnections ?? 0;
    return n;
  }

  boundListeners(): Record<string, string> {
    return this.first()?.bound ?? {};
  }

  clusterStatuses(): ClusterStatus[] {
    return this.first()?.clusters ?? [];
  }

  secretCertificates(): SecretCertificates[] {
    return this.first()?.secrets ?? [];
  }

  /** Workers replaced after they died. */
  restartCount(): number {
    return this.restarts;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.ads?.stop();
    const exits = [...this.members.values()].map(
      (m) =>
        new Promise<void>((resolve) => {
          if (m.worker.isDead()) return resolve();
          const timer = setTimeout(() => m.worker.process.kill('SIGKILL'), STOP_TIMEOUT_MS);
          m.worker.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          this.send(m, { kind: 'stop' });
        }),
    );
    await Promise.all(exits);
  }

  private first(): WorkerState | undefined {
    for (const m of this.members.values()) if (m.live && m.state) return m.state;
    return undefined;
  }

  /** A new worker: up once it has said hello and been given its init and the current config. */
  private fork(): Promise<void> {
    const worker = cluster.fork();
    const member: Member = { worker, live: false, pending: new Map() };
    this.members.set(worker.id, member);
    return new Promise((resolve) => {
      worker.on('message', (message: FromWorker) => {
        if (message.kind === 'hello') {
          this.send(member, { kind: 'init', sdsSocketPath: this.options.sdsSocketPath, levels: levelsOf(this.options.loggers) });
          void this.serially(() => this.replay(member)).then(resolve);
        } else this.received(member, message);
      });
      worker.once('exit', () => resolve());
    });
  }

  private async replay(member: Member): Promise<void> {
    for (const typeUrl of REPLAY_ORDER) {
      if (!this.appliedTypes.has(typeUrl) || member.worker.isDead()) continue;
      const resources = this.resourcesOf(typeUrl);
      const result = await this.applyOn(member, typeUrl, [...resources]);
      if (result.error) {
        this.options.log.error(`proxy worker ${member.worker.id} rejected the current ${typeUrl} (${result.error}); stopping it`);
        member.worker.process.kill('SIGKILL');
        return;
      }
    }
    member.live = !member.worker.isDead();
    if (member.live && this.restarts > 0) {
      this.options.log.info(`built-in proxy worker ${member.worker.id} (pid ${member.worker.process.pid}) is serving with the current config`);
    }
    this.ready();
  }

  private resourcesOf(typeUrl: string): ResourceMap {
    switch (typeUrl) {
      case TypeUrl.Cluster:
        return this.applied.clusters;
      case TypeUrl.ClusterLoadAssignment:
        return this.applied.endpoints;
      case TypeUrl.Listener:
        return this.applied.listeners;
      default:
        return this.applied.routes;
    }
  }

  private received(member: Member, message: FromWorker): void {
    switch (message.kind) {
      case 'subscribe':
        // Every worker asks for the same names; the xDS client sends only a change.
        this.ads?.subscribe(message.typeUrl, message.names);
        if (message.typeUrl === TypeUrl.RouteConfiguration) {
          for (const name of [...this.applied.routes.keys()]) if (!message.names.includes(name)) this.applied.routes.delete(name);
        }
        break;
      case 'applied':
        member.state = message.state;
        member.pending.get(message.seq)?.(message);
        member.pending.delete(message.seq);
        break;
      case 'state':
        member.state = message.state;
        break;
      case 'connections':
        if (member.state) member.state.activeConnections = message.activeConnections;
        break;
    }
    this.ready();
  }

  /** One xDS response: every live worker applies it, or it is NACKed with the first error. */
  private fanOut(typeUrl: string, resources: ResourceMap): Promise<void> {
    return this.serially(async () => {
      // All workers dead at once: wait for a replacement rather than NACK a good config.
      const deadline = Date.now() + NO_WORKER_WAIT_MS;
      while (!this.stopping && Date.now() < deadline && ![...this.members.values()].some((m) => m.live)) await sleep(50);
      const live = [...this.members.values()].filter((m) => m.live);
      if (live.length === 0) throw new Error('no proxy worker is running to apply it');
      const entries = [...resources];
      const results = await Promise.all(live.map((m) => this.applyOn(m, typeUrl, entries)));
      const failed = results.find((r) => r.error !== undefined);
      if (failed) throw new Error(failed.error);
      this.record(typeUrl, resources);
    });
  }

  private record(typeUrl: string, resources: ResourceMap): void {
    this.appliedTypes.add(typeUrl);
    switch (typeUrl) {
      case TypeUrl.Cluster:
        this.applied.clusters = resources;
        break;
      case TypeUrl.ClusterLoadAssignment:
        for (const [n, r] of resources) this.applied.endpoints.set(n, r);
        break;
      case TypeUrl.Listener:
        this.applied.listeners = resources;
        break;
      case TypeUrl.RouteConfiguration:
        for (const [n, r] of resources) this.applied.routes.set(n, r);
        break;
    }
  }

  /** Resolves with the worker's answer, or with no error if it died meanwhile (its replacement gets the config). */
  private applyOn(member: Member, typeUrl: string, resources: [string, Decoded][]): Promise<{ error?: string }> {
    const seq = ++this.seq;
    return new Promise((resolve) => {
      if (member.worker.isDead()) return resolve({});
      member.pending.set(seq, resolve);
      this.send(member, { kind: 'apply', seq, typeUrl, resources });
    });
  }

  private serially<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private exited(worker: Worker, code: number | null, signal: string | null): void {
    const member = this.members.get(worker.id);
    if (!member) return;
    this.members.delete(worker.id);
    for (const resolve of member.pending.values()) resolve({});
    if (this.stopping) return;
    this.restarts++;
    // Quick repeated deaths back off, so a worker that cannot start does not spin the CPU.
    const sinceLast = Date.now() - this.lastRestartAt;
    const delay = sinceLast < RESTART_DELAY_MS.max ? Math.min(RESTART_DELAY_MS.max, RESTART_DELAY_MS.initial * 2 ** Math.min(this.restarts, 6)) : RESTART_DELAY_MS.initial;
    this.lastRestartAt = Date.now();
    this.options.log.error(`built-in proxy worker ${worker.id} (pid ${worker.process.pid}) exited (${signal ?? `code ${code}`}); starting another in ${delay} ms (restarts so far: ${this.restarts})`);
    setTimeout(() => {
      if (!this.stopping) void this.fork();
    }, delay).unref();
  }

  private broadcast(message: ToWorker): void {
    for (const m of this.members.values()) this.send(m, message);
  }

  private send(member: Member, message: ToWorker): void {
    if (!member.worker.isDead() && member.worker.isConnected()) member.worker.send(message);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function levelsOf(loggers: ProxyLoggers): LogLevels {
  return loggers.levels().map((l) => [l.name, l.level]);
}
