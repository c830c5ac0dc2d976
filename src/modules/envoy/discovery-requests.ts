import type * as protobuf from 'protobufjs';
import { hash } from 'node:crypto';
import { protobufLibrary } from '../shared/protobuf-library';
import { WeakValueMap } from '../shared/weak-value-map';
import { messageType } from './protos';

/**
 * Decoding of discovery requests, the daemon's most frequent input: every proxy's every
 * subscription and ACK. Thousands of proxies send the same lists of thousands of names; read
 * one string at a time (and then joined to be interned), a connect storm of 2,000 proxies
 * allocated over half a GiB of strings that were thrown away at once. Here a run of names is
 * recognized by its bytes and decoded once: proxies that send the same bytes get the same
 * frozen list. The other fields go through protobufjs as before.
 */

export interface DiscoveryRequest {
  version_info: string;
  node?: { id?: string; cluster?: string; metadata?: Record<string, unknown> };
  /** Shared between requests with the same names in the same order: never modify it. */
  resource_names: readonly string[];
  type_url: string;
  response_nonce: string;
  error_detail?: { code?: number; message?: string };
}

export interface DeltaDiscoveryRequest {
  node?: { id?: string; cluster?: string; metadata?: Record<string, unknown> };
  type_url: string;
  /** Shared between requests with the same names in the same order: never modify it. */
  resource_names_subscribe: readonly string[];
  resource_names_unsubscribe: readonly string[];
  initial_resource_versions: Record<string, string>;
  response_nonce: string;
  error_detail?: { code?: number; message?: string };
}

const WIRE_LENGTH_DELIMITED = 2;

const CONVERSION: protobuf.IConversionOptions = { json: true, enums: String, longs: String, defaults: true, arrays: true, objects: true, oneofs: true };

export function decodeDiscoveryRequest(bytes: Uint8Array): DiscoveryRequest {
  const buf = asBuffer(bytes);
  const reader = protobufLibrary().Reader.create(buf);
  const names = new NameRun(buf);
  const out: DiscoveryRequest = { version_info: '', resource_names: EMPTY, type_url: '', response_nonce: '' };
  forEachField(reader, (field, at) => {
    if (field === 1) out.version_info = reader.string();
    else if (field === 2) out.node = subMessage(reader, 'envoy.config.core.v3.Node');
    else if (field === 3) names.add(reader, at);
    else if (field === 4) out.type_url = reader.string();
    else if (field === 5) out.response_nonce = reader.string();
    else if (field === 6) out.error_detail = subMessage(reader, 'google.rpc.Status');
    else return false;
    return true;
  });
  out.resource_names = names.list();
  return out;
}

export function decodeDeltaDiscoveryRequest(bytes: Uint8Array): DeltaDiscoveryRequest {
  const buf = asBuffer(bytes);
  const reader = protobufLibrary().Reader.create(buf);
  const subscribe = new NameRun(buf);
  const unsubscribe = new NameRun(buf);
  const out: DeltaDiscoveryRequest = {
    type_url: '', resource_names_subscribe: EMPTY, resource_names_unsubscribe: EMPTY, initial_resource_versions: {}, response_nonce: '',
  };
  forEachField(reader, (field, at) => {
    if (field === 1) out.node = subMessage(reader, 'envoy.config.core.v3.Node');
    else if (field === 2) out.type_url = reader.string();
    else if (field === 3) subscribe.add(reader, at);
    else if (field === 4) unsubscribe.add(reader, at);
    else if (field === 5) readMapEntry(reader, out.initial_resource_versions);
    else if (field === 6) out.response_nonce = reader.string();
    else if (field === 7) out.error_detail = subMessage(reader, 'google.rpc.Status');
    else return false;
    return true;
  });
  out.resource_names_subscribe = subscribe.list();
  out.resource_names_unsubscribe = unsubscribe.list();
  return out;
}

const EMPTY: readonly string[] = Object.freeze([]);

/**
 * Walks a message's fields: `read` reads a length-delimited field it knows, `at` being where
 * its tag starts, and says so; every other field is skipped.
 */
function forEachField(reader: protobuf.Reader, read: (field: number, at: number) => boolean): void {
  while (reader.pos < reader.len) {
    const at = reader.pos;
    const tag = reader.uint32();
    const wire = tag & 7;
    if (wire !== WIRE_LENGTH_DELIMITED || !read(tag >>> 3, at)) reader.skipType(wire);
  }
}

function subMessage<T>(reader: protobuf.Reader, typeName: string): T {
  const type = messageType(typeName);
  return type.toObject(type.decode(reader, reader.uint32()), CONVERSION) as T;
}

/** One `map<string, string>` entry (key = 1, value = 2); a later entry for a key wins, as in protobufjs. */
function readMapEntry(reader: protobuf.Reader, into: Record<string, string>): void {
  const end = reader.uint32() + reader.pos;
  let key = '';
  let value = '';
  while (reader.pos < end) {
    const tag = reader.uint32();
    if (tag === ((1 << 3) | WIRE_LENGTH_DELIMITED)) key = reader.string();
    else if (tag === ((2 << 3) | WIRE_LENGTH_DELIMITED)) value = reader.string();
    else reader.skipType(tag & 7);
  }
  if (reader.pos !== end) throw new RangeError('map entry overruns its length');
  into[key] = value;
}

/** Lists of at least this many bytes are looked up by their bytes; shorter ones are cheaper to decode. */
const INTERN_MIN_BYTES = 512;

/**
 * The entries of one repeated string field. Senders write them back to back, so they are one
 * span of the request's bytes: a span seen before gives the list decoded then.
 */
class NameRun {
  /** Offset and length of each string, in pairs. */
  private readonly strings: number[] = [];
  private start = -1;
  private end = -1;
  private contiguous = true;

  constructor(private readonly buf: Buffer) {}

  /** Reads one entry; `at` is where its tag starts. */
  add(reader: protobuf.Reader, at: number): void {
    const length = reader.uint32();
    const offset = reader.pos;
    reader.skip(length);
    if (this.start < 0) this.start = at;
    else if (at !== this.end) this.contiguous = false;
    this.end = reader.pos;
    this.strings.push(offset, length);
  }

  list(): readonly string[] {
    if (this.strings.length === 0) return EMPTY;
    if (!this.contiguous || this.end - this.start < INTERN_MIN_BYTES) return this.decode();
    return knownRun(this.buf.subarray(this.start, this.end), () => this.decode());
  }

  private decode(): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.strings.length; i += 2) out.push(this.buf.toString('utf8', this.strings[i], this.strings[i] + this.strings[i + 1]));
    return out;
  }
}

interface KnownRun {
  bytes: Buffer;
  names: readonly string[];
}

/**
 * Runs by a digest of their bytes. Held weakly: a list lives as long as some subscription
 * made from it (see xds/interning), so the table follows what proxies subscribe to now and a
 * client sending endless made-up lists cannot grow it. The bytes are compared too, so two
 * runs are the same list only when they are the same bytes.
 */
const runs = new WeakValueMap<string, KnownRun>();

function knownRun(span: Buffer, decode: () => string[]): readonly string[] {
  const key = `${span.length}:${hash('sha1', span, 'base64')}`;
  const known = runs.get(key);
  if (known && known.bytes.equals(span)) return known.names;
  const names = Object.freeze(decode());
  const run: KnownRun = { bytes: Buffer.from(span), names };
  // The list holds its entry: the entry lives while anything still holds the list.
  listRuns.set(names, run);
  if (!known) runs.set(key, run);
  return names;
}

const listRuns = new WeakMap<readonly string[], KnownRun>();

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
