/**
 * Push benchmark of the daemon (see bench/README.md): a generated mesh of N services, C
 * simulated Envoy sidecars over real gRPC in worker processes, and three measurements:
 * the initial connect, a push that concerns every proxy (a ServiceEntry gains a port) and an
 * endpoint-only push (a WorkloadEntry moves). Then the transport-limit run: the same bytes
 * to the same clients from a plain gRPC server (limit.ts), so each phase has a ratio to it.
 *
 *   npm run bench:push -- --services 1000 --proxies 2000 [--workers 2] [--json]
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { clientSpecs, endpointTarget, generateMesh, hostOf, MeshLayout, serviceEntryYaml, workloadEntriesYaml, writeAtomically } from './config';
import { BenchError, counterDeltaBy, Daemon, REPO_ROOT, histogramDelta, histogramQuantile, labelValues, Metrics, procCpuSeconds, procMemory, RssSampler, StallProbe } from './daemon';
import { LimitServer, startLimitServer, Workers } from './children';
import type { ClientSpec, Status, TypeTotals } from './protocol';
import { bytes, count, distribution, Distribution, ms, table } from './stats';
import { Short, SHORTS } from './xds';

const now = (): number => performance.timeOrigin + performance.now();
const sleep = (msec: number) => new Promise((r) => setTimeout(r, msec));

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

interface Options {
  services: number;
  clients: number;
  workers: number;
  streamsPerConnection: number;
  rounds: number;
  quietMs: number;
  connectTimeoutMs: number;
  pushTimeoutMs: number;
  rampMs: number;
  windowBytes: number;
  /** Incremental (delta) ADS clients, as Envoy with MESH_DELTA_XDS (the default) uses. */
  delta: boolean;
  /** Run the transport-limit comparison after the daemon's phases. */
  limit: boolean;
  /** The transport-limit server's bytes in flight across streams (the daemon's write budget). */
  limitBudgetBytes: number;
  json: boolean;
  keep: boolean;
  cpuProf: boolean;
  heapSnapshot: boolean;
  /** Extra node options for the daemon (e.g. V8 heap sizes), to try them without a rebuild. */
  daemonNodeArgs: string[];
  /** Extra node options for the client workers (e.g. --cpu-prof), to see where the bench's own CPU goes. */
  workerNodeArgs: string[];
}

const USAGE = `usage: npm run bench:push -- [options]

  --services N               ServiceEntries to generate (env BENCH_SERVICES; default 1000)
  --proxies N, --clients N   simulated Envoy sidecars (env BENCH_PROXIES or BENCH_CLIENTS; default 2000)
  --workers N                client worker processes (env BENCH_WORKERS; default: the number of CPUs, at least 2, at most 8)
  --streams-per-connection N ADS streams per HTTP/2 connection (default 50)
  --rounds N                 full + endpoint push pairs to measure (default 1)
  --quiet-ms N               a phase is over once every client has what it expects and nothing arrived for this long (default 2000)
  --connect-timeout S        seconds for the initial connect (default 600)
  --push-timeout S           seconds for each push (default 300)
  --ramp-ms N                spread the initial stream starts over N ms (default 0: all at once)
  --window BYTES             clients' HTTP/2 flow-control window per stream and connection (default 64 MiB,
                             Envoy-like; 0 = grpc-js's 64 KiB, which throttles big responses)
  --delta                    incremental (delta) ADS clients, as Envoy uses when MESH_DELTA_XDS is on (the
                             daemon's default, so the bench's too)
  --sotw                     state-of-the-world ADS clients instead (MESH_DELTA_XDS=false proxies)
  --no-limit                 skip the transport-limit run (the same bytes from a plain gRPC server)
  --limit-budget BYTES       bytes in flight of the transport-limit server (default 64 MiB, the daemon's write budget)
  --json                     print the results as JSON instead of tables
  --keep                     keep the temp dir (generated config, daemon log)
  --cpu-prof                 run the daemon with node --cpu-prof (profile in the kept temp dir)
  --heap-snapshot            write a heap snapshot of the daemon after the connect phase (in the kept temp dir)
  --daemon-node-arg ARG      pass ARG to the daemon's node (repeatable; e.g. --daemon-node-arg=--max-semi-space-size=64)
  --worker-node-arg ARG      pass ARG to each client worker's node (repeatable; e.g. --worker-node-arg=--cpu-prof
                             --worker-node-arg=--cpu-prof-dir=/tmp/prof)

Daemon settings come from the environment as usual (e.g. PILOT_DEBOUNCE_AFTER=100ms).`;

function parseOptions(argv: string[]): Options {
  const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
  const o: Options = {
    services: env('BENCH_SERVICES', 1000),
    clients: env('BENCH_PROXIES', env('BENCH_CLIENTS', 2000)),
    workers: env('BENCH_WORKERS', Math.min(8, Math.max(2, os.cpus().length))),
    streamsPerConnection: 50,
    rounds: 1,
    quietMs: 2000,
    connectTimeoutMs: 600_000,
    pushTimeoutMs: 300_000,
    rampMs: 0,
    windowBytes: 64 * 1024 * 1024,
    delta: true,
    limit: true,
    limitBudgetBytes: 64 * 1024 * 1024,
    json: false,
    keep: false,
    cpuProf: false,
    heapSnapshot: false,
    daemonNodeArgs: [],
    workerNodeArgs: [],
  };
  const ints: Record<string, (v: number) => void> = {
    '--services': (v) => (o.services = v),
    '--clients': (v) => (o.clients = v),
    '--proxies': (v) => (o.clients = v),
    '--workers': (v) => (o.workers = v),
    '--streams-per-connection': (v) => (o.streamsPerConnection = v),
    '--rounds': (v) => (o.rounds = v),
    '--quiet-ms': (v) => (o.quietMs = v),
    '--connect-timeout': (v) => (o.connectTimeoutMs = v * 1000),
    '--push-timeout': (v) => (o.pushTimeoutMs = v * 1000),
    '--ramp-ms': (v) => (o.rampMs = v),
    '--window': (v) => (o.windowBytes = v),
    '--limit-budget': (v) => (o.limitBudgetBytes = v),
  };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (flag === '--help' || flag === '-h') {
      console.log(USAGE);
      process.exit(0);
    } else if (flag === '--json') o.json = true;
    else if (flag === '--delta') o.delta = true;
    else if (flag === '--sotw') o.delta = false;
    else if (flag === '--no-limit') o.limit = false;
    else if (flag === '--keep') o.keep = true;
    else if (flag === '--cpu-prof') o.cpuProf = o.keep = true;
    else if (flag === '--heap-snapshot') o.heapSnapshot = o.keep = true;
    else if (flag === '--daemon-node-arg' || flag === '--worker-node-arg') {
      const arg = inline ?? argv[++i];
      if (!arg?.startsWith('--')) throw new BenchError(`${flag} needs a node option (starting with --), got ${arg}`);
      (flag === '--daemon-node-arg' ? o.daemonNodeArgs : o.workerNodeArgs).push(arg);
    }
    else if (ints[flag]) {
      const text = inline ?? argv[++i];
      const v = Number(text);
      if (text === undefined || !Number.isFinite(v) || v < 0) throw new BenchError(`${flag} needs a non-negative number, got ${text}`);
      ints[flag](v);
    } else throw new BenchError(`unknown option ${argv[i]}\n\n${USAGE}`);
  }
  for (const [name, v] of [['--services', o.services], ['--proxies', o.clients], ['--workers', o.workers], ['--streams-per-connection', o.streamsPerConnection], ['--limit-budget', o.limitBudgetBytes]] as const) {
    if (!Number.isInteger(v) || v < 1) throw new BenchError(`${name} must be a positive integer (got ${v})`);
  }
  if (o.clients > 60_000) throw new BenchError('--proxies: at most 60000');
  o.workers = Math.min(o.workers, o.clients);
  return o;
}

// ---------------------------------------------------------------------------------------------
// Workers
// ---------------------------------------------------------------------------------------------
// Phases
// ---------------------------------------------------------------------------------------------

interface DaemonFigures {
  pushContextBuilds: number;
  pushContextBuildMs: number;
  debounceMs?: number;
  /** pilot_proxy_convergence_time over the phase: proxies, mean and bucket-estimated quantiles. */
  convergence: { count: number; meanMs?: number; p50Ms?: number; p99Ms?: number };
  queue: { count: number; meanMs?: number; p99Ms?: number };
  /** pilot_xds_push_time by type: responses written and total seconds building + sending them. */
  pushTime: Record<string, { count: number; totalMs: number }>;
  /** pilot_xds_config_size_bytes by type: bytes the daemon wrote. */
  sentBytes: Record<string, number>;
  expiredNonces: number;
  /** xds_cache_evictions over the phase, by reason (dependency, clear, size). */
  cacheEvictions: Record<string, number>;
  rejects: number;
  internalErrors: number;
  /** From the daemon's default Node metrics, at the end of the phase. */
  heapUsedBytes: number;
  externalBytes: number;
  /** nodejs_gc_duration_seconds over the phase, by kind (major, minor, incremental, weakcb). */
  gcMs: Record<string, number>;
}

/** The same phase served by the transport-limit server: the same bytes to the same clients, no xDS logic. */
export interface LimitPhaseResult {
  clientsUpdated: number;
  convergenceMs: Distribution;
  firstResponseMs: Distribution;
  bytesTotal: number;
  /** CPU seconds of the transport-limit server until the phase converged (/proc/<pid>/stat, as the daemon's). */
  serverCpuSeconds: number;
  workerCpuSeconds: number;
  serverRssPeakBytes: number;
  wallMs: number;
}

/** How a phase ended: the clients' final status, and the server's CPU reading once it was reached. */
interface Settled {
  status: Status;
  cpuSeconds: number;
}

export interface PhaseResult {
  name: string;
  description: string;
  /** Types each client must receive (push phases; empty for the connect). */
  expect: Short[];
  clients: number;
  clientsUpdated: number;
  /** Per client: from the change (file write; stream open for the connect) to its last response of the phase. */
  convergenceMs: Distribution;
  /** Per client: to its first response of the phase. */
  firstResponseMs: Distribution;
  /** Initial connect only: per client, stream open → has CDS+EDS+LDS+RDS. */
  perClientConnectMs?: Distribution;
  bytesTotal: number;
  bytesPerClient: Distribution;
  byType: Record<Short, TypeTotals>;
  /** Distinct version_info values the clients saw. */
  versions: number;
  /** The daemon's CPU seconds from the change until the phase converged (read within a 100 ms poll of the last response). */
  daemonCpuSeconds: number;
  /** The same, plus the quiet wait that ends the phase and the bench's metrics scrape: what the phase cost the machine. */
  daemonCpuWithQuietSeconds: number;
  workerCpuSeconds: number;
  daemonRssPeakBytes: number;
  daemonRssEndBytes: number;
  /** Longest the daemon took to answer GET /ready during the phase: its event loop was blocked that long. */
  daemonStallMs: number;
  wallMs: number;
  daemon: DaemonFigures;
  limit?: LimitPhaseResult;
}

function daemonFigures(before: Metrics, after: Metrics): DaemonFigures {
  const h = (name: string, filter?: (l: Record<string, string>) => boolean) => histogramDelta(before, after, name, filter);
  const counter = (name: string) => {
    let total = 0;
    for (const [k, v] of after) if (k === name || k.startsWith(`${name}{`)) total += v - (before.get(k) ?? 0);
    return total;
  };
  const conv = h('pilot_proxy_convergence_time');
  const queue = h('pilot_proxy_queue_time');
  const pc = h('pilot_pushcontext_init_seconds');
  const deb = h('pilot_debounce_time');
  const pushTime: DaemonFigures['pushTime'] = {};
  const sentBytes: DaemonFigures['sentBytes'] = {};
  for (const type of labelValues(after, 'pilot_xds_push_time', 'type')) {
    const d = h('pilot_xds_push_time', (l) => l.type === type);
    if (d.count > 0) pushTime[type] = { count: d.count, totalMs: d.sum * 1000 };
    const size = h('pilot_xds_config_size_bytes', (l) => l.type === type);
    if (size.count > 0) sentBytes[type] = size.sum;
  }
  const q = (d: typeof conv, p: number) => {
    const v = histogramQuantile(d, p);
    return v === undefined ? undefined : v * 1000;
  };
  return {
    pushContextBuilds: pc.count,
    pushContextBuildMs: pc.sum * 1000,
    debounceMs: deb.count ? (deb.sum / deb.count) * 1000 : undefined,
    convergence: { count: conv.count, meanMs: conv.count ? (conv.sum / conv.count) * 1000 : undefined, p50Ms: q(conv, 0.5), p99Ms: q(conv, 0.99) },
    queue: { count: queue.count, meanMs: queue.count ? (queue.sum / queue.count) * 1000 : undefined, p99Ms: q(queue, 0.99) },
    pushTime,
    sentBytes,
    heapUsedBytes: after.get('nodejs_heap_size_used_bytes') ?? 0,
    externalBytes: after.get('nodejs_external_memory_bytes') ?? 0,
    gcMs: Object.fromEntries(
      labelValues(after, 'nodejs_gc_duration_seconds', 'kind').map((kind) => [kind, h('nodejs_gc_duration_seconds', (l) => l.kind === kind).sum * 1000]),
    ),
    expiredNonces: counter('pilot_xds_expired_nonce'),
    cacheEvictions: counterDeltaBy(before, after, 'xds_cache_evictions', 'type'),
    rejects: counter('pilot_total_xds_rejects'),
    internalErrors: counter('pilot_total_xds_internal_errors'),
  };
}

class Bench {
  daemon: Daemon | undefined;
  workers: Workers | undefined;
  sampler: RssSampler | undefined;
  probe: StallProbe | undefined;
  readonly phases: PhaseResult[] = [];
  readonly failures: string[] = [];
  rssAfterConnectBytes = 0;
  rssPeakDuringPushesBytes = 0;
  connections = 0;
  limit: LimitServer | undefined;
  limitSampler: RssSampler | undefined;

  constructor(readonly o: Options, readonly layout: MeshLayout, readonly specs: ClientSpec[]) {}

  /** The daemon, or the transport-limit server in the limit run. */
  private server(): { name: string; pid: number; check: () => void; rss: RssSampler } {
    const limit = this.limit;
    if (limit) return { name: 'limit server', pid: limit.pid, check: () => limit.check(), rss: this.limitSampler! };
    const daemon = this.daemon!;
    return { name: 'daemon', pid: daemon.pid, check: () => daemon.check(), rss: this.sampler! };
  }

  /**
   * Polls until `done(status)` holds and no client got anything for quietMs. Also reads the
   * server's CPU at the first poll that saw the final state (within a poll of the last
   * response): the phase's own CPU, without the quiet wait and the bench's metrics scrape.
   */
  private async waitFor(what: string, t0: number, timeoutMs: number, done: (s: Status) => boolean, progress: (s: Status) => string): Promise<Settled> {
    const server = this.server();
    let lastLog = now();
    let lastBytes = 0;
    let lastCpu = procCpuSeconds(server.pid);
    let settled: { lastAt: number; responses: number; cpu: number } | undefined;
    for (;;) {
      await sleep(100);
      server.check();
      this.workers!.check();
      const s = await this.workers!.status();
      if (s.failed > 0) throw new BenchError(`${what}: ${s.failed} client stream(s) failed; first: ${s.firstError}`);
      const t = now();
      if (!done(s)) settled = undefined;
      else if (!settled || settled.lastAt !== s.lastAt || settled.responses !== s.responses) settled = { lastAt: s.lastAt, responses: s.responses, cpu: procCpuSeconds(server.pid) };
      if (settled && s.lastAt > 0 && t - s.lastAt >= this.o.quietMs) return { status: s, cpuSeconds: settled.cpu };
      if (t - t0 > timeoutMs) {
        throw new BenchError(`${what}: not done within ${ms(timeoutMs)} (${progress(s)}; last response ${s.lastAt ? ms(t - s.lastAt) + ' ago' : 'never'})`);
      }
      if (t - lastLog > 5000) {
        const cpu = procCpuSeconds(server.pid);
        const secs = (t - lastLog) / 1000;
        process.stderr.write(
          `  ... ${what}: ${progress(s)} after ${ms(t - t0)}; last ${secs.toFixed(0)} s: clients got ${bytes(s.bytes - lastBytes)}, ` +
            `${server.name} CPU ${Math.round((100 * (cpu - lastCpu)) / secs)}%${this.limit ? '' : `, longest /ready ${ms(this.probe!.current())}`}; RSS ${bytes(server.rss.lastBytes)}\n`,
        );
        lastLog = t;
        lastBytes = s.bytes;
        lastCpu = cpu;
      }
    }
  }

  private async collect(
    name: string, description: string, expect: Short[], t0: number, mBefore: Metrics, cpuBefore: number, settled: Settled, initial: boolean,
  ): Promise<PhaseResult> {
    const final = settled.status;
    const rep = await this.workers!.report();
    const mAfter = await this.daemon!.metrics();
    const updated = rep.clients.filter((c) => c.firstAt > 0);
    const versions = new Set(updated.flatMap((c) => c.versions));
    const convergence = initial ? rep.clients.map((c) => c.initialDoneAt - t0) : updated.map((c) => c.lastAt - t0);
    const lastAt = rep.clients.reduce((a, c) => Math.max(a, c.lastAt), 0);
    return {
      name,
      description,
      expect,
      clients: rep.clients.length,
      clientsUpdated: initial ? final.initialDone : final.updated,
      convergenceMs: distribution(convergence),
      firstResponseMs: distribution(updated.map((c) => c.firstAt - t0)),
      perClientConnectMs: initial ? distribution(rep.clients.map((c) => c.initialDoneAt - c.startedAt)) : undefined,
      bytesTotal: rep.clients.reduce((a, c) => a + c.bytes, 0),
      bytesPerClient: distribution(rep.clients.map((c) => c.bytes)),
      byType: rep.byType,
      versions: versions.size,
      daemonCpuSeconds: settled.cpuSeconds - cpuBefore,
      daemonCpuWithQuietSeconds: procCpuSeconds(this.daemon!.pid) - cpuBefore,
      workerCpuSeconds: rep.cpuSeconds,
      daemonRssPeakBytes: this.sampler!.peakBytes,
      daemonRssEndBytes: this.sampler!.sample(),
      daemonStallMs: this.probe!.current(),
      wallMs: lastAt - t0,
      daemon: daemonFigures(mBefore, mAfter),
    };
  }

  private connectOptions(port: number) {
    const o = this.o;
    return { port, streamsPerConnection: o.streamsPerConnection, rampMs: o.rampMs, windowBytes: o.windowBytes, delta: o.delta, phase: 0 };
  }

  private slices(): ClientSpec[][] {
    const per = Math.ceil(this.specs.length / this.workers!.list.length);
    return this.workers!.list.map((_, i) => this.specs.slice(i * per, (i + 1) * per));
  }

  async connect(): Promise<void> {
    const { o, daemon } = this;
    const mBefore = await daemon!.metrics();
    const cpuBefore = procCpuSeconds(daemon!.pid);
    this.sampler!.resetPeak();
    this.probe!.reset();
    const slices = this.slices();
    this.connections = slices.reduce((a, s) => a + Math.ceil(s.length / o.streamsPerConnection), 0);
    const t0 = now();
    await Promise.all(
      this.workers!.list.map((w, i) =>
        w.request({ t: 'connect', ...this.connectOptions(daemon!.grpcPort), clients: slices[i], capture: o.limit, tag: false }),
      ),
    );
    const n = this.specs.length;
    const settled = await this.waitFor('initial connect', t0, o.connectTimeoutMs, (s) => s.initialDone >= n, (s) => `${s.initialDone}/${n} clients complete, ${count(s.responses)} responses`);
    const description = `${n} clients connect at once${o.rampMs ? ` (over ${o.rampMs} ms)` : ''}: CDS+LDS wildcard, then EDS and RDS`;
    const result = await this.collect('connect', description, [], t0, mBefore, cpuBefore, settled, true);
    this.rssAfterConnectBytes = result.daemonRssEndBytes;
    this.phases.push(result);
  }

  /** One push: marks the clients, applies `change` (a file write), waits until every client has it and all is quiet. */
  async push(name: string, description: string, expect: Short[], change: () => void): Promise<void> {
    const { daemon, workers } = this;
    const expected = this.specs.length;
    await workers!.all({ t: 'mark', expect, phase: this.phases.length });
    const mBefore = await daemon!.metrics();
    const cpuBefore = procCpuSeconds(daemon!.pid);
    this.sampler!.resetPeak();
    this.probe!.reset();
    const t0 = now();
    change();
    const settled = await this.waitFor(
      name,
      t0,
      this.o.pushTimeoutMs,
      (s) => s.updated >= expected && s.awaiting === 0,
      (s) => `${s.updated}/${expected} clients have ${expect.join('+')}, ${s.awaiting} await EDS/RDS, ${count(s.responses)} responses`,
    );
    const result = await this.collect(name, description, expect, t0, mBefore, cpuBefore, settled, false);
    this.rssPeakDuringPushesBytes = Math.max(this.rssPeakDuringPushesBytes, result.daemonRssPeakBytes);
    if (result.clientsUpdated < expected) this.failures.push(`${name}: only ${result.clientsUpdated}/${expected} clients received the push`);
    if (result.daemon.internalErrors > 0) this.failures.push(`${name}: the daemon counted ${result.daemon.internalErrors} internal xDS errors`);
    if (result.daemon.rejects > 0) this.failures.push(`${name}: ${result.daemon.rejects} responses were NACKed`);
    this.phases.push(result);
  }

  async pushes(): Promise<void> {
    const { o, layout } = this;
    const n = this.specs.length;
    const seFile = path.join(layout.dir, 'services', 'svc-0.yaml');
    const target = endpointTarget(layout, n);
    const w = target.workload;
    const weFile = path.join(layout.dir, 'workloads', `svc-${w.service}.yaml`);
    if (target.ownerIsClient) this.failures.push(`note: every WorkloadEntry is a client, so the endpoint push also gives ${w.address}'s sidecar CDS/LDS`);
    for (let r = 0; r < o.rounds; r++) {
      const add = r % 2 === 0;
      const suffix = o.rounds > 1 ? `#${r + 1}` : '';
      await this.push(`full push${suffix}`, `ServiceEntry ${hostOf(0)}: port 8081 (HTTP) ${add ? 'added' : 'removed'}; every proxy gets CDS/LDS/RDS (+EDS subscription change)`, ['cds', 'lds'], () =>
        writeAtomically(seFile, serviceEntryYaml(0, add)),
      );
      const to = add ? `10.254.${w.service % 250}.${10 + w.k}` : w.address;
      await this.push(`endpoint push${suffix}`, `WorkloadEntry svc-${w.service}-${w.k}: address ${add ? w.address : `10.254.${w.service % 250}.${10 + w.k}`} -> ${to}; EDS of ${hostOf(w.service)}`, ['eds'], () =>
        writeAtomically(weFile, workloadEntriesYaml(w.service, add ? { k: w.k, to } : undefined)),
      );
    }
  }

  /**
   * The transport limit: the clients close their streams, the daemon stops, and a plain gRPC
   * server (limit.ts) writes what the daemon sent in each phase to the same number of new
   * streams from the same workers. Convergence is measured as for the daemon.
   */
  async limitRun(tmp: string, log: (s: string) => void): Promise<void> {
    const { o } = this;
    const workers = this.workers!;
    await workers.all({ t: 'close' });
    const files = workers.list.map((_, i) => path.join(tmp, `capture-${i}.bin`));
    const dumped = await Promise.all(workers.list.map((w, i) => w.request({ t: 'dump', file: files[i] }, 600_000)));
    const frames = dumped.reduce((a, d) => a + (d.t === 'dumped' ? d.frames : 0), 0);
    const frameBytes = dumped.reduce((a, d) => a + (d.t === 'dumped' ? d.frameBytes : 0), 0);
    log(`transport-limit run: captured ${count(frames)} distinct resources (${bytes(frameBytes)}); stopping the daemon`);
    this.sampler?.stop();
    this.probe?.stop();
    await this.daemon!.stop(o.cpuProf ? 60_000 : 10_000);
    const limit = (this.limit = startLimitServer());
    const loaded = await limit.request({ t: 'load', files, budgetBytes: o.limitBudgetBytes }, 600_000);
    for (const f of files) fs.rmSync(f, { force: true });
    if (loaded.t !== 'loaded') throw new BenchError(`transport-limit server: unexpected answer ${loaded.t}`);
    log(`transport-limit server pid ${limit.pid} on 127.0.0.1:${loaded.port}: ${count(loaded.responses)} responses of ${count(loaded.clients)} clients`);
    const sampler = (this.limitSampler = new RssSampler(limit.pid));
    const n = this.specs.length;
    for (const [k, phase] of this.phases.entries()) {
      const cpuBefore = procCpuSeconds(limit.pid);
      sampler.resetPeak();
      let t0: number;
      let settled: Settled;
      if (k === 0) {
        const slices = this.slices();
        t0 = now();
        await Promise.all(workers.list.map((w, i) => w.request({ t: 'connect', ...this.connectOptions(loaded.port), clients: slices[i], capture: false, tag: true })));
        settled = await this.waitFor('limit: connect', t0, o.connectTimeoutMs, (s) => s.initialDone >= n, (s) => `${s.initialDone}/${n} clients complete`);
      } else {
        await workers.all({ t: 'mark', expect: phase.expect, phase: k });
        t0 = now();
        await limit.request({ t: 'replay', phase: k });
        settled = await this.waitFor(`limit: ${phase.name}`, t0, o.pushTimeoutMs, (s) => s.updated >= n && s.awaiting === 0, (s) => `${s.updated}/${n} clients updated`);
      }
      const rep = await workers.report();
      const updated = rep.clients.filter((c) => c.firstAt > 0);
      const lastAt = rep.clients.reduce((a, c) => Math.max(a, c.lastAt), 0);
      phase.limit = {
        clientsUpdated: k === 0 ? settled.status.initialDone : settled.status.updated,
        convergenceMs: distribution(k === 0 ? rep.clients.map((c) => c.initialDoneAt - t0) : updated.map((c) => c.lastAt - t0)),
        firstResponseMs: distribution(updated.map((c) => c.firstAt - t0)),
        bytesTotal: rep.clients.reduce((a, c) => a + c.bytes, 0),
        serverCpuSeconds: settled.cpuSeconds - cpuBefore,
        workerCpuSeconds: rep.cpuSeconds,
        serverRssPeakBytes: sampler.peakBytes,
        wallMs: lastAt - t0,
      };
      if (phase.limit.bytesTotal !== phase.bytesTotal) {
        this.failures.push(`note: ${phase.name}: the transport-limit run carried ${count(phase.limit.bytesTotal)} bytes, the daemon ${count(phase.bytesTotal)}`);
      }
      log(`limit: ${phase.name} done, p99 ${ms(phase.limit.convergenceMs.p99)}`);
    }
    sampler.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

interface Results {
  options: Options;
  /** What was measured: the checkout's commit, whether src/ differs from it, and when dist/src was built. */
  build: { commit: string; srcModified: boolean; distBuiltAt: string };
  mesh: { services: number; workloadEntries: number; routedServices: number; files: number; connections: number };
  phases: PhaseResult[];
  daemon: { rssAfterConnectBytes: number; rssPeakDuringPushesBytes: number; vmHwmBytes: number; startupRssBytes: number };
  failures: string[];
  configDir?: string;
  logFile?: string;
}

/** a / b as a percentage ('-' when either is missing). */
function pct(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !(b > 0) || Number.isNaN(a)) return '-';
  const p = (100 * a) / b;
  return `${p < 10 ? p.toFixed(1) : Math.round(p)} %`;
}

/**
 * The figures the issue asks for, per phase: the daemon's against the transport limit's
 * (same bytes, same clients, a plain gRPC server). "Speed vs limit" is limit time / daemon
 * time: 100 % means the daemon is as fast as writing its bytes can be.
 */
function printSummary(res: Results, head: [string, ...string[]], row: (label: string, f: (x: PhaseResult) => string) => [string, ...string[]]): void {
  const lim = (f: (l: LimitPhaseResult) => string) => (x: PhaseResult) => (x.limit ? f(x.limit) : '-');
  const rows: Array<[string, ...string[]]> = [
    head,
    row('daemon: convergence median / p99', (x) => `${ms(x.convergenceMs.median)} / ${ms(x.convergenceMs.p99)}`),
    row('daemon: CPU to convergence', (x) => `${x.daemonCpuSeconds.toFixed(2)} s`),
    row('  + quiet wait and metrics scrape', (x) => `${x.daemonCpuWithQuietSeconds.toFixed(2)} s`),
    row('daemon: CPU per proxy', (x) => ms((1000 * x.daemonCpuSeconds) / Math.max(1, x.clients))),
    row('daemon: RSS peak', (x) => bytes(x.daemonRssPeakBytes)),
    row('bytes sent', (x) => bytes(x.bytesTotal)),
  ];
  if (res.phases.some((x) => x.limit)) {
    rows.push(
      row('limit: convergence median / p99', lim((l) => `${ms(l.convergenceMs.median)} / ${ms(l.convergenceMs.p99)}`)),
      row('limit: server CPU to convergence', lim((l) => `${l.serverCpuSeconds.toFixed(2)} s`)),
      row('daemon CPU / limit server CPU', (x) => (x.limit && x.limit.serverCpuSeconds > 0 ? `${(x.daemonCpuSeconds / x.limit.serverCpuSeconds).toFixed(1)} x` : '-')),
      row('speed vs limit: median', (x) => pct(x.limit?.convergenceMs.median, x.convergenceMs.median)),
      row('speed vs limit: p99', (x) => pct(x.limit?.convergenceMs.p99, x.convergenceMs.p99)),
      row('throughput vs limit (last client)', (x) => pct(x.limit?.wallMs, x.wallMs)),
      row('client CPU: daemon run / limit run', (x) => `${x.workerCpuSeconds.toFixed(1)} s / ${x.limit ? `${x.limit.workerCpuSeconds.toFixed(1)} s` : '-'}`),
    );
  } else rows.push(row('client CPU (workers)', (x) => `${x.workerCpuSeconds.toFixed(1)} s`));
  console.log(table('Summary: the daemon against the transport limit (the same bytes to the same clients from a plain gRPC server)', rows));
  console.log('  push phases include the daemon\'s file watch (50 ms) and debounce (PILOT_DEBOUNCE_AFTER, counted from the same file event, so the read happens within it); the limit run has neither');
  // On few cores the clients and the server share them: a limit the clients held back is optimistic for the daemon.
  const clientBound = res.phases.filter((x) => x.limit && x.limit.workerCpuSeconds > x.limit.serverCpuSeconds && x.limit.serverCpuSeconds >= 1).map((x) => x.name);
  if (clientBound.length) console.log(`  ${clientBound.join(', ')}: in the limit run the clients used more CPU than the server, so there the limit is partly the clients' (the ratio flatters the daemon)`);
  console.log('');
}

function printTables(res: Results): void {
  const p = res.phases;
  const head: [string, ...string[]] = ['', ...p.map((x) => x.name)];
  const row = (label: string, f: (x: PhaseResult) => string): [string, ...string[]] => [label, ...p.map(f)];
  const m = res.mesh;
  console.log(
    `\npush bench: ${count(m.services)} services (${count(m.workloadEntries)} WorkloadEntries, ${m.routedServices} with DestinationRule+VirtualService), ` +
      `${count(res.options.clients)} sidecar clients (${res.options.delta ? "delta" : "state-of-the-world"} ADS) in ${res.options.workers} worker process(es) over ${m.connections} gRPC connections; ${os.cpus().length} CPUs\n` +
      `daemon: commit ${res.build.commit}${res.build.srcModified ? ' + uncommitted src changes' : ''}, dist built ${res.build.distBuiltAt}\n`,
  );
  for (const x of p) console.log(`  ${x.name}: ${x.description}`);
  console.log('');
  printSummary(res, head, row);
  console.log(
    table('Convergence (per client: from the file write / stream open to its last response)', [
      head,
      row('clients done', (x) => `${count(x.clientsUpdated)}/${count(x.clients)}`),
      row('median', (x) => ms(x.convergenceMs.median)),
      row('p90', (x) => ms(x.convergenceMs.p90)),
      row('p99', (x) => ms(x.convergenceMs.p99)),
      row('max', (x) => ms(x.convergenceMs.max)),
      // The first client's first response: when the push began reaching proxies (after the debounce).
      row('first response min', (x) => ms(x.firstResponseMs.min)),
      row('first response median', (x) => ms(x.firstResponseMs.median)),
      row('first response max', (x) => ms(x.firstResponseMs.max)),
      row('per-client connect median', (x) => (x.perClientConnectMs ? ms(x.perClientConnectMs.median) : '')),
      row('per-client connect p99', (x) => (x.perClientConnectMs ? ms(x.perClientConnectMs.p99) : '')),
      row('push versions seen', (x) => String(x.versions)),
    ]),
  );
  console.log('');
  console.log(
    table('Bytes (DiscoveryResponse payloads received by the clients)', [
      head,
      row('total', (x) => bytes(x.bytesTotal)),
      row('per client median', (x) => bytes(x.bytesPerClient.median)),
      row('per client max', (x) => bytes(x.bytesPerClient.max)),
      ...SHORTS.map((t) => row(`  ${t}: bytes (responses)`, (x) => (x.byType[t].responses ? `${bytes(x.byType[t].bytes)} (${count(x.byType[t].responses)})` : '-'))),
    ]),
  );
  console.log('');
  console.log(
    table('Daemon', [
      head,
      row('CPU time to convergence', (x) => `${x.daemonCpuSeconds.toFixed(2)} s`),
      row('CPU time incl. quiet wait + scrape', (x) => `${x.daemonCpuWithQuietSeconds.toFixed(2)} s`),
      row('longest /ready answer (loop stall)', (x) => ms(x.daemonStallMs)),
      row('RSS peak in phase', (x) => bytes(x.daemonRssPeakBytes)),
      row('RSS at end of phase', (x) => bytes(x.daemonRssEndBytes)),
      row('  JS heap used / external', (x) => `${bytes(x.daemon.heapUsedBytes)} / ${bytes(x.daemon.externalBytes)}`),
      row('GC time (major / minor)', (x) => `${ms(x.daemon.gcMs.major)} / ${ms(x.daemon.gcMs.minor)}`),
      row('push contexts built (total)', (x) => `${x.daemon.pushContextBuilds} (${ms(x.daemon.pushContextBuildMs)})`),
      row('debounce', (x) => ms(x.daemon.debounceMs)),
      row('proxy_convergence_time n', (x) => count(x.daemon.convergence.count)),
      row('  mean / p50~ / p99~', (x) => `${ms(x.daemon.convergence.meanMs)} / ${ms(x.daemon.convergence.p50Ms)} / ${ms(x.daemon.convergence.p99Ms)}`),
      row('proxy_queue_time mean / p99~', (x) => `${ms(x.daemon.queue.meanMs)} / ${ms(x.daemon.queue.p99Ms)}`),
      ...SHORTS.map((t) => row(`xds_push_time ${t} (sum, n)`, (x) => (x.daemon.pushTime[t] ? `${ms(x.daemon.pushTime[t].totalMs)}, ${count(x.daemon.pushTime[t].count)}` : '-'))),
      row('expired nonces', (x) => count(x.daemon.expiredNonces)),
      row('xDS cache evictions', (x) => Object.entries(x.daemon.cacheEvictions).filter(([, n]) => n > 0).map(([why, n]) => `${why} ${count(n)}`).join(', ') || '0'),
      row('client CPU time (workers)', (x) => `${x.workerCpuSeconds.toFixed(1)} s`),
    ]),
  );
  console.log('');
  const d = res.daemon;
  console.log(
    table('Daemon memory', [
      ['RSS after start (config loaded)', bytes(d.startupRssBytes)],
      ['RSS after connect', bytes(d.rssAfterConnectBytes)],
      ['RSS peak during pushes', bytes(d.rssPeakDuringPushesBytes)],
      ['VmHWM (peak since start)', bytes(d.vmHwmBytes)],
    ]),
  );
  console.log('  (~ quantiles are estimated from the daemon\'s histogram buckets)');
  if (res.logFile) console.log(`\nkept: config ${res.configDir}, daemon log ${res.logFile}`);
  for (const f of res.failures) console.log(`\n${f.startsWith('note:') ? '' : 'FAILED: '}${f}`);
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

/** SIGUSR2 (with --heapsnapshot-signal) and wait until the file is complete; the daemon is frozen meanwhile. */
async function heapSnapshot(daemon: Daemon, dir: string): Promise<string> {
  const before = new Set(fs.readdirSync(dir));
  process.kill(daemon.pid, 'SIGUSR2');
  let lastSize = -1;
  for (let i = 0; i < 1200; i++) {
    await sleep(500);
    daemon.check();
    const file = fs.readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const size = fs.statSync(path.join(dir, file)).size;
    if (size > 0 && size === lastSize) return path.join(dir, file);
    lastSize = size;
  }
  throw new BenchError('the daemon wrote no heap snapshot within 10 minutes');
}

function buildInfo(): Results['build'] {
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return undefined;
    }
  };
  let distBuiltAt = 'unknown';
  try {
    distBuiltAt = fs.statSync(path.join(REPO_ROOT, 'dist', 'src', 'main.js')).mtime.toISOString();
  } catch {
    // reported as unknown
  }
  return { commit: git('rev-parse', '--short', 'HEAD') ?? 'unknown', srcModified: (git('status', '--porcelain', '--', 'src') ?? '') !== '', distBuiltAt };
}

async function main(): Promise<number> {
  let o: Options;
  try {
    o = parseOptions(process.argv.slice(2));
  } catch (err) {
    console.error((err as Error).message);
    return 2;
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-bench-push-'));
  const configDir = path.join(tmp, 'config');
  const logFile = path.join(tmp, 'daemon.log');
  let bench: Bench | undefined;
  let cleaning: Promise<void> | undefined;
  let interruptedBy: NodeJS.Signals | undefined;
  // One cleanup, however many callers (the normal end, a signal): all wait for the same one.
  const cleanup = (): Promise<void> =>
    (cleaning ??= (async () => {
      bench?.sampler?.stop();
      bench?.probe?.stop();
      bench?.limitSampler?.stop();
      await bench?.workers?.stop().catch(() => undefined);
      await bench?.limit?.stop().catch(() => undefined);
      await bench?.daemon?.stop(o.cpuProf ? 60_000 : 10_000).catch(() => undefined);
      if (!o.keep) fs.rmSync(tmp, { recursive: true, force: true });
    })());
  const interrupted = (signal: NodeJS.Signals) => {
    interruptedBy = signal;
    console.error(`\n${signal}: stopping the clients and the daemon`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  process.once('exit', () => {
    // Last resort when something threw past the cleanup.
    bench?.workers?.killNow();
    bench?.limit?.killNow();
    bench?.daemon?.killNow();
    if (!o.keep) fs.rmSync(tmp, { recursive: true, force: true });
  });

  // Progress goes to stderr (stdout is the report, or the JSON with --json).
  const log = (s: string) => process.stderr.write(`${s}\n`);
  let error: string | undefined;
  let vmHwm = 0;
  let startupRss = 0;
  try {
    const started = now();
    const layout = generateMesh(configDir, o.services);
    log(`generated ${layout.files} config files (${o.services} services, ${layout.workloads.length} WorkloadEntries, ${layout.routed} routed) in ${ms(now() - started)} under ${configDir}`);
    const specs = clientSpecs(layout, o.clients);
    bench = new Bench(o, layout, specs);
    const t = now();
    bench.daemon = await Daemon.start({
      configDir,
      logFile,
      nodeArgs: [
        ...(o.cpuProf ? ['--cpu-prof', '--cpu-prof-dir', tmp] : []),
        ...(o.heapSnapshot ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${tmp}`] : []),
        ...o.daemonNodeArgs,
      ],
      env: { ...process.env },
      startTimeoutMs: 120_000,
    });
    bench.sampler = new RssSampler(bench.daemon.pid);
    bench.probe = new StallProbe(bench.daemon.monitoringPort);
    startupRss = bench.sampler.sample();
    log(`daemon pid ${bench.daemon.pid} ready in ${ms(now() - t)} (xDS on 127.0.0.1:${bench.daemon.grpcPort}), RSS ${bytes(startupRss)}`);
    if (bench.daemon.problems.length) throw new BenchError(`the daemon rejected generated config:\n${bench.daemon.problems.join('\n')}`);
    bench.workers = Workers.start(o.workers, o.workerNodeArgs);
    log(`connecting ${o.clients} clients from ${o.workers} worker(s)...`);
    await bench.connect();
    log(`initial connect: all clients complete after ${ms(bench.phases[0].convergenceMs.max)}; measuring pushes...`);
    if (o.heapSnapshot) log(`daemon heap snapshot: ${await heapSnapshot(bench.daemon, tmp)}`);
    await bench.pushes();
    vmHwm = procMemory(bench.daemon.pid)?.hwmBytes ?? 0;
    const problems = bench.daemon.problems;
    if (problems.length) bench.failures.push(`the daemon logged problems:\n${problems.join('\n')}`);
    if (o.limit) await bench.limitRun(tmp, log);
  } catch (err) {
    error = err instanceof BenchError ? err.message : ((err as Error).stack ?? String(err));
  }
  const results: Results = {
    options: o,
    build: buildInfo(),
    mesh: {
      services: o.services,
      workloadEntries: bench?.layout.workloads.length ?? 0,
      routedServices: bench?.layout.routed ?? 0,
      files: bench?.layout.files ?? 0,
      connections: bench?.connections ?? 0,
    },
    phases: bench?.phases ?? [],
    daemon: {
      rssAfterConnectBytes: bench?.rssAfterConnectBytes ?? 0,
      rssPeakDuringPushesBytes: bench?.rssPeakDuringPushesBytes ?? 0,
      vmHwmBytes: vmHwm,
      startupRssBytes: startupRss,
    },
    failures: [...(bench?.failures ?? []), ...(error ? [error] : [])],
    ...(o.keep ? { configDir, logFile } : {}),
  };
  if (interruptedBy) {
    // The signal handler owns the exit (130) once the cleanup is done.
    await cleanup();
    return new Promise<number>(() => undefined);
  }
  log('stopping clients and daemon...');
  await cleanup();
  if (o.cpuProf) {
    const profiles = fs.readdirSync(tmp).filter((f) => f.endsWith('.cpuprofile'));
    log(`daemon CPU profile: ${profiles.map((f) => path.join(tmp, f)).join(', ') || 'none written'}`);
  }
  if (o.json) console.log(JSON.stringify(results, null, 2));
  else if (results.phases.length) printTables(results);
  else if (error) console.error(`\nFAILED: ${error}`);
  return results.failures.some((f) => !f.startsWith('note:')) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
