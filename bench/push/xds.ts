/**
 * Just enough of the xDS wire format for thousands of simulated sidecars: requests are
 * concatenated from pre-encoded pieces; of a response only the envelope is read (type,
 * version, nonce, and each resource's name and version), and a resource's content (the EDS
 * name of a cluster, the route names of a listener) only when a client has not seen that
 * resource before (see worker.ts).
 */

export const TYPE = {
  cds: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  eds: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  lds: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  rds: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
} as const;

export type Short = keyof typeof TYPE;
export const SHORTS: readonly Short[] = ['cds', 'eds', 'lds', 'rds'];
export const SHORT_OF: Record<string, Short> = Object.fromEntries(SHORTS.map((s) => [TYPE[s], s]));

const HCM = 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager';

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

function varint(n: number): Buffer {
  const bytes: number[] = [];
  while (n > 0x7f) {
    bytes.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  bytes.push(n);
  return Buffer.from(bytes);
}

/** A length-delimited field: tag, length, payload. */
export function lenField(field: number, payload: Buffer): Buffer {
  return Buffer.concat([varint((field << 3) | 2), varint(payload.length), payload]);
}

export function strField(field: number, s: string): Buffer {
  return lenField(field, Buffer.from(s, 'utf8'));
}

/** DiscoveryRequest.node (field 2): Node { id = 1; metadata = 3 (Struct of string values) }. */
export function encodeNodeField(id: string, metadata: Record<string, string>): Buffer {
  const entries = Object.entries(metadata).map(([k, v]) =>
    // Struct.fields (1) is a map<string, Value>: entry { key = 1; value = 2 }, Value.string_value = 3.
    lenField(1, Buffer.concat([strField(1, k), lenField(2, strField(3, v))])),
  );
  const node = Buffer.concat([strField(1, id), lenField(3, Buffer.concat(entries)), strField(6, 'envoy')]);
  return lenField(2, node);
}

/** DiscoveryRequest.resource_names (field 3), repeated. */
export function encodeNames(names: readonly string[]): Buffer {
  return Buffer.concat(names.map((n) => strField(3, n)));
}

export const TYPE_URL_FIELD: Record<Short, Buffer> = {
  cds: strField(4, TYPE.cds),
  eds: strField(4, TYPE.eds),
  lds: strField(4, TYPE.lds),
  rds: strField(4, TYPE.rds),
};

/**
 * envoy.service.discovery.v3.DiscoveryRequest from pieces: version_info = 1, node = 2,
 * resource_names = 3, type_url = 4, response_nonce = 5.
 */
export function encodeRequest(short: Short, version: string, nonce: string, names: Buffer, node?: Buffer): Buffer {
  const parts: Buffer[] = [];
  if (version) parts.push(strField(1, version));
  if (node) parts.push(node);
  parts.push(names, TYPE_URL_FIELD[short]);
  if (nonce) parts.push(strField(5, nonce));
  return Buffer.concat(parts);
}

// ---------------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------------

/** A forward-only protobuf cursor over `buf[pos, end)`. */
class Cursor {
  constructor(
    public buf: Buffer,
    public pos: number,
    public end: number,
  ) {}

  /** The same cursor over another range: a hot loop reuses one instead of allocating one per call. */
  reset(buf: Buffer, pos: number, end: number): this {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
    return this;
  }

  more(): boolean {
    return this.pos < this.end;
  }

  varint(): number {
    let result = 0;
    let mul = 1;
    for (;;) {
      if (this.pos >= this.end) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result += (b & 0x7f) * mul;
      if (b < 0x80) return result;
      mul *= 128;
    }
  }

  /** After a length-delimited tag: moves past its payload and returns where the payload starts (it ends at `pos`). */
  payload(): number {
    const len = this.varint();
    const start = this.pos;
    this.pos += len;
    if (this.pos > this.end) throw new Error('truncated field');
    return start;
  }

  /** After a length-delimited tag: [start, end) of its payload, cursor moved past it. */
  bytes(): [number, number] {
    const start = this.payload();
    return [start, this.pos];
  }

  string(): string {
    const [s, e] = this.bytes();
    return this.buf.toString('utf8', s, e);
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.pos += 8;
        return;
      case 2:
        this.bytes();
        return;
      case 5:
        this.pos += 4;
        return;
      default:
        throw new Error(`unsupported wire type ${wireType}`);
    }
  }
}

/** One entry of a response's `resources`, located but not decoded: byte ranges in the response. */
export interface EnvelopeResource {
  /** [start, end) of the whole field (tag, length and payload): the bytes a replay writes again. */
  start: number;
  end: number;
  /** Delta: Resource.name. State of the world: the first field of the Any's value (every xDS type's name). */
  nameStart: number;
  nameEnd: number;
  /** Delta: Resource.version (a hash of the body). State of the world: empty. */
  versionStart: number;
  versionEnd: number;
  /** [start, end) of the google.protobuf.Any: read only when a client needs the resource's content. */
  anyStart: number;
  anyEnd: number;
}

/**
 * What a client needs of a response to ACK it and follow its subscriptions; resources are not
 * decoded. The resource records are reused by the next readEnvelope: a connect reads millions
 * of them, and the worker handles a response before it reads the next.
 */
export interface Envelope {
  typeUrl: string;
  /** version_info (state of the world) or system_version_info (delta). */
  version: string;
  nonce: string;
  resources: EnvelopeResource[];
  /** Delta: removed_resources. */
  removed: string[];
}

/**
 * The envelope of a DiscoveryResponse (version_info = 1, resources = 2 (Any), type_url = 4,
 * nonce = 5) or a DeltaDiscoveryResponse (system_version_info = 1, resources = 2 (Resource
 * { version = 1; resource = 2 (Any); name = 3 }), type_url = 4, nonce = 5, removed_resources = 6).
 * A resource's name and version stay bytes: thousands of clients get the same resources, and
 * the worker's resource table knows them by those bytes without making strings of them.
 */
export function readEnvelope(buf: Buffer, delta: boolean): Envelope {
  const c = new Cursor(buf, 0, buf.length);
  const out: Envelope = { version: '', typeUrl: '', nonce: '', resources: [], removed: [] };
  let count = 0;
  while (c.more()) {
    const at = c.pos;
    const tag = c.varint();
    const field = tag >>> 3;
    if ((tag & 7) !== 2) c.skip(tag & 7);
    else if (field === 1) out.version = c.string();
    else if (field === 4) out.typeUrl = c.string();
    else if (field === 5) out.nonce = c.string();
    else if (field === 6 && delta) out.removed.push(c.string());
    else if (field === 2) {
      const [s, e] = c.bytes();
      const r = (records[count] ??= { start: 0, end: 0, nameStart: 0, nameEnd: 0, versionStart: 0, versionEnd: 0, anyStart: 0, anyEnd: 0 });
      count += 1;
      if (delta) deltaResource(buf, at, s, e, r);
      else sotwResource(buf, at, s, e, r);
      out.resources.push(r);
    } else c.skip(2);
  }
  return out;
}

/** The resource records readEnvelope fills, reused from one response to the next. */
const records: EnvelopeResource[] = [];

/** The cursor deltaResource reuses: it runs for every resource a connect delivers. */
const resourceCursor = new Cursor(Buffer.alloc(0), 0, 0);

/** Resource { version = 1; resource = 2 (Any); name = 3 }: the ranges, into `out`. */
function deltaResource(buf: Buffer, at: number, start: number, end: number, out: EnvelopeResource): void {
  out.start = at;
  out.end = end;
  out.nameStart = out.nameEnd = out.versionStart = out.versionEnd = out.anyStart = out.anyEnd = 0;
  const c = resourceCursor.reset(buf, start, end);
  while (c.more()) {
    const tag = c.varint();
    if ((tag & 7) !== 2) {
      c.skip(tag & 7);
      continue;
    }
    const s = c.payload();
    if (tag === ((3 << 3) | 2)) {
      out.nameStart = s;
      out.nameEnd = c.pos;
    } else if (tag === ((1 << 3) | 2)) {
      out.versionStart = s;
      out.versionEnd = c.pos;
    } else if (tag === ((2 << 3) | 2)) {
      out.anyStart = s;
      out.anyEnd = c.pos;
    }
  }
}

function sotwResource(buf: Buffer, at: number, start: number, end: number, out: EnvelopeResource): void {
  const value = anyValue(buf, start, end);
  [out.nameStart, out.nameEnd] = value ? nameOfResource(buf, value[0], value[1]) : [0, 0];
  out.start = at;
  out.end = end;
  out.versionStart = out.versionEnd = 0;
  out.anyStart = start;
  out.anyEnd = end;
}

/**
 * The content a client follows: a cluster's EDS name (undefined when it is not an EDS
 * cluster) or a listener's route names. Read from the Any at [anyStart, anyEnd).
 */
export function edsNameOfAny(buf: Buffer, anyStart: number, anyEnd: number): string | undefined {
  const value = anyValue(buf, anyStart, anyEnd);
  return value ? edsNameOfCluster(buf, value[0], value[1]) : undefined;
}

export function routeNamesOfAny(buf: Buffer, anyStart: number, anyEnd: number): string[] {
  const value = anyValue(buf, anyStart, anyEnd);
  const names = new Set<string>();
  if (value) routeNamesOfListener(buf, value[0], value[1], names);
  return [...names];
}

/** google.protobuf.Any { type_url = 1; value = 2 }: the range of value. */
function anyValue(buf: Buffer, start: number, end: number): [number, number] | undefined {
  const c = new Cursor(buf, start, end);
  let value: [number, number] | undefined;
  while (c.more()) {
    const tag = c.varint();
    if (tag === ((2 << 3) | 2)) value = c.bytes();
    else c.skip(tag & 7);
  }
  return value;
}

function anyOf(buf: Buffer, start: number, end: number): { typeUrl: string; value?: [number, number] } {
  const c = new Cursor(buf, start, end);
  let typeUrl = '';
  let value: [number, number] | undefined;
  while (c.more()) {
    const tag = c.varint();
    if (tag === ((1 << 3) | 2)) typeUrl = c.string();
    else if (tag === ((2 << 3) | 2)) value = c.bytes();
    else c.skip(tag & 7);
  }
  return { typeUrl, value };
}

const EDS_DISCOVERY_TYPE = 3;

/**
 * envoy.config.cluster.v3.Cluster { name = 1; type = 2; eds_cluster_config = 3 { service_name = 2 } }:
 * the EDS name of an EDS cluster (service_name, else the cluster name), undefined for others.
 */
function edsNameOfCluster(buf: Buffer, start: number, end: number): string | undefined {
  const c = new Cursor(buf, start, end);
  let name = '';
  let type = 0;
  let serviceName = '';
  while (c.more()) {
    const tag = c.varint();
    if (tag === ((1 << 3) | 2)) name = c.string();
    else if (tag === ((2 << 3) | 0)) type = c.varint();
    else if (tag === ((3 << 3) | 2)) {
      const [s, e] = c.bytes();
      const eds = new Cursor(buf, s, e);
      while (eds.more()) {
        const t = eds.varint();
        if (t === ((2 << 3) | 2)) serviceName = eds.string();
        else eds.skip(t & 7);
      }
    } else c.skip(tag & 7);
  }
  return type === EDS_DISCOVERY_TYPE ? serviceName || name : undefined;
}

/**
 * RDS names of a Listener: filter_chains = 3 and default_filter_chain = 25 (FilterChain
 * { filters = 3 }), Filter { typed_config = 4 (Any) }, and in an HttpConnectionManager
 * { rds = 3 { route_config_name = 2 } }.
 */
function routeNamesOfListener(buf: Buffer, start: number, end: number, into: Set<string>): void {
  const c = new Cursor(buf, start, end);
  while (c.more()) {
    const tag = c.varint();
    if (tag === ((3 << 3) | 2) || tag === ((25 << 3) | 2)) {
      const [s, e] = c.bytes();
      const chain = new Cursor(buf, s, e);
      while (chain.more()) {
        const t = chain.varint();
        if (t === ((3 << 3) | 2)) {
          const [fs, fe] = chain.bytes();
          const name = routeNameOfFilter(buf, fs, fe);
          if (name) into.add(name);
        } else chain.skip(t & 7);
      }
    } else c.skip(tag & 7);
  }
}

function routeNameOfFilter(buf: Buffer, start: number, end: number): string | undefined {
  const c = new Cursor(buf, start, end);
  while (c.more()) {
    const tag = c.varint();
    if (tag !== ((4 << 3) | 2)) {
      c.skip(tag & 7);
      continue;
    }
    const [s, e] = c.bytes();
    const any = anyOf(buf, s, e);
    if (any.typeUrl !== HCM || !any.value) return undefined;
    const hcm = new Cursor(buf, any.value[0], any.value[1]);
    while (hcm.more()) {
      const t = hcm.varint();
      if (t !== ((3 << 3) | 2)) {
        hcm.skip(t & 7);
        continue;
      }
      const [rs, re] = hcm.bytes();
      const rds = new Cursor(buf, rs, re);
      while (rds.more()) {
        const rt = rds.varint();
        if (rt === ((2 << 3) | 2)) return rds.string();
        rds.skip(rt & 7);
      }
    }
  }
  return undefined;
}

/** Field 1 of a resource (ClusterLoadAssignment.cluster_name, RouteConfiguration.name, Cluster/Listener.name): its bytes. */
function nameOfResource(buf: Buffer, start: number, end: number): [number, number] {
  const c = new Cursor(buf, start, end);
  while (c.more()) {
    const tag = c.varint();
    if (tag === ((1 << 3) | 2)) return c.bytes();
    c.skip(tag & 7);
  }
  return [0, 0];
}

// ---------------------------------------------------------------------------------------------
// Incremental (delta) xDS
// ---------------------------------------------------------------------------------------------

const DELTA_TYPE_URL_FIELD: Record<Short, Buffer> = {
  cds: strField(2, TYPE.cds),
  eds: strField(2, TYPE.eds),
  lds: strField(2, TYPE.lds),
  rds: strField(2, TYPE.rds),
};

/** Encoded `resource_names_subscribe` (3) / `_unsubscribe` (4) entries by name: clients subscribe to the same names. */
const nameFields: Record<3 | 4, Map<string, Buffer>> = { 3: new Map(), 4: new Map() };
function nameField(field: 3 | 4, name: string): Buffer {
  const cache = nameFields[field];
  let b = cache.get(name);
  if (!b) {
    if (cache.size >= 100_000) cache.clear();
    b = strField(field, name);
    cache.set(name, b);
  }
  return b;
}

/**
 * envoy.service.discovery.v3.DeltaDiscoveryRequest: node = 1, type_url = 2,
 * resource_names_subscribe = 3, resource_names_unsubscribe = 4, response_nonce = 6.
 */
export function encodeDeltaRequest(short: Short, nonce: string, subscribe: Iterable<string>, unsubscribe: Iterable<string>, node?: Buffer): Buffer {
  const parts: Buffer[] = [];
  // `node` is encodeNodeField's DiscoveryRequest field 2 (one tag byte); here it is field 1.
  if (node) parts.push(Buffer.concat([Buffer.from([(1 << 3) | 2]), node.subarray(1)]));
  parts.push(DELTA_TYPE_URL_FIELD[short]);
  for (const n of subscribe) parts.push(nameField(3, n));
  for (const n of unsubscribe) parts.push(nameField(4, n));
  if (nonce) parts.push(strField(6, nonce));
  return Buffer.concat(parts);
}
