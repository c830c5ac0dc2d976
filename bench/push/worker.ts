/**
 * A client worker (child process of the bench): simulates Envoy sidecars, one state-of-the-world
 * ADS stream each, over real gRPC. Per stream, like Envoy: CDS and LDS wildcard; EDS for the
 * EDS clusters of the last CDS response; RDS for the route names of the last LDS response;
 * every response ACKed with its version and nonce and the current names of its type.
 */
import * as grpc from '@grpc/grpc-js';
import type { ClientReport, ClientSpec, Command, ConnectCommand, Reply, Report, Status, TypeTotals } from './protocol';
import {
  decodeDeltaResponse, decodeResponse, edsNameOfCluster, encodeDeltaRequest, encodeNames, encodeNodeField, encodeRequest, nameOfResource, Response,
  routeNamesOfListener, Short, SHORT_OF, SHORTS,
} from './xds';

const ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const DELTA_ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources';

const now = (): number => performance.timeOrigin + performance.now();
const identity = (b: Buffer): Buffer => b;

interface TypeState {
  version: string;
  nonce: string;
  /** Subscribed names (EDS/RDS); empty for the wildcard types. */
  names: string[];
  namesKey: string;
  namesBytes: Buffer;
  subscribed: boolean;
  /** Names added by the last subscription changes that no response has carried yet. */
  awaiting: Set<string>;
  received: number;
}

const EMPTY = Buffer.alloc(0);

/** Encoded resource_names shared by clients with the same subscription (most of a namespace). */
const namesCache = new Map<string, Buffer>();
function namesBytes(key: string, names: string[]): Buffer {
  let b = namesCache.get(key);
  if (!b) {
    if (namesCache.size > 2000) namesCache.clear();
    b = encodeNames(names);
    namesCache.set(key, b);
  }
  return b;
}

const byType: Record<Short, TypeTotals> = {
  cds: { responses: 0, bytes: 0, resources: 0 },
  eds: { responses: 0, bytes: 0, resources: 0 },
  lds: { responses: 0, bytes: 0, resources: 0 },
  rds: { responses: 0, bytes: 0, resources: 0 },
};

class SimClient {
  private call: grpc.ClientDuplexStream<Buffer, Buffer> | undefined;
  private readonly types: Record<Short, TypeState>;
  private node: Buffer | undefined;
  startedAt = 0;
  initialDoneAt = 0;
  firstAt = 0;
  lastAt = 0;
  bytes = 0;
  responses = 0;
  versions = new Set<string>();
  /** Bit per type (SHORTS order) received since the mark. */
  gotTypes = 0;
  failed = false;
  error: string | undefined;
  private closing = false;
  /** Delta only: what each cluster and listener of the client's state names (EDS name, route names). */
  private readonly edsOfCluster = new Map<string, string>();
  private readonly routesOfListener = new Map<string, string[]>();

  constructor(readonly spec: ClientSpec, private readonly channel: grpc.Client, private readonly delta: boolean) {
    const state = (): TypeState => ({ version: '', nonce: '', names: [], namesKey: '', namesBytes: EMPTY, subscribed: false, awaiting: new Set(), received: 0 });
    this.types = { cds: state(), eds: state(), lds: state(), rds: state() };
    this.node = encodeNodeField(`sidecar~${spec.ip}~${spec.pod}.${spec.namespace}~${spec.namespace}.svc.cluster.local`, {
      NAMESPACE: spec.namespace,
      INSTANCE_IPS: spec.ip,
      INTERCEPTION_MODE: 'NONE',
      LABELS: JSON.stringify({ app: spec.pod.replace(/-\d+$/, '') }),
      CLUSTER_ID: 'Kubernetes',
    });
  }

  start(): void {
    this.startedAt = now();
    const call = this.channel.makeBidiStreamRequest<Buffer, Buffer>(this.delta ? DELTA_ADS : ADS, identity, identity);
    this.call = call;
    call.on('data', (b: Buffer) => this.onResponse(b));
    call.on('error', (e: grpc.ServiceError) => this.fail(`${e.code} ${e.details || e.message}`));
    call.on('end', () => this.fail('the server ended the stream'));
    this.send('cds', '', '', EMPTY);
    this.send('lds', '', '', EMPTY);
  }

  private fail(message: string): void {
    if (this.closing || this.failed) return;
    this.failed = true;
    this.error = `client ${this.spec.index} (${this.spec.ip}, ${this.spec.namespace}): ${message}`;
  }

  private send(short: Short, version: string, nonce: string, names: Buffer): void {
    const node = this.node;
    this.node = undefined;
    // Delta: a wildcard subscription or an ACK is the type and nonce alone.
    this.call!.write(this.delta ? encodeDeltaRequest(short, nonce, [], [], node) : encodeRequest(short, version, nonce, names, node));
  }

  /** Still waiting for resources it subscribed to. */
  get awaiting(): boolean {
    return this.types.eds.awaiting.size > 0 || this.types.rds.awaiting.size > 0;
  }

  get initialDone(): boolean {
    const t = this.types;
    if (t.cds.received === 0 || t.lds.received === 0 || this.awaiting) return false;
    if (t.eds.names.length > 0 && t.eds.received === 0) return false;
    if (t.rds.names.length > 0 && t.rds.received === 0) return false;
    return true;
  }

  private onResponse(buf: Buffer): void {
    const at = now();
    const delta = this.delta ? decodeDeltaResponse(buf) : undefined;
    const r: Response = delta ?? decodeResponse(buf);
    const short = SHORT_OF[r.typeUrl];
    this.bytes += buf.length;
    this.responses += 1;
    if (this.firstAt === 0) this.firstAt = at;
    this.lastAt = at;
    this.versions.add(r.version);
    if (!short) return;
    this.gotTypes |= TYPE_BIT[short];
    const totals = byType[short];
    totals.responses += 1;
    totals.bytes += buf.length;
    totals.resources += r.resources.length;

    const st = this.types[short];
    st.version = r.version;
    st.nonce = r.nonce;
    st.received += 1;
    if (st.awaiting.size > 0) for (const [s, e] of r.resources) st.awaiting.delete(nameOfResource(buf, s, e));
    if (short === 'cds') {
      if (delta) {
        // Delta carries only what changed: keep every cluster's EDS name across responses.
        for (const n of delta.removed) this.edsOfCluster.delete(n);
        delta.resources.forEach(([s, e], i) => {
          const eds = edsNameOfCluster(buf, s, e);
          if (eds === undefined) this.edsOfCluster.delete(delta.names[i]);
          else this.edsOfCluster.set(delta.names[i], eds);
        });
        this.resubscribe('eds', [...this.edsOfCluster.values()]);
      } else {
        const names: string[] = [];
        for (const [s, e] of r.resources) {
          const n = edsNameOfCluster(buf, s, e);
          if (n !== undefined) names.push(n);
        }
        this.resubscribe('eds', names);
      }
    } else if (short === 'lds') {
      const names = new Set<string>();
      if (delta) {
        for (const n of delta.removed) this.routesOfListener.delete(n);
        delta.resources.forEach(([s, e], i) => {
          const own = new Set<string>();
          routeNamesOfListener(buf, s, e, own);
          this.routesOfListener.set(delta.names[i], [...own]);
        });
        for (const list of this.routesOfListener.values()) for (const n of list) names.add(n);
      } else for (const [s, e] of r.resources) routeNamesOfListener(buf, s, e, names);
      this.resubscribe('rds', [...names]);
    }
    // ACK: the version and nonce received, with the type's current subscription.
    this.send(short, r.version, r.nonce, st.namesBytes);
    if (this.initialDoneAt === 0 && this.initialDone) this.initialDoneAt = at;
  }

  /** A new name set for EDS/RDS: sent before the ACK of the CDS/LDS that caused it, as Envoy does. */
  private resubscribe(short: 'eds' | 'rds', names: string[]): void {
    const st = this.types[short];
    const key = names.join('\n');
    if (key === st.namesKey) return;
    const had = new Set(st.names);
    const added = names.filter((n) => !had.has(n));
    const same = added.length === 0 && had.size === names.length;
    st.names = names;
    st.namesKey = key;
    st.namesBytes = namesBytes(key, names);
    if (same) return;
    if (names.length === 0 && !st.subscribed) return;
    // What is still owed: earlier additions still wanted, plus the new ones.
    const wanted = new Set(names);
    st.awaiting = new Set([...[...st.awaiting].filter((n) => wanted.has(n)), ...added]);
    if (this.delta) {
      const removed = [...had].filter((n) => !wanted.has(n));
      this.call!.write(encodeDeltaRequest(short, '', added, removed));
      st.subscribed = true;
      return;
    }
    // First subscription: no nonce. Later changes carry the last nonce (the server then ACKs and answers).
    this.send(short, st.subscribed ? st.version : '', st.subscribed ? st.nonce : '', st.namesBytes);
    st.subscribed = true;
  }

  mark(): void {
    this.firstAt = 0;
    this.lastAt = 0;
    this.bytes = 0;
    this.responses = 0;
    this.versions = new Set();
    this.gotTypes = 0;
  }

  close(): void {
    this.closing = true;
    this.call?.cancel();
  }

  report(): ClientReport {
    return {
      index: this.spec.index,
      firstAt: this.firstAt,
      lastAt: this.lastAt,
      bytes: this.bytes,
      responses: this.responses,
      startedAt: this.startedAt,
      initialDoneAt: this.initialDoneAt,
      versions: [...this.versions],
    };
  }
}

const TYPE_BIT: Record<Short, number> = { cds: 1, eds: 2, lds: 4, rds: 8 };

const clients: SimClient[] = [];
/** Types every client must receive in the current phase (bits of TYPE_BIT). */
let expectMask = 0;
const channels: grpc.Client[] = [];
let cpuAtMark = process.cpuUsage();

function connect(cmd: ConnectCommand): void {
  const target = `127.0.0.1:${cmd.port}`;
  cmd.clients.forEach((spec, i) => {
    if (i % cmd.streamsPerConnection === 0) {
      // A local subchannel pool per client object: one HTTP/2 connection each.
      channels.push(
        new grpc.Client(target, grpc.credentials.createInsecure(), {
          'grpc.use_local_subchannel_pool': 1,
          'grpc.max_receive_message_length': -1,
          'grpc.max_send_message_length': -1,
          'grpc.keepalive_time_ms': 600_000,
          ...(cmd.windowBytes > 0 ? { 'grpc-node.flow_control_window': cmd.windowBytes } : {}),
        }),
      );
    }
    clients.push(new SimClient(spec, channels[channels.length - 1], cmd.delta));
  });
  const n = clients.length;
  clients.forEach((c, i) => {
    const delay = cmd.rampMs > 0 ? (i / n) * cmd.rampMs : 0;
    if (delay === 0) c.start();
    else setTimeout(() => c.start(), delay);
  });
}

function status(): Status {
  let initialDone = 0;
  let updated = 0;
  let awaiting = 0;
  let lastAt = 0;
  let responses = 0;
  let bytes = 0;
  let failed = 0;
  let firstError: string | undefined;
  for (const c of clients) {
    if (c.initialDoneAt > 0) initialDone += 1;
    if (c.firstAt > 0 && (c.gotTypes & expectMask) === expectMask) updated += 1;
    if (c.awaiting) awaiting += 1;
    if (c.lastAt > lastAt) lastAt = c.lastAt;
    responses += c.responses;
    bytes += c.bytes;
    if (c.failed) {
      failed += 1;
      firstError ??= c.error;
    }
  }
  return { initialDone, updated, awaiting, lastAt, responses, bytes, failed, firstError };
}

function report(): Report {
  const cpu = process.cpuUsage(cpuAtMark);
  return {
    clients: clients.map((c) => c.report()),
    byType: JSON.parse(JSON.stringify(byType)),
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    rssBytes: process.memoryUsage.rss(),
  };
}

function mark(expect: readonly Short[]): void {
  expectMask = expect.reduce((m, t) => m | TYPE_BIT[t], 0);
  for (const c of clients) c.mark();
  for (const s of SHORTS) byType[s] = { responses: 0, bytes: 0, resources: 0 };
  cpuAtMark = process.cpuUsage();
}

function reply(r: Reply): void {
  process.send?.(r);
}

function stop(): void {
  for (const c of clients) c.close();
  for (const ch of channels) ch.close();
}

process.on('message', (cmd: Command) => {
  try {
    switch (cmd.t) {
      case 'connect':
        mark([]);
        connect(cmd);
        reply({ t: 'ok', id: cmd.id });
        break;
      case 'mark':
        mark(cmd.expect);
        reply({ t: 'ok', id: cmd.id });
        break;
      case 'status':
        reply({ t: 'status', id: cmd.id, status: status() });
        break;
      case 'report':
        reply({ t: 'report', id: cmd.id, report: report() });
        break;
      case 'stop':
        stop();
        reply({ t: 'ok', id: cmd.id });
        setTimeout(() => process.exit(0), 200).unref();
        break;
    }
  } catch (err) {
    reply({ t: 'error', id: cmd.id, message: (err as Error).stack ?? String(err) });
  }
});

// The bench went away (crash, kill -9): do not linger.
process.on('disconnect', () => {
  stop();
  process.exit(0);
});
// Ctrl-C reaches the whole process group: let the bench decide when workers stop.
process.on('SIGINT', () => undefined);
