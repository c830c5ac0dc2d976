import type * as protobuf from 'protobufjs';
import { protobufLibrary } from '../shared/protobuf-library';

/**
 * Hand-framed discovery responses. Resources arrive already encoded (and shared between
 * proxies through the push context), so a response is only their concatenation with a few
 * header fields: no per-proxy re-encoding of the Envoy messages.
 */
export interface EncodedResource {
  name: string;
  body: Buffer;
}

/** google.protobuf.Any { type_url = 1; value = 2 } */
function writeAny(w: protobuf.Writer, field: number, typeUrl: string, body: Uint8Array): void {
  w.uint32((field << 3) | 2).fork();
  w.uint32((1 << 3) | 2).string(typeUrl);
  w.uint32((2 << 3) | 2).bytes(body);
  w.ldelim();
}

/**
 * `resources` field entries (field 2, an Any) per encoded body, built once: a body is shared
 * by every proxy that gets it, so a response is a concatenation of ready-made pieces.
 */
const framedAny = new WeakMap<Buffer, Buffer>();

function framedResource(typeUrl: string, body: Buffer): Buffer {
  let framed = framedAny.get(body);
  if (!framed) {
    const w = protobufLibrary().Writer.create();
    writeAny(w, 2, typeUrl, body);
    framed = asBuffer(w.finish());
    framedAny.set(body, framed);
  }
  return framed;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A message as the pieces its bytes are made of, in order, never concatenated here.
 *
 * gRPC copies every message it sends into a frame of its own (the 5-byte prefix, then the
 * message); grpc-js does that with the serialized message's `byteLength` and `copy(target,
 * 5)`. A response of megabytes that was concatenated first is copied twice; handed over as
 * pieces (a few framed runs that whole scopes share, and the proxy's own resources), the
 * frame's copy is the only one, and the pieces stay shared.
 */
export class MessageParts {
  readonly byteLength: number;

  constructor(readonly parts: readonly Buffer[]) {
    let n = 0;
    for (const part of parts) n += part.length;
    this.byteLength = n;
  }

  get length(): number {
    return this.byteLength;
  }

  /** Buffer.copy for the whole message: writes every piece into `target` from `targetStart`; returns the bytes written. */
  copy(target: Uint8Array, targetStart = 0): number {
    if (targetStart < 0 || targetStart + this.byteLength > target.length) throw new RangeError(`a ${this.byteLength}-byte message does not fit at ${targetStart} in ${target.length} bytes`);
    let at = targetStart;
    for (const part of this.parts) at += part.copy(target, at);
    return at - targetStart;
  }

  /** The message as one buffer (tests, and writers that take only buffers). */
  toBuffer(): Buffer {
    return Buffer.concat(this.parts, this.byteLength);
  }
}

/** What an xDS stream writes: a message in one buffer or in pieces. */
export type OutgoingMessage = Buffer | MessageParts;

/** The bytes of a message, in one buffer. */
export function messageBytes(message: OutgoingMessage): Buffer {
  return Buffer.isBuffer(message) ? message : message.toBuffer();
}

/** discoveryResponseParts, in one buffer. */
export function encodeDiscoveryResponse(...args: Parameters<typeof discoveryResponseParts>): Buffer {
  return discoveryResponseParts(...args).toBuffer();
}

/** envoy.service.discovery.v3.DiscoveryResponse, in pieces. */
export function discoveryResponseParts(typeUrl: string, versionInfo: string, nonce: string, resources: readonly EncodedResource[], controlPlane: string): MessageParts {
  const head = protobufLibrary().Writer.create();
  head.uint32((1 << 3) | 2).string(versionInfo);
  const tail = protobufLibrary().Writer.create();
  tail.uint32((4 << 3) | 2).string(typeUrl);
  tail.uint32((5 << 3) | 2).string(nonce);
  writeControlPlane(tail, 6, controlPlane);
  const parts: Buffer[] = [asBuffer(head.finish())];
  for (const r of resources) parts.push(framedResource(typeUrl, r.body));
  parts.push(asBuffer(tail.finish()));
  return new MessageParts(parts);
}

export interface DeltaResource extends EncodedResource {
  version: string;
}

/**
 * `resources` entries of delta responses (field 2, a Resource { version = 1; resource = 2;
 * name = 3 }), built once per body like framedResource: a body's name and version do not
 * change, and the version is a hash of the body.
 */
const framedDelta = new WeakMap<Buffer, { name: string; version: string; framed: Buffer }>();

function framedDeltaResource(typeUrl: string, r: DeltaResource): Buffer {
  const known = framedDelta.get(r.body);
  if (known && known.name === r.name && known.version === r.version) return known.framed;
  const w = protobufLibrary().Writer.create();
  w.uint32((2 << 3) | 2).fork();
  w.uint32((1 << 3) | 2).string(r.version);
  writeAny(w, 2, typeUrl, r.body);
  w.uint32((3 << 3) | 2).string(r.name);
  w.ldelim();
  const framed = asBuffer(w.finish());
  framedDelta.set(r.body, { name: r.name, version: r.version, framed });
  return framed;
}

/**
 * A run's framed entries as one buffer, once per run: runs are shared by many responses (a
 * scope's outbound clusters in every proxy's first CDS response), so each response copies a
 * few large pieces instead of framing and gathering thousands of small ones.
 */
const framedRuns = new WeakMap<readonly DeltaResource[], Buffer>();

function framedRun(typeUrl: string, run: readonly DeltaResource[]): Buffer {
  let framed = framedRuns.get(run);
  if (!framed) {
    framed = Buffer.concat(run.map((r) => framedDeltaResource(typeUrl, r)));
    framedRuns.set(run, framed);
  }
  return framed;
}

/** deltaDiscoveryResponseParts, in one buffer. */
export function encodeDeltaDiscoveryResponse(...args: Parameters<typeof deltaDiscoveryResponseParts>): Buffer {
  return deltaDiscoveryResponseParts(...args).toBuffer();
}

/**
 * envoy.service.discovery.v3.DeltaDiscoveryResponse, in pieces. `runs`, when given, are
 * `resources` split into arrays many responses share (each unchanged once made), framed once
 * per run.
 */
export function deltaDiscoveryResponseParts(
  typeUrl: string,
  systemVersion: string,
  nonce: string,
  resources: readonly DeltaResource[],
  removed: readonly string[],
  controlPlane: string,
  runs?: readonly (readonly DeltaResource[])[],
): MessageParts {
  const head = protobufLibrary().Writer.create();
  head.uint32((1 << 3) | 2).string(systemVersion);
  const tail = protobufLibrary().Writer.create();
  tail.uint32((4 << 3) | 2).string(typeUrl);
  tail.uint32((5 << 3) | 2).string(nonce);
  for (const name of removed) tail.uint32((6 << 3) | 2).string(name);
  writeControlPlane(tail, 7, controlPlane);
  const parts: Buffer[] = [asBuffer(head.finish())];
  if (runs) for (const run of runs) parts.push(framedRun(typeUrl, run));
  else for (const r of resources) parts.push(framedDeltaResource(typeUrl, r));
  parts.push(asBuffer(tail.finish()));
  return new MessageParts(parts);
}

/** config.core.v3.ControlPlane { identifier = 1 } */
function writeControlPlane(w: protobuf.Writer, field: number, identifier: string): void {
  w.uint32((field << 3) | 2).fork();
  w.uint32((1 << 3) | 2).string(identifier);
  w.ldelim();
}

