import { badRequest } from './errors';

/*
 * The one protobuf body this server reads: kubectl's typed clients send some requests as
 * `application/vnd.kubernetes.protobuf` (the `k8s\0` envelope around runtime.Unknown), and
 * `kubectl create token` is one of them. Its TokenRequest is decoded here into the JSON shape;
 * any other protobuf body is refused with 415 (the server answers JSON, which clients accept).
 */

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

type Fields = Map<number, (bigint | Buffer)[]>;

function readVarint(buf: Buffer, at: { pos: number }): bigint {
  let result = 0n;
  let shift = 0n;
  for (;;) {
    if (at.pos >= buf.length) throw badRequest('truncated protobuf body');
    const byte = buf[at.pos++];
    result |= BigInt(byte & 0x7f) << shift;
    if ((byte & 0x80) === 0) return result;
    shift += 7n;
    if (shift > 63n) throw badRequest('malformed protobuf varint');
  }
}

function fields(buf: Buffer): Fields {
  const out: Fields = new Map();
  const at = { pos: 0 };
  while (at.pos < buf.length) {
    const tag = Number(readVarint(buf, at));
    const field = tag >> 3;
    const wire = tag & 7;
    let value: bigint | Buffer;
    if (wire === 0) value = readVarint(buf, at);
    else if (wire === 2) {
      const length = Number(readVarint(buf, at));
      if (at.pos + length > buf.length) throw badRequest('truncated protobuf body');
      value = buf.subarray(at.pos, at.pos + length);
      at.pos += length;
    } else if (wire === 1) {
      value = buf.subarray(at.pos, at.pos + 8);
      at.pos += 8;
    } else if (wire === 5) {
      value = buf.subarray(at.pos, at.pos + 4);
      at.pos += 4;
    } else throw badRequest(`unsupported protobuf wire type ${wire}`);
    const list = out.get(field) ?? [];
    list.push(value);
    out.set(field, list);
  }
  return out;
}

const str = (f: Fields, n: number) => (f.get(n)?.[0] as Buffer | undefined)?.toString('utf8');

/** The runtime.Unknown envelope: type and raw message. */
function unwrap(body: Buffer): { apiVersion?: string; kind?: string; raw: Buffer } {
  if (!body.subarray(0, 4).equals(MAGIC)) throw badRequest('protobuf body without the k8s envelope');
  const unknown = fields(body.subarray(4));
  const typeMeta = unknown.get(1)?.[0] as Buffer | undefined;
  const tm = typeMeta ? fields(typeMeta) : new Map();
  return { apiVersion: str(tm, 1), kind: str(tm, 2), raw: (unknown.get(2)?.[0] as Buffer | undefined) ?? Buffer.alloc(0) };
}

/** A protobuf authentication.k8s.io/v1 TokenRequest as its JSON form. */
export function decodeTokenRequest(body: Buffer): Record<string, unknown> {
  const { raw, kind } = unwrap(body);
  if (kind && kind !== 'TokenRequest') throw badRequest(`expected a TokenRequest, got ${kind}`);
  const request = fields(raw);
  const specBytes = request.get(2)?.[0] as Buffer | undefined;
  const spec: Record<string, unknown> = {};
  if (specBytes) {
    const s = fields(specBytes);
    spec.audiences = (s.get(1) ?? []).map((b) => (b as Buffer).toString('utf8'));
    const exp = s.get(4)?.[0];
    if (typeof exp === 'bigint') spec.expirationSeconds = Number(exp);
    const bound = s.get(3)?.[0] as Buffer | undefined;
    if (bound) {
      const b = fields(bound);
      spec.boundObjectRef = { kind: str(b, 1), apiVersion: str(b, 2), name: str(b, 3), uid: str(b, 4) };
    }
  }
  return { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec };
}
