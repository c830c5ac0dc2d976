/**
 * A client worker (child process of the bench): simulates Envoy sidecars, one ADS stream each
 * (delta or state of the world), over real gRPC (grpc-stream.ts). Per stream, like Envoy: CDS and LDS wildcard;
 * EDS for the EDS clusters it holds; RDS for the route names of the listeners it holds; every
 * response ACKed with its nonce (and version and names, state of the world).
 *
 * A client reads only a response's envelope (xds.ts readEnvelope). What it must follow of a
 * resource's content (a cluster's EDS name, a listener's route names) is read once per worker
 * per distinct resource (ResourceTable), since thousands of clients get the same resources.
 */
import { Capture, CapturedResponse, writeCapture } from './capture';
import { GrpcCall, GrpcConnection } from './grpc-stream';
import type { ClientReport, ClientSpec, Command, ConnectCommand, Reply, Report, Status, TypeTotals } from './protocol';
import {
  edsNameOfAny, encodeDeltaRequest, encodeNames, encodeNodeField, encodeRequest, EnvelopeResource, readEnvelope, routeNamesOfAny, Short, SHORT_OF, SHORTS,
} from './xds';

const ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources';
const DELTA_ADS = '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources';

const now = (): number => performance.timeOrigin + performance.now();

interface TypeState {
  version: string;
  nonce: string;
  /** State of the world: subscribed names (EDS/RDS); empty for the wildcard types. Delta keeps them in WantedNames. */
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

/**
 * Every distinct resource this worker's clients received, by type, name and version (state
 * of the world, which has no resource versions: by type, name and size). Keeps the content
 * clients follow, read on first sight, and with capture on the resource's bytes as they
 * arrived (the `resources` field entry), for the transport-limit replay.
 *
 * A resource seen before is found without making strings: delta, by a hash of its version
 * (a hash of the body, which holds the name; the name's length is checked too), state of the
 * world, by a hash of its name and size. The bytes kept with the resource are compared.
 */
class ResourceTable {
  private readonly byHash = new Map<number, number>();
  private readonly byKey = new Map<string, number>();
  readonly frames: Buffer[] = [];
  readonly names: string[] = [];
  private readonly types: Short[] = [];
  /** State of the world: the resource entry's size, part of its identity. Delta: 0. */
  private readonly sizes: number[] = [];
  private readonly nameBytes: Buffer[] = [];
  private readonly versionBytes: Buffer[] = [];
  /** CDS: the EDS name (none for a cluster without EDS); undefined until first needed. */
  private readonly edsNames: Array<readonly string[] | undefined> = [];
  private readonly routeNames: Array<readonly string[] | undefined> = [];

  id(short: Short, buf: Buffer, r: EnvelopeResource, keepFrame: boolean): number {
    const versioned = r.versionEnd > r.versionStart;
    const size = versioned ? 0 : r.end - r.start;
    const hash = versioned ? hashBytes(buf, r.versionStart, r.versionEnd, TYPE_SEED[short]) : hashBytes(buf, r.nameStart, r.nameEnd, TYPE_SEED[short] ^ size);
    let id = this.byHash.get(hash);
    if (id === undefined || !this.matches(id, short, size, buf, r)) {
      const name = buf.toString('utf8', r.nameStart, r.nameEnd);
      const version = buf.toString('utf8', r.versionStart, r.versionEnd);
      const key = `${short} ${name} ${version || size}`;
      id = this.byKey.get(key);
      if (id === undefined) {
        id = this.frames.length;
        this.byKey.set(key, id);
        this.frames.push(EMPTY);
        this.names.push(name);
        this.types.push(short);
        this.sizes.push(size);
        this.nameBytes.push(Buffer.from(buf.subarray(r.nameStart, r.nameEnd)));
        this.versionBytes.push(Buffer.from(buf.subarray(r.versionStart, r.versionEnd)));
        this.edsNames.push(undefined);
        this.routeNames.push(undefined);
      }
      this.byHash.set(hash, id);
    }
    if (keepFrame && this.frames[id] === EMPTY) this.frames[id] = Buffer.from(buf.subarray(r.start, r.end));
    return id;
  }

  private matches(id: number, short: Short, size: number, buf: Buffer, r: EnvelopeResource): boolean {
    return (
      this.types[id] === short &&
      this.sizes[id] === size &&
      sameBytes(this.versionBytes[id], buf, r.versionStart, r.versionEnd) &&
      (size === 0 ? this.nameBytes[id].length === r.nameEnd - r.nameStart : sameBytes(this.nameBytes[id], buf, r.nameStart, r.nameEnd))
    );
  }

  /** The EDS name a cluster wants, as a list (empty: not an EDS cluster), one shared list per resource. */
  eds(id: number, buf: Buffer, r: EnvelopeResource): readonly string[] {
    let names = this.edsNames[id];
    if (names === undefined) {
      const n = edsNameOfAny(buf, r.anyStart, r.anyEnd);
      names = this.edsNames[id] = n === undefined ? [] : [n];
    }
    return names;
  }

  routes(id: number, buf: Buffer, r: EnvelopeResource): readonly string[] {
    return (this.routeNames[id] ??= routeNamesOfAny(buf, r.anyStart, r.anyEnd));
  }

  get frameBytes(): number {
    return this.frames.reduce((a, f) => a + f.length, 0);
  }
}

const TYPE_SEED: Record<Short, number> = { cds: 0x811c9dc5, eds: 0x01000193, lds: 0x5bd1e995, rds: 0x27d4eb2f };

/** FNV-1a over buf[start, end), continuing from `seed`. */
function hashBytes(buf: Buffer, start: number, end: number, seed: number): number {
  let h = seed;
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i], 0x01000193);
  return h >>> 0;
}

function sameBytes(kept: Buffer, buf: Buffer, start: number, end: number): boolean {
  if (kept.length !== end - start) return false;
  for (let i = 0; i < kept.length; i++) if (kept[i] !== buf[start + i]) return false;
  return true;
}

const table = new ResourceTable();
/** Phase index of what arrives now (0 = connect), recorded with captured responses. */
let phase = 0;

const byType: Record<Short, TypeTotals> = {
  cds: { responses: 0, bytes: 0, resources: 0 },
  eds: { responses: 0, bytes: 0, resources: 0 },
  lds: { responses: 0, bytes: 0, resources: 0 },
  rds: { responses: 0, bytes: 0, resources: 0 },
};

interface NameChanges {
  added: Set<string>;
  removed: Set<string>;
}

/**
 * Delta: the names of a type a client is subscribed to (EDS, RDS), counted by the resources
 * that want them (clusters, listeners), so a response changing a few resources costs a few
 * updates instead of a rebuild of every name.
 */
class WantedNames {
  private readonly byOwner = new Map<string, readonly string[]>();
  private readonly refs = new Map<string, number>();

  get size(): number {
    return this.refs.size;
  }

  /** `owner` now wants `names` (none: it is gone); names newly wanted or no longer wanted go to `changes`. */
  set(owner: string, names: readonly string[], changes: NameChanges): void {
    const old = this.byOwner.get(owner);
    if (old === names || (old === undefined && names.length === 0)) return;
    for (const n of names) {
      const c = this.refs.get(n) ?? 0;
      this.refs.set(n, c + 1);
      if (c === 0 && (changes.removed.size === 0 || !changes.removed.delete(n))) changes.added.add(n);
    }
    for (const n of old ?? []) {
      const c = this.refs.get(n)! - 1;
      if (c > 0) this.refs.set(n, c);
      else {
        this.refs.delete(n);
        if (!changes.added.delete(n)) changes.removed.add(n);
      }
    }
    if (names.length) this.byOwner.set(owner, names);
    else this.byOwner.delete(owner);
  }
}

class SimClient {
  private call: GrpcCall | undefined;
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
  /** Delta only: the EDS names its clusters want, the route names its listeners want. */
  private readonly wanted: Record<'eds' | 'rds', WantedNames> = { eds: new WantedNames(), rds: new WantedNames() };

  /** With capture on: every response, by reference to the resource table. */
  readonly captured: CapturedResponse[] = [];

  constructor(
    readonly spec: ClientSpec,
    private readonly connection: GrpcConnection,
    private readonly delta: boolean,
    private readonly capture: boolean,
    private readonly tag: boolean,
  ) {
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
    const metadata: Record<string, string> = this.tag ? { 'bench-client': String(this.spec.index) } : {};
    this.call = this.connection.call(this.delta ? DELTA_ADS : ADS, metadata, {
      onMessage: (b) => this.onResponse(b),
      onError: (message) => this.fail(message),
      onEnd: () => this.fail('the server ended the stream'),
    });
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
    if (this.subscribed('eds') > 0 && t.eds.received === 0) return false;
    if (this.subscribed('rds') > 0 && t.rds.received === 0) return false;
    return true;
  }

  private subscribed(short: 'eds' | 'rds'): number {
    return this.delta ? this.wanted[short].size : this.types[short].names.length;
  }

  private onResponse(buf: Buffer): void {
    const at = now();
    const r = readEnvelope(buf, this.delta);
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
    const resources = r.resources;
    // A resource's id gives its name (kept as a string once per worker) and what it wants.
    const ids = resources.map((res) => table.id(short, buf, res, this.capture));
    if (this.capture) this.captured.push(captureOf(buf, resources, ids));

    const st = this.types[short];
    st.version = r.version;
    st.nonce = r.nonce;
    st.received += 1;
    if (st.awaiting.size > 0) for (const id of ids) st.awaiting.delete(table.names[id]);
    if (short === 'cds' || short === 'lds') {
      // What a cluster or listener wants: the EDS name of a cluster, the route names of a listener.
      const follows = short === 'cds' ? 'eds' : 'rds';
      const wants = (i: number) => (short === 'cds' ? table.eds(ids[i], buf, resources[i]) : table.routes(ids[i], buf, resources[i]));
      if (this.delta) {
        // Delta carries only what changed, and names what was removed.
        const changes: NameChanges = { added: new Set(), removed: new Set() };
        for (const n of r.removed) this.wanted[follows].set(n, [], changes);
        for (let i = 0; i < resources.length; i++) this.wanted[follows].set(table.names[ids[i]], wants(i), changes);
        this.changeSubscription(follows, changes);
      } else {
        const names = new Set<string>();
        for (let i = 0; i < resources.length; i++) for (const n of wants(i)) names.add(n);
        this.resubscribe(follows, [...names]);
      }
    }
    // ACK: the version and nonce received, with the type's current subscription.
    this.send(short, r.version, r.nonce, st.namesBytes);
    if (this.initialDoneAt === 0 && this.initialDone) this.initialDoneAt = at;
  }

  /** Delta: a subscription change for EDS/RDS, sent before the ACK of the CDS/LDS that caused it, as Envoy does. */
  private changeSubscription(short: 'eds' | 'rds', changes: NameChanges): void {
    if (changes.added.size === 0 && changes.removed.size === 0) return;
    const st = this.types[short];
    // What is still owed: earlier additions still wanted, plus the new ones.
    for (const n of changes.removed) st.awaiting.delete(n);
    for (const n of changes.added) st.awaiting.add(n);
    this.call!.write(encodeDeltaRequest(short, '', changes.added, changes.removed));
    st.subscribed = true;
  }

  /** State of the world: a new name set for EDS/RDS, sent before the ACK of the CDS/LDS that caused it, as Envoy does. */
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

/**
 * A response as head + resource entries + tail. The daemon writes the resources as one run
 * of fields; a response where they are not contiguous is kept whole (as its head).
 */
function captureOf(buf: Buffer, resources: readonly EnvelopeResource[], ids: readonly number[]): CapturedResponse {
  let contiguous = resources.length > 0;
  for (let i = 1; i < resources.length && contiguous; i++) contiguous = resources[i].start === resources[i - 1].end;
  if (!contiguous) return { phase, head: Buffer.from(buf), ids: new Uint32Array(0), tail: EMPTY };
  return {
    phase,
    head: Buffer.from(buf.subarray(0, resources[0].start)),
    ids: Uint32Array.from(ids),
    tail: Buffer.from(buf.subarray(resources[resources.length - 1].end)),
  };
}

const clients: SimClient[] = [];
/** Types every client must receive in the current phase (bits of TYPE_BIT). */
let expectMask = 0;
const connections: GrpcConnection[] = [];
let cpuAtMark = process.cpuUsage();

function connect(cmd: ConnectCommand): void {
  const target = `127.0.0.1:${cmd.port}`;
  cmd.clients.forEach((spec, i) => {
    // One HTTP/2 connection per group of streams.
    if (i % cmd.streamsPerConnection === 0) connections.push(new GrpcConnection(target, { windowBytes: cmd.windowBytes }));
    clients.push(new SimClient(spec, connections[connections.length - 1], cmd.delta, cmd.capture, cmd.tag));
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

/** Closes every stream and connection; kept: the resource table and what was captured. */
let closedCaptures: Array<{ index: number; responses: CapturedResponse[] }> = [];
function close(): void {
  for (const c of clients) {
    c.close();
    if (c.captured.length) closedCaptures.push({ index: c.spec.index, responses: c.captured });
  }
  for (const c of connections) c.close();
  clients.length = 0;
  connections.length = 0;
}

function dump(file: string): Extract<Reply, { t: 'dumped' }> {
  const capture: Capture = {
    frames: table.frames,
    clients: [...closedCaptures, ...clients.filter((c) => c.captured.length).map((c) => ({ index: c.spec.index, responses: c.captured }))],
  };
  writeCapture(file, capture);
  const responses = capture.clients.reduce((a, c) => a + c.responses.length, 0);
  closedCaptures = [];
  for (const c of clients) c.captured.length = 0;
  return { t: 'dumped', id: 0, frames: table.frames.length, frameBytes: table.frameBytes, responses };
}

function stop(): void {
  close();
}

process.on('message', (cmd: Command) => {
  try {
    switch (cmd.t) {
      case 'connect':
        mark([]);
        phase = cmd.phase;
        connect(cmd);
        reply({ t: 'ok', id: cmd.id });
        break;
      case 'mark':
        mark(cmd.expect);
        phase = cmd.phase;
        reply({ t: 'ok', id: cmd.id });
        break;
      case 'close':
        close();
        reply({ t: 'ok', id: cmd.id });
        break;
      case 'dump':
        reply({ ...dump(cmd.file), id: cmd.id });
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
